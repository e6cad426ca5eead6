"""The shop's orders and payments in the panel, over every bot: the list filtered by bot and by
state (with the count of each), one order's page (its material, amounts, locked rate, the whole
timeline, each payment with its verdict and a TronScan link, and the moves its state allows),
and every submitted hash."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.config import TronNetwork
from sponsorbot.features.accounts import users as accounts
from sponsorbot.features.bots.service import Bot
from sponsorbot.features.errors import Code, Conflict, FeatureError, Invalid, NotFound
from sponsorbot.features.shop.fulfil import delivered
from sponsorbot.features.shop.orders import Order, Payment, Step
from sponsorbot.features.shop.rules import (
    MOVES,
    PAYABLE,
    PAYMENT_STATUSES,
    STATES,
    can,
    show,
    trx_to_ask,
)
from sponsorbot.features.shop.service import MAX_REASON
from sponsorbot.telegram.html import HtmlError, parse_html
from sponsorbot.tron import parse_hash, tronscan_url
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import ManageBots, View
from sponsorbot.web.panel.errors import REFUSED, describe, status_of
from sponsorbot.web.panel.fields import bot_filter, is_id, text_of
from sponsorbot.web.panel.i18n import N_, format_datetime, isolate
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.routes_shop import BAD_INPUT, STATE_NAMES, Id, names
from sponsorbot.web.panel.web import Viewer, audit, panel_of, redirect, render

router = APIRouter(include_in_schema=False, tags=["panel"])
PAGE = 50
PAYMENT_STATUS_NAMES = {
    "checking": N_("Checking"),
    "credited": N_("Counted"),
    "rejected": N_("Refused"),
    "held": N_("Held for the owner"),
}
PAYMENT_BADGES = {
    "checking": "scheduled",
    "credited": "active",
    "rejected": "token_refused",
    "held": "paused",
}
# The owner's moves, by their path: the rules' name of each (what MOVES allows), its words, and
# its audit kind.
ACTIONS: dict[str, tuple[str, str, str]] = {
    "approve": ("approve", N_("Approve"), "shop.order_approved"),
    "reject": ("reject", N_("Reject"), "shop.order_rejected"),
    "ask-change": ("ask_change", N_("Ask for a change"), "shop.order_change_asked"),
    "cancel": ("cancel", N_("Cancel the order"), "shop.order_cancelled"),
    "mark-paid": ("mark_paid", N_("Mark paid"), "shop.order_marked_paid"),
    "mark-refunded": ("refund", N_("Mark refunded"), "shop.order_refunded"),
}
# What the order's page says after a move (?done=…): what the advertiser was sent, if anything.
DONE = {
    "approve": N_("Approved: the payment request was sent to the advertiser."),
    "reject": N_("Rejected: the advertiser was told why."),
    "ask-change": N_("Sent back: the advertiser was asked for the change."),
    "cancel": N_("The order is cancelled."),
    "mark-paid": N_("Marked as paid."),
    "mark-refunded": N_("Marked as refunded."),
    "hash": N_("The hash is being checked, as if the advertiser had sent it."),
}


def shop_names() -> dict[str, Any]:
    """The names and badges the shop's order and payment pages show."""
    return {
        **names(),
        "payment_status_names": PAYMENT_STATUS_NAMES,
        "payment_badges": PAYMENT_BADGES,
        "action_names": {path: label for path, (_move, label, _kind) in ACTIONS.items()},
    }


# -- the order's story, in words ----------------------------------------------------------------


def _who(actor: str, members: dict[int, str]) -> str:
    """Who took a step: the advertiser, Sponsorbot itself, or a member by name."""
    if actor == "system":
        return _("Sponsorbot")
    if actor.startswith("tg:"):
        return _("The advertiser")
    if actor.startswith("panel:") and actor[6:].isdigit():
        return members.get(int(actor[6:])) or _("A former member")
    if actor.startswith("api:"):
        return _with(_("API token “%(name)s”"), name=actor[4:])
    return actor


def _with(text: str, **values: Any) -> str:
    """`text` (already translated) with values filled in after translation, so what the owner
    or the chain wrote keeps its own digits (and, in a Persian sentence, its place: isolated)."""
    return text % {k: isolate(str(v)) for k, v in values.items()}


def reason_text(payment: Payment, address: str | None, zone: str) -> str:
    """Why a hash did not count, or what its check waits for, in the owner's words."""
    reason = payment.reason
    if payment.status == "checking":
        error = str(payment.last_error or "")
        if not error:
            return ""
        if error == "waiting: unconfirmed":
            return _("Waiting: on the network but not confirmed yet.")
        if error.startswith("waiting:"):
            return _("Waiting: the network does not know this hash yet.")
        return _with(_("The last check failed: %(error)s"), error=error)
    if reason == "wrong_address":
        to = payment.to_address or "—"
        if address:
            text = _("The coins went to %(to)s, not to the shop's address %(address)s.")
            return _with(text, to=to, address=address)
        return _with(_("The coins went to %(to)s, not to the shop's address."), to=to)
    if reason == "too_early":
        moment = format_datetime(payment.block_time, zone)
        return _("Made on %(when)s, before the order was approved.", when=moment)
    texts = {
        "no_usdt": _(
            "No USDT or TRX this shop takes moved: only the official USDT contract counts, "
            "not a token merely named USDT."
        ),
        "failed": _("The transaction failed on the network: no coins moved."),
        "already_used": _("This hash has already paid another order."),
        "wrong_network": _("This is USDT of another TRON network."),
        "unknown": _("The network did not know this hash within 15 minutes."),
        "unconfirmed": _("It was not confirmed within 15 minutes."),
        "no_match": _(
            "A real transfer to the shop, but not the exact amount any open order asks for: "
            "it waits on the Transfers page for you to assign it."
        ),
        "ambiguous": _(
            "Two open orders ask for this amount: it waits on the Transfers page for you to "
            "assign it."
        ),
        "returned": _("This transfer was marked as sent back."),
        "lookup_failed": _("TronGrid could not be asked about it for a day."),
    }
    return texts.get(str(reason), str(reason or ""))


def payment_rows(
    payments: tuple[Payment, ...], network: TronNetwork | None, address: str | None, zone: str
) -> list[dict[str, Any]]:
    """Payments with their TronScan link and their verdict in words."""
    return [
        {
            **p,
            "url": tronscan_url(network, p.tx_hash) if network else None,
            "why": reason_text(p, address, zone),
        }
        for p in payments
    ]


def _step(entry: Step) -> str:
    """One line of the timeline in words."""
    kind, data = entry.kind, entry.data or {}
    reason = str(data.get("reason") or "")
    if kind == "rate_locked":
        return _(
            "TRX rate locked: %(rate)s USDT per TRX, from %(source)s",
            rate=show(Decimal(str(data.get("rate", "0")))),
            source=str(data.get("source") or "—"),
        )
    if kind == "payment_credited":
        return _(
            "Payment counted: %(amount)s %(coin)s, credited as %(credited)s USDT",
            amount=show(Decimal(str(data.get("amount") or "0"))),
            coin=str(data.get("coin") or ""),
            credited=show(Decimal(str(data.get("credited_usdt") or "0"))),
        )
    if kind == "expired" and Decimal(str(data.get("paid_usdt") or "0")) > 0:
        return _("Expired with %(paid)s USDT paid", paid=show(Decimal(str(data["paid_usdt"]))))
    if kind == "reminder":
        return _("Reminder %(n)s of 2 sent", n=int(data.get("number") or 1))
    if kind == "completed":
        if "joins" in data:
            return _("Completed: %(n)s people joined", n=int(data["joins"]))
        if "reached" in data:
            return _("Completed: the post reached %(n)s people", n=int(data["reached"]))
        if "shown" in data:
            return _("Completed: the banner was shown %(n)s times", n=int(data["shown"]))
    if kind == "start_failed":
        return _with(_("The ad did not start: %(error)s"), error=data.get("error") or "")
    if kind == "marked_paid":
        return _with(_("Marked paid: %(reason)s"), reason=reason)
    with_reason = {
        "rejected": N_("Rejected: %(reason)s"),
        "change_asked": N_("Change asked: %(reason)s"),
        "cancelled": N_("Cancelled: %(reason)s"),
        "refunded": N_("Marked refunded: %(reason)s"),
    }
    if kind in with_reason and reason:
        return _with(_(with_reason[kind]), reason=reason)
    plain = {
        "submitted": N_("Submitted"),
        "resubmitted": N_("The changed material was sent again"),
        "approved": N_("Approved: the payment request was sent"),
        "change_asked": N_("Change asked"),
        "rejected": N_("Rejected"),
        "cancelled": N_("Cancelled"),
        "refunded": N_("Marked refunded"),
        "paid": N_("Paid in full"),
        "hash_submitted": N_("Hash submitted"),
        "payment_unconfirmed": N_("On the network, not confirmed yet"),
        "payment_rejected": N_("Payment refused"),
        "payment_held": N_("Transfer held for the owner: not the order's exact amount"),
        "hash_requeued": N_("Hash sent for another check"),
        "expired": N_("Expired unpaid"),
        "started": N_("The ad started"),
        "completed": N_("Completed"),
    }
    return _(plain[kind]) if kind in plain else kind


def timeline(order: Order, members: dict[int, str], zone: str) -> list[dict[str, Any]]:
    """The order's whole story: each step's time, who, what, and for a hash its link and the
    verdict it has now."""
    network = TronNetwork(order.network) if order.network else None
    payments = {p.tx_hash: p for p in order.payments}
    steps = []
    for entry in order.timeline:
        data = entry.data or {}
        tx_hash = data.get("hash")
        payment = payments.get(tx_hash) if tx_hash else None
        # A submitted hash carries the verdict it has now; the verdict's own line says why.
        submitted = payment if entry.kind == "hash_submitted" else None
        explained = entry.kind == "payment_rejected" or (
            submitted is not None and submitted.status == "checking"
        )
        steps.append(
            {
                "at": entry.at,
                "who": _who(str(entry.actor), members),
                "text": _step(entry),
                "hash": tx_hash,
                "url": tronscan_url(network, tx_hash) if tx_hash and network else None,
                "payment": submitted,
                "why": reason_text(payment, order.address, zone) if payment and explained else "",
            }
        )
    return steps


# -- pages ---------------------------------------------------------------------------------------


def before_of(raw: str) -> int | None:
    """The `before` of a paged list's address: the id to list below, None for the newest."""
    return int(raw) if is_id(raw) and int(raw) > 0 else None


@dataclass(frozen=True, slots=True)
class Asked:
    """What a shop list's address asks for: a bot and a `choice` (a state or a status) to
    filter by, None for all, and the page (`before`); `filters` holds those given, for the
    list's links to keep."""

    bot: int | None
    choice: str | None
    before: int | None
    filters: dict[str, Any]

    def pager(self, path: str, next_before: int | None) -> dict[str, str | None]:
        """The list's links, its filters kept: to the older page, and back to the newest."""

        def url(**more: Any) -> str:
            query = urlencode({**self.filters, **more})
            return f"{path}?{query}" if query else path

        return {
            "older": url(before=next_before) if next_before else None,
            "newest": url() if self.before else None,
        }


def asked(
    request: Request, key: str, choices: Collection[str], bots: list[Bot] | None = None
) -> Asked:
    """Read a shop list's address: `?<key>=` when it is one of `choices`, `?bot=` when it is
    one of `bots` (a list without a bot filter passes none), and `?before=`."""
    q = request.query_params
    bot = None if bots is None else bot_filter(q.get("bot", ""), bots)
    choice = q.get(key) if q.get(key) in choices else None
    filters = {k: v for k, v in (("bot", bot), (key, choice)) if v}
    return Asked(bot, choice, before_of(q.get("before", "")), filters)


@router.get("/shop/orders")
async def orders_page(request: Request, viewer: View) -> Response:
    """Every bot's orders, newest first, filtered by bot and state, a page at a time."""
    services = services_of(request)
    bots = await services.bots.all()
    shown = asked(request, "state", STATES, bots)
    bot, state = shown.bot, shown.choice
    page = await services.shop.orders(bot, state, shown.before, PAGE)

    counts = page.counts
    context = {
        "orders": page.items,
        "bots": bots,
        "bot": bot,
        "state": state,
        "states": STATES,
        "counts": counts,
        "total": sum(counts.values()),
        "state_urls": {
            s: f"/shop/orders?{urlencode({**shown.filters, 'state': s})}" for s in STATES
        },
        "all_url": f"/shop/orders?bot={bot}" if bot else "/shop/orders",
        **shown.pager("/shop/orders", page.next_before),
        **shop_names(),
    }
    return render(request, viewer, "shop_orders.html", context)


def material_of(order: Order) -> dict[str, Any]:
    """The advertiser's material as the page shows it: a post's text without its markup."""
    material = dict(order.material or {})
    post = material.get("post")
    if isinstance(post, dict):
        try:
            shown = parse_html(str(post.get("text", ""))).text.strip()
        except HtmlError:
            shown = str(post.get("text", ""))  # checked when sent; shown as typed regardless
        material["post"] = {**post, "shown": shown}
    return material


def amounts_of(order: Order) -> dict[str, Any]:
    """What is still due in TRX at the locked rate, when the order takes TRX."""
    rate = order.usdt_per_trx
    left = Decimal(order.left_usdt)
    if not (rate and order.accept_trx and left > 0):
        return {"left_trx": None, "price_trx": None}
    return {
        "left_trx": show(trx_to_ask(left, Decimal(rate))),
        "price_trx": show(trx_to_ask(Decimal(order.price_usdt), Decimal(rate))),
    }


async def _order_page(
    request: Request,
    viewer: Viewer,
    order_id: int,
    error: str = "",
    failed: dict[str, str] | None = None,
    status: int = 200,
) -> Response:
    services = services_of(request)
    order = await services.shop.order(order_id)
    bot = await services.bots.get(order.bot_id)
    members = {u.id: u.name for u in await accounts.users(panel_of(request).pool)}
    zone = str(viewer.workspace.get("time_zone") or "UTC")
    network = TronNetwork(order.network) if order.network else None
    # What the ad delivered: the end report once it is over, counted now while it runs.
    reach = order.report if order.state == "completed" else None
    if order.state == "running":
        reach = await delivered(panel_of(request).pool, order, panel_of(request).config.clock())
    context = {
        "order": order,
        "bot": bot,
        "delivered": reach or {},
        "material": material_of(order),
        "trx": amounts_of(order),
        "coins": [c for c, on in (("USDT", order.accept_usdt), ("TRX", order.accept_trx)) if on],
        "timeline": timeline(order, members, zone),
        "payments": payment_rows(order.payments, network, order.address, zone),
        "moves": {path for path, (move, _l, _k) in ACTIONS.items() if can(move, order.state)},
        "payable": order.state in PAYABLE,
        "error": error,
        "done": DONE.get(request.query_params.get("done", "")),
        "failed": failed or {},
        "max_reason": MAX_REASON,
        **shop_names(),
    }
    return render(request, viewer, "shop_order.html", context, status)


@router.get("/shop/orders/{order_id}")
async def order_page(request: Request, order_id: Id, viewer: View) -> Response:
    """One order: material, amounts, rate, timeline, payments, and what can be done."""
    return await _order_page(request, viewer, order_id)


def explain(exc: BaseException, action: str, state: str) -> str:
    """An order's refusal in the viewer's language."""
    if not isinstance(exc, FeatureError):
        return describe(exc)
    code = exc.code or ""
    if code == Code.ORDER_STATE:
        now = STATE_NAMES.get(str(exc.details.get("state") or state), "")
        if action == "hash":
            return _("This order is not waiting for a payment, so no hash can be added.")
        return _(
            "The order is “%(state)s” now: “%(action)s” cannot be done.",
            state=_(now) if now else state,
            action=_(ACTIONS[action][1]),
        )
    return describe(exc)


def _status(exc: BaseException) -> int:
    # Input the service cannot use is a bad request; a state that forbids it, a conflict.
    if isinstance(exc, Invalid):
        return BAD_INPUT
    if isinstance(exc, Conflict):
        return 409
    return status_of(exc)


async def _act(request: Request, viewer: Viewer, order_id: int, action: str) -> Response:
    """One of the owner's moves on an order; audited. A refusal shows the order's page with
    the reason in a banner (and beside the form's field), the typed text kept."""
    shop = services_of(request).shop
    form = await request.form()
    field = "hash" if action == "hash" else "reason"
    typed = text_of(form, field)
    before = await shop.order(order_id)
    actor = f"panel:{viewer.user.id}"
    moves: dict[str, Callable[[int, str, str], Awaitable[Order]]] = {
        "reject": shop.reject,
        "ask-change": shop.ask_change,
        "cancel": shop.cancel,
        "mark-paid": shop.mark_paid,
        "mark-refunded": shop.mark_refunded,
        "hash": shop.add_hash,
    }
    try:
        if action == "approve":
            after = await shop.approve(order_id, actor)
        else:
            after = await moves[action](order_id, typed, actor)
    except REFUSED as exc:
        if isinstance(exc, NotFound):
            raise
        message = explain(exc, action, before.state)
        failed = {"action": action, "text": typed[: MAX_REASON * 2], "message": message}
        return await _order_page(request, viewer, order_id, message, failed, _status(exc))
    kind = "shop.order_hash_added" if action == "hash" else ACTIONS[action][2]
    change: dict[str, Any] = {"state": after.state}
    if action == "approve" and after.usdt_per_trx:
        change.update(usdt_per_trx=after.usdt_per_trx, rate_source=after.rate_source)
    if action == "hash":
        change["hash"] = parse_hash(typed)  # as the service read it: it was accepted
    elif typed.strip():
        change["reason"] = typed.strip()
    await audit(
        request, viewer, kind, f"order:{order_id}", before={"state": before.state}, after=change
    )
    return redirect(request, f"/shop/orders/{order_id}?done={action}")


@router.post("/shop/orders/{order_id}/approve")
async def order_approve(request: Request, order_id: Id, viewer: ManageBots) -> Response:
    """Approve: lock the address and the TRX rate, send the payment request and its QR code."""
    return await _act(request, viewer, order_id, "approve")


@router.post("/shop/orders/{order_id}/reject")
async def order_reject(request: Request, order_id: Id, viewer: ManageBots) -> Response:
    """Turn the order down, telling the advertiser why."""
    return await _act(request, viewer, order_id, "reject")


@router.post("/shop/orders/{order_id}/ask-change")
async def order_ask_change(request: Request, order_id: Id, viewer: ManageBots) -> Response:
    """Send the material back to the advertiser for a change, saying what to change."""
    return await _act(request, viewer, order_id, "ask-change")


@router.post("/shop/orders/{order_id}/cancel")
async def order_cancel(request: Request, order_id: Id, viewer: ManageBots) -> Response:
    """Cancel an order nobody has paid in full."""
    return await _act(request, viewer, order_id, "cancel")


@router.post("/shop/orders/{order_id}/mark-paid")
async def order_mark_paid(request: Request, order_id: Id, viewer: ManageBots) -> Response:
    """Count the order as paid without a verified hash (the reason goes on record)."""
    return await _act(request, viewer, order_id, "mark-paid")


@router.post("/shop/orders/{order_id}/mark-refunded")
async def order_refund(request: Request, order_id: Id, viewer: ManageBots) -> Response:
    """Record that the money was given back by hand (the bot holds no key)."""
    return await _act(request, viewer, order_id, "mark-refunded")


@router.post("/shop/orders/{order_id}/hash")
async def order_add_hash(request: Request, order_id: Id, viewer: ManageBots) -> Response:
    """Check a hash the advertiser sent some other way."""
    return await _act(request, viewer, order_id, "hash")


@router.get("/shop/payments")
async def payments_page(request: Request, viewer: View) -> Response:
    """Every submitted hash, newest first, with its verdict, filtered by bot and status."""
    services = services_of(request)
    bots = await services.bots.all()
    shown = asked(request, "status", PAYMENT_STATUSES, bots)
    page = await services.shop.payments(shown.bot, shown.choice, shown.before, PAGE)
    zone = str(viewer.workspace.get("time_zone") or "UTC")
    rows = []
    for item in page.items:
        network = TronNetwork(item.network) if item.network else None
        rows.extend(payment_rows((item,), network, None, zone))

    context = {
        "payments": rows,
        "bots": bots,
        "bot": shown.bot,
        "status": shown.choice,
        "statuses": PAYMENT_STATUSES,
        **shown.pager("/shop/payments", page.next_before),
        "filtered": bool(shown.filters),
        **shop_names(),
    }
    return render(request, viewer, "shop_payments.html", context)


# The moves the rules know and the panel offers, checked once at import: a move added to the
# rules without a button here is a decision, not an accident.
assert {move for move, _label, _kind in ACTIONS.values()} <= set(MOVES)
