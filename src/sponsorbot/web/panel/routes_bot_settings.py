"""One bot's settings: how it receives updates, its token, its storage chat and the visitors'
texts.

The texts that tell an advertiser where and how much to pay are the owner's to change, with
their password or a current code in the same form (ADR 0009); an admin changes the others."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.bots.service import Bot, token_names
from sponsorbot.features.errors import Invalid
from sponsorbot.features.shop.payout import (
    MONEY_TEXTS,
    MONEY_TEXTS_CHANGED,
    money_text_change,
    money_text_changes,
)
from sponsorbot.features.texts import DEFAULTS, LANGUAGES, placeholders
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import ManageBots
from sponsorbot.web.panel.errors import REFUSED, describe, text_problem
from sponsorbot.web.panel.fields import text_of
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.identity import proves_identity
from sponsorbot.web.panel.web import Viewer, audit, redirect, render

router = APIRouter(include_in_schema=False, tags=["panel"])

# The page's groups of texts, in order: a text belongs to the first whose test it passes.
TEXT_GROUPS: tuple[tuple[str, str], ...] = (
    ("gate", N_("The gate and visitors")),
    ("uploader", N_("Uploaders and channels")),
    ("shop", N_("Shop: booking an ad")),
    ("payments", N_("Shop: payments")),
    ("states", N_("Shop: order states in /orders")),
)
UPLOADER_TEXTS = frozenset(
    {"upload_saved", "batch_started", "batch_added", "batch_empty", "batch_cancelled",
     "no_batch", "channel_added", "channel_refused"}
)  # fmt: skip
PAYMENT_TEXTS = frozenset(
    {"shop_pay", "shop_amount_usdt", "shop_amount_trx", "shop_or", "shop_qr_caption",
     "shop_bad_hash", "shop_checking", "shop_already_checking", "shop_already_counted",
     "shop_not_payable", "shop_too_many_hashes", "shop_unconfirmed", "shop_credited",
     "shop_credited_usdt", "shop_still_due", "shop_held", "shop_requoted", "shop_paid",
     "shop_overpaid", "shop_payment_refused", "shop_reminder", "shop_expired",
     "shop_expired_paid"}
)  # fmt: skip


def text_group(key: str) -> str:
    """Which of TEXT_GROUPS a visitor text is shown in."""
    if key.startswith("shop_state_"):
        return "states"
    if key in PAYMENT_TEXTS or key.startswith("shop_reason_"):
        return "payments"
    if key.startswith("shop_"):
        return "shop"
    return "uploader" if key in UPLOADER_TEXTS else "gate"


# What each visitor text is for, in the owner's words; the order is the order of the page.
TEXTS: dict[str, str] = {
    "welcome": N_("Greeting when someone starts the bot without a link"),
    "unknown_code": N_("A link that is wrong or turned off"),
    "gate": N_("The gate: the channels to join"),
    "join_button": N_("The button of each channel"),
    "joined_button": N_("The “I've joined” button"),
    "still_missing": N_("Alert when channels are still missing"),
    "all_joined": N_("Alert when the visitor is through"),
    "gate_outdated": N_("An old gate message was pressed"),
    "auto_delete": N_("Notice before the content is deleted"),
    "upload_saved": N_("To an uploader: the file is saved, with its link"),
    "batch_started": N_("To an uploader: a batch started"),
    "batch_added": N_("To an uploader: a file joined the batch"),
    "batch_empty": N_("To an uploader: the batch is still empty"),
    "batch_cancelled": N_("To an uploader: the batch was cancelled"),
    "no_batch": N_("To an uploader: no batch is open"),
    "channel_added": N_("To the owner: a channel was added"),
    "channel_refused": N_("To the owner: a channel could not be added"),
    "slow_down": N_("To a visitor opening links too fast: wait, then open them again"),
    "welcome_again": N_("A second message soon after the greeting"),
    "button_outdated": N_("A button that no longer does anything was pressed"),
    "shop_button": N_("The welcome's button to the ad shop"),
    "shop_closed": N_("To an advertiser: the shop is off"),
    "shop_menu": N_("To an advertiser: the products to choose from"),
    "shop_empty": N_("To an advertiser: no product is on sale"),
    "shop_product_button": N_("The button of each product"),
    "shop_ask_channel": N_("To an advertiser: send the channel"),
    "shop_ask_post": N_("To an advertiser: send the post"),
    "shop_ask_banner": N_("To an advertiser: send the banner"),
    "shop_bad_material": N_("To an advertiser: what they sent cannot be used"),
    "shop_summary": N_("To an advertiser: the order before submitting"),
    "shop_submit_button": N_("The “Submit” button"),
    "shop_cancel_button": N_("The “Cancel” button"),
    "shop_submitted": N_("To an advertiser: the order is submitted"),
    "shop_cancelled": N_("To an advertiser: the order was dropped"),
    "shop_nothing_open": N_("To an advertiser: nothing to cancel"),
    "shop_already_submitted": N_("To an advertiser: Submit on a summary already submitted"),
    "shop_summary_closed": N_("To an advertiser: Submit on a summary that was closed"),
    "shop_rejected": N_("To an advertiser: the order was turned down"),
    "shop_change_asked": N_("To an advertiser: the owner asks for a change"),
    "shop_pay": N_("To an advertiser: the payment request"),
    "shop_amount_usdt": N_("The amount in USDT, in the payment request"),
    "shop_amount_trx": N_("The amount in TRX, in the payment request"),
    "shop_or": N_("Between the two amounts"),
    "shop_qr_caption": N_("The caption of the QR code"),
    "shop_bad_hash": N_("To an advertiser: that is not a transaction hash"),
    "shop_checking": N_("To an advertiser: the hash is being checked"),
    "shop_already_checking": N_("To an advertiser: the hash was sent before"),
    "shop_already_counted": N_("To an advertiser: the transfer was counted already"),
    "shop_not_payable": N_("To an advertiser: no order waits for payment"),
    "shop_too_many_hashes": N_("To an advertiser: too many hashes for now"),
    "shop_too_many_orders": N_("To an advertiser: too many open orders"),
    "shop_unconfirmed": N_("To an advertiser: the transaction is not confirmed yet"),
    "shop_credited": N_("To an advertiser: a payment was counted"),
    "shop_credited_usdt": N_("To an advertiser: a USDT payment was counted"),
    "shop_still_due": N_("To an advertiser: what is still due"),
    "shop_held": N_("To an advertiser: a transfer that waits for the owner"),
    "shop_requoted": N_("To an advertiser: the TRX rate was quoted again"),
    "shop_paid": N_("To an advertiser: paid in full"),
    "shop_overpaid": N_("To an advertiser: they paid more than the price"),
    "shop_payment_refused": N_("To an advertiser: a transaction does not count"),
    "shop_reason_no_usdt": N_("Why: no USDT or TRX in it"),
    "shop_reason_wrong_address": N_("Why: the coins went elsewhere"),
    "shop_reason_too_early": N_("Why: made before the approval"),
    "shop_reason_failed": N_("Why: it failed on the network"),
    "shop_reason_already_used": N_("Why: it paid an order already"),
    "shop_reason_wrong_network": N_("Why: another TRON network"),
    "shop_reason_unknown": N_("Why: the network does not know it"),
    "shop_reason_unconfirmed": N_("Why: not confirmed in time"),
    "shop_reason_returned": N_("Why: the owner gave the transfer back"),
    "shop_reason_lookup_failed": N_("Why: the network could not be asked for a day"),
    "shop_reminder": N_("To an advertiser: a reminder of what is due"),
    "shop_expired": N_("To an advertiser: the order expired"),
    "shop_expired_paid": N_("To an advertiser: what they paid before it expired"),
    "shop_started": N_("To an advertiser: the ad is running"),
    "shop_report_gate_slot": N_("To an advertiser: the report of a gate slot"),
    "shop_report_broadcast": N_("To an advertiser: the report of a post"),
    "shop_report_banner": N_("To an advertiser: the report of a banner"),
    "shop_refunded": N_("To an advertiser: the order was refunded"),
    "shop_order_cancelled": N_("To an advertiser: the owner cancelled the order"),
    "shop_banner_open": N_("The button of a paid banner"),
    "shop_your_orders": N_("To an advertiser: their orders (/orders)"),
    "shop_no_orders": N_("To an advertiser: no orders yet"),
    "shop_state_submitted": N_("An order's state in /orders: waiting for the owner's review"),
    "shop_state_in_review": N_(
        "An order's state in /orders: a change was asked: send the material again"
    ),
    "shop_state_awaiting_payment": N_(
        "An order's state in /orders: approved, waiting for your payment"
    ),
    "shop_state_partly_paid": N_("An order's state in /orders: partly paid"),
    "shop_state_paid": N_("An order's state in /orders: paid, starting"),
    "shop_state_running": N_("An order's state in /orders: running"),
    "shop_state_completed": N_("An order's state in /orders: completed"),
    "shop_state_rejected": N_("An order's state in /orders: not accepted"),
    "shop_state_expired": N_("An order's state in /orders: expired"),
    "shop_state_cancelled": N_("An order's state in /orders: cancelled"),
    "shop_state_refunded": N_("An order's state in /orders: refunded"),
}
assert set(TEXTS) == set(DEFAULTS["en"]), "every visitor text needs a description here"


def _storage_value(raw: str) -> tuple[int | None, bool]:
    """The storage chat id typed in (empty clears it) and whether it is well-formed."""
    raw = raw.strip()
    if not raw:
        return None, True
    if raw.startswith("-") and raw[1:].isdigit() and len(raw) <= 21:
        return int(raw), True
    return None, False


async def _page(
    request: Request,
    viewer: Viewer,
    bot_id: int,
    errors: dict[str, str],
    values: dict[str, Any] | None = None,
    status: int = 200,
) -> Response:
    features = services_of(request)
    bot = await features.bots.get(bot_id)
    texts = await features.bot_settings.texts(bot_id)
    storage = await features.bot_settings.storage_chat(bot_id)
    overrides: dict[str, dict[str, str]] = (values or {}).get("texts") or texts["overrides"]
    rows = [
        {
            "key": key,
            "label": _(label),
            "placeholders": sorted(placeholders(DEFAULTS["en"][key])),
            "money": key in MONEY_TEXTS,
            "group": text_group(key),
            "languages": [
                {
                    "code": language,
                    "default": DEFAULTS[language][key],
                    "value": overrides.get(language, {}).get(key, ""),
                    "error": errors.get(f"{language}.{key}", ""),
                }
                for language in LANGUAGES
            ],
        }
        for key, label in TEXTS.items()
    ]
    context = {
        "bot": bot,
        "errors": errors,
        "storage": (values or {}).get("storage", "" if storage is None else str(storage)),
        "texts": rows,
        "text_groups": [(g, _(label)) for g, label in TEXT_GROUPS],
        "webhook_possible": features.bots.webhook_possible,
        "saved": request.query_params.get("saved", ""),
    }
    return render(request, viewer, "bot_settings.html", context, status)


@router.get("/bots/{bot_id}/settings")
async def bot_settings_page(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """The bot's mode, storage chat and visitor texts."""
    return await _page(request, viewer, bot_id, {})


async def _audit(
    request: Request,
    viewer: Viewer,
    kind: str,
    bot: Bot,
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    """Audit a change of the bot's settings, named by its username."""
    await audit(request, viewer, kind, f"@{bot.username}", before=before, after=after)


def _fields(
    keys: tuple[str, ...], before: Bot, after: Bot
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the audit log keeps of a change to the bot's `keys`: their values before and after."""
    return {k: getattr(before, k) for k in keys}, {k: getattr(after, k) for k in keys}


@router.post("/bots/{bot_id}/mode")
async def bot_mode(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """Switch between long polling and a webhook (checked with Telegram)."""
    bots = services_of(request).bots
    mode = str((await request.form()).get("mode", ""))
    before = await bots.get(bot_id)
    if mode not in ("polling", "webhook"):
        return await _page(
            request, viewer, bot_id, {"mode": _("Choose polling or webhook.")}, None, 422
        )
    if mode == before.mode:
        return redirect(request, f"/bots/{bot_id}/settings?saved=mode")
    try:
        after = await bots.set_mode(bot_id, mode)
    except REFUSED as exc:
        return await _page(request, viewer, bot_id, {"mode": describe(exc)}, None, 422)
    await _audit(request, viewer, "bot.mode_changed", before, *_fields(("mode",), before, after))
    return redirect(request, f"/bots/{bot_id}/settings?saved=mode")


@router.post("/bots/{bot_id}/token")
async def bot_token(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """Replace the bot's token after a revoke in @BotFather, through the same service call as
    the owner API: checked live with Telegram, refused when it is another bot's. The token
    typed is never put back into the page: a refused one is pasted again."""
    bots = services_of(request).bots
    token = str((await request.form()).get("token", "")).strip()
    before = await bots.get(bot_id)
    named = token_names(token)
    if not token:
        problem = _("Paste the new token @BotFather gave you.")
    elif named is not None and named != bot_id:
        # Said before Telegram is asked: the id in front of the colon is the bot's own. Filled
        # in after translation, so ids and the username keep the digits Telegram shows.
        text = _(
            "This token belongs to another bot (id %(other)s), not to @%(name)s (id %(id)s). "
            "Copy the token of this bot from @BotFather."
        )
        problem = text % {"other": named, "name": before.username, "id": bot_id}
    else:
        problem = ""
    if problem:
        return await _page(request, viewer, bot_id, {"token": problem}, None, 422)
    try:
        after = await bots.replace_token(bot_id, token)
    except REFUSED as exc:
        return await _page(request, viewer, bot_id, {"token": describe(exc)}, None, 422)
    changed = _fields(("token_tail", "status"), before, after)
    await _audit(request, viewer, "bot.token_replaced", before, *changed)
    return redirect(request, f"/bots/{bot_id}/settings?saved=token#token")


@router.post("/bots/{bot_id}/storage")
async def bot_storage(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """Set (or clear) the chat uploaded files are kept in."""
    services = services_of(request)
    bots, settings = services.bots, services.bot_settings
    raw = str((await request.form()).get("storage_chat", ""))
    bot = await bots.get(bot_id)
    before = await settings.storage_chat(bot_id)
    chat_id, ok = _storage_value(raw)
    if not ok:
        errors = {"storage_chat": _("Enter the chat's numeric id, like -1001234567890.")}
        return await _page(request, viewer, bot_id, errors, {"storage": raw.strip()[:40]}, 422)
    await settings.set_storage_chat(bot_id, chat_id)
    if before != chat_id:
        changed = {"storage_chat_id": before}, {"storage_chat_id": chat_id}
        await _audit(request, viewer, "bot.storage_changed", bot, *changed)
    return redirect(request, f"/bots/{bot_id}/settings?saved=storage")


@router.post("/bots/{bot_id}/texts")
async def bot_texts(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """Save the visitors' texts; an empty field means our default text. Changing a text that
    says where or how much to pay takes the owner and their password or a current code; a
    refused save changes none of the texts."""
    services = services_of(request)
    bots, settings = services.bots, services.bot_settings
    form = await request.form()
    bot = await bots.get(bot_id)
    before: dict[str, dict[str, str]] = (await settings.texts(bot_id))["overrides"]
    wanted: dict[str, dict[str, str]] = {}
    for language in LANGUAGES:
        for key in TEXTS:
            field = f"{language}.{key}"
            if key in MONEY_TEXTS and field not in form:
                # An admin's page shows these disabled, so they are not sent: kept as stored.
                text = before.get(language, {}).get(key, "")
            else:
                # Browsers send CRLF in textareas; Telegram shows LF.
                text = str(form.get(field, "")).replace("\r\n", "\n").strip()
            if text:
                wanted.setdefault(language, {})[key] = text
    if money_text_changes(before, wanted):
        if not viewer.can("shop.money"):
            errors = {
                "form": _(
                    "Only the owner can change the texts that tell advertisers where and how "
                    "much to pay. Nothing was saved."
                )
            }
            return await _page(request, viewer, bot_id, errors, None, 403)
        if not await proves_identity(request, viewer, text_of(form, "confirm")):
            errors = {
                "confirm": _(
                    "Enter your password or a current code from your app to change a text "
                    "that tells advertisers where or how much to pay."
                )
            }
            return await _page(request, viewer, bot_id, errors, {"texts": wanted}, 422)
    try:
        after = (await settings.set_texts(bot_id, wanted))["overrides"]
    except Invalid as exc:
        if exc.code != "texts_invalid":
            raise
        fields: dict[str, dict[str, Any]] = exc.details["fields"]
        errors = {field: text_problem(problem) for field, problem in fields.items()}
        return await _page(request, viewer, bot_id, errors, {"texts": wanted}, 422)
    changed = {
        f"{language}.{key}"
        for language in LANGUAGES
        for key in TEXTS
        if before.get(language, {}).get(key) != after.get(language, {}).get(key)
    }
    if changed:

        def pick(texts: dict[str, dict[str, str]]) -> dict[str, str | None]:
            return {k: texts.get(k.split(".")[0], {}).get(k.split(".")[1]) for k in sorted(changed)}

        await _audit(request, viewer, "bot.texts_changed", bot, pick(before), pick(after))
    money = money_text_change(before, after)
    if money is not None:  # what the owner's dashboard warns about for a week
        await _audit(request, viewer, MONEY_TEXTS_CHANGED, bot, *money)
    return redirect(request, f"/bots/{bot_id}/settings?saved=texts")
