"""The ad shop in the panel, one bot at a time: its settings (on or off, network, the shop's TRON
address, coins, the TronGrid key, hours to pay) and its products. The orders and payments of
every bot are in `routes_shop_orders`; the names both use are here.

Where the money goes (the address, the network and the coins) is the owner's to change, with
their password or a current code in the same form (docs/adr/0009-payout-owner.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response
from starlette.datastructures import FormData

from sponsorbot.config import TronNetwork
from sponsorbot.features.errors import FeatureError, NotFound
from sponsorbot.features.shop.payout import MONEY_CHANGED, money_change, money_changes
from sponsorbot.features.shop.products import MAX_DESCRIPTION, MAX_TITLE, Product, ProductDraft
from sponsorbot.features.shop.rules import KINDS
from sponsorbot.features.shop.settings import ShopConfig, ShopSettings
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import ManageBots, View
from sponsorbot.web.panel.errors import REFUSED, describe
from sponsorbot.web.panel.fields import text_of, whole_number
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.identity import proves_identity
from sponsorbot.web.panel.web import Viewer, audit, audit_changes, redirect, render

router = APIRouter(include_in_schema=False, tags=["panel"])
# An id PostgreSQL's bigint can hold: a longer one in the address bar is a 422, not a DB error.
Id = Annotated[int, Path(ge=1, lt=2**63)]
# A refused form answers 400, the way the owner API answers a bad request; the shop's pages
# use one status for every input they refuse.
BAD_INPUT = 400
NETWORKS = tuple(n.value for n in TronNetwork)
MAINNET = TronNetwork.MAINNET.value

STATE_NAMES = {
    "submitted": N_("Submitted"),
    "in_review": N_("Change asked"),
    "awaiting_payment": N_("Awaiting payment"),
    "partly_paid": N_("Partly paid"),
    "paid": N_("Paid"),
    "running": N_("Running"),
    "completed": N_("Completed"),
    "rejected": N_("Rejected"),
    "expired": N_("Expired"),
    "cancelled": N_("Cancelled"),
    "refunded": N_("Refunded"),
}
# The stylesheet's badge colours: waiting for the owner stands out, finished ones are grey.
STATE_BADGES = {
    "submitted": "paused",
    "in_review": "scheduled",
    "awaiting_payment": "scheduled",
    "partly_paid": "paused",
    "paid": "active",
    "running": "running",
    "completed": "active",
    "rejected": "token_refused",
    "expired": "ended",
    "cancelled": "ended",
    "refunded": "ended",
}
KIND_NAMES = {
    "gate_slot": N_("Gate slot"),
    "broadcast": N_("Broadcast post"),
    "banner": N_("Banner"),
}
NETWORK_NAMES = {
    "mainnet": N_("TRON mainnet"),
    "nile": N_("Nile testnet"),
    "shasta": N_("Shasta testnet"),
}
SHOP_KIND_LABELS = {
    "shop.settings_changed": N_("Shop settings changed"),
    "shop.money_changed": N_("Shop's address, network or coins changed"),
    "shop.money_changed.texts": N_("Shop's payment texts changed"),
    "shop.product_created": N_("Product added"),
    "shop.product_changed": N_("Product changed"),
    "shop.product_deleted": N_("Product deleted"),
    "shop.order_approved": N_("Order approved"),
    "shop.order_rejected": N_("Order rejected"),
    "shop.order_change_asked": N_("Change asked of an order"),
    "shop.order_cancelled": N_("Order cancelled"),
    "shop.order_marked_paid": N_("Order marked paid"),
    "shop.order_refunded": N_("Order marked refunded"),
    "shop.order_hash_added": N_("Hash added to an order"),
}
# Which form field a refusal is shown beside; anything else goes above the form.
FIELD_OF = {
    "shop_network": "network",
    "shop_address": "address",
    "shop_coins": "coins",
    "shop_pay_within": "pay_within_h",
    "shop_api_key": "api_key",
    "product_kind": "kind",
    "product_title": "title",
    "product_title_fa": "title_fa",
    "product_price": "price_usdt",
    "product_joins": "joins",
    "product_days": "days",
}
SETTINGS_AUDITED = ("enabled", "network", "address", "accept_usdt", "accept_trx", "pay_within_h")
PRODUCT_AUDITED = (
    "kind",
    "title",
    "description",
    "title_fa",
    "description_fa",
    "price_usdt",
    "joins",
    "days",
    "active",
)


def names() -> dict[str, Any]:
    """The translatable names the shop's templates show."""
    return {
        "state_names": STATE_NAMES,
        "state_badges": STATE_BADGES,
        "kind_names": KIND_NAMES,
        "network_names": NETWORK_NAMES,
    }


def _address_problem(message: str) -> str:
    """Why the typed address is not one. The service says it in English; the kind of mistake
    is read from its words so the owner reads it in their language."""
    if "checksum" in message:
        return _(
            "The address's checksum does not match: a character is mistyped. "
            "Copy the address from your wallet again."
        )
    if "not Base58" in message:
        return _(
            "This is not a TRON address: it has a character no address has "
            "(0, O, I and l never appear in one)."
        )
    if "wrong length" in message:
        return _("This is not a TRON address: one has 34 characters and starts with T.")
    if "to be on" in message:
        return _("The shop needs its TRON address before it can be turned on.")
    if "not a TRON address" in message:
        return _("This is not a TRON address: one has 34 characters and starts with T.")
    return _("Set the shop's TRON address first.")


# Prices the service refuses, by its message: the owner's own words for each.
_PRICE_PROBLEMS = {
    "the price is not a number": N_("The price is not a number."),
    "the price must be more than 0": N_("The price must be more than 0."),
    "the price must be below 1,000,000 USDT": N_("The price must be below 1,000,000 USDT."),
    "USDT has 6 decimal places at most": N_("USDT has 6 decimal places at most."),
}


def explain(exc: BaseException) -> str:
    """A refusal of the shop's settings or products in the viewer's language."""
    if not isinstance(exc, FeatureError):
        return describe(exc)
    code = exc.code or ""
    if code == "shop_address":
        return _address_problem(exc.message)
    if code == "product_price":
        known = _PRICE_PROBLEMS.get(exc.message)
        return _(known) if known else exc.message
    if code == "shop_network" and "SPONSORBOT_ALLOW_TESTNET" in exc.message:
        return _(
            "Test networks are off on this server: their coins are free, so payments on them "
            "are not real. Choose TRON mainnet (SPONSORBOT_ALLOW_TESTNET turns them on)."
        )
    texts = {
        "shop_network": _("Choose mainnet, Nile or Shasta."),
        "shop_coins": _("Accept USDT, TRX or both."),
        "shop_pay_within": _("The time to pay is 1 to 720 hours."),
        "shop_api_key": _(
            "This TronGrid API key is not well-formed: no spaces, up to 200 characters."
        ),
        "product_kind": _("Choose what the product is."),
        "product_title": _("The title is 1 to %(n)s characters.", n=MAX_TITLE),
        "product_title_fa": _("Up to %(n)s characters.", n=MAX_TITLE),
        "product_joins": _("A gate slot delivers 1 to 10,000,000 joins."),
        "product_days": _("A banner is shown for 1 to 365 days."),
    }
    return texts.get(code) or describe(exc)


def field_errors(exc: BaseException) -> dict[str, str]:
    """The refusal beside the field it is about."""
    code = exc.code if isinstance(exc, FeatureError) else None
    return {FIELD_OF.get(code or "", "form"): explain(exc)}


# -- settings ------------------------------------------------------------------------------------


def read_settings(form: FormData) -> tuple[ShopConfig, dict[str, Any], dict[str, str]]:
    """The settings a form describes, what its fields show again, and the errors of fields
    that are not even well formed. An empty key field keeps the stored key."""
    errors: dict[str, str] = {}
    hours = whole_number(
        text_of(form, "pay_within_h"),
        errors,
        "pay_within_h",
        _("The time to pay is 1 to 720 hours."),
    )
    typed_key = text_of(form, "api_key").strip()
    api_key: str | None = typed_key or None
    if form.get("remove_api_key"):
        api_key = ""
    config = ShopConfig(
        enabled=bool(form.get("enabled")),
        network=text_of(form, "network"),
        address=text_of(form, "address").strip(),
        accept_usdt=bool(form.get("accept_usdt")),
        accept_trx=bool(form.get("accept_trx")),
        api_key=api_key,
        pay_within_h=hours if hours is not None else 0,
    )
    # The key is never sent back to the browser, not even as typed.
    values = {
        "enabled": config.enabled,
        "network": config.network,
        "address": config.address,
        "accept_usdt": config.accept_usdt,
        "accept_trx": config.accept_trx,
        "pay_within_h": text_of(form, "pay_within_h").strip(),
    }
    return config, values, errors


async def _settings_page(
    request: Request,
    viewer: Viewer,
    bot_id: int,
    errors: dict[str, str],
    values: dict[str, Any] | None = None,
    status: int = 200,
) -> Response:
    shop = services_of(request).shop
    bot = await services_of(request).bots.get(bot_id)
    stored = await shop.settings(bot_id)
    # Test networks are offered only where the server allows them (a shop already on one
    # still shows it, so the page says what is stored).
    networks = [n for n in NETWORKS if shop.allow_testnet or n in (MAINNET, stored.network)]
    context = {
        "bot": bot,
        "shop": stored,
        "values": values or {**stored, "address": stored.address or ""},
        "errors": errors,
        "networks": networks,
        "testnets_allowed": shop.allow_testnet,
        "saved": request.query_params.get("saved", "") == "1",
        **names(),
    }
    return render(request, viewer, "shop_settings.html", context, status)


@router.get("/bots/{bot_id}/shop")
async def shop_settings_page(request: Request, bot_id: Id, viewer: View) -> Response:
    """The bot's shop settings (read only for whoever may not change them)."""
    return await _settings_page(request, viewer, bot_id, {})


def _audited_settings(settings: ShopSettings) -> dict[str, Any]:
    """What the audit log keeps of the settings: never the TronGrid key, only whether one is set
    (or is stored but can no longer be read)."""
    out = {k: settings[k] for k in SETTINGS_AUDITED}
    if settings.key_unreadable:
        out["trongrid_key"] = "unreadable"
    else:
        out["trongrid_key"] = "set" if settings.api_key_tail else None
    return out


@router.post("/bots/{bot_id}/shop")
async def shop_settings_save(request: Request, bot_id: Id, viewer: ManageBots) -> Response:
    """Save the shop settings; a refusal is shown beside its field with what was typed. A new
    address, network or coins takes the owner, and their password or a current code."""
    services = services_of(request)
    bot = await services.bots.get(bot_id)
    before = await services.shop.settings(bot_id)
    form = await request.form()
    config, values, errors = read_settings(form)
    if errors:
        return await _settings_page(request, viewer, bot_id, errors, values, BAD_INPUT)
    # Compared with what is stored: an admin saving the other settings sends these unchanged.
    if money_changes(before, config):
        if not viewer.can("shop.money"):
            errors = {"form": _("Only the owner can change the shop's address, network or coins.")}
            return await _settings_page(request, viewer, bot_id, errors, values, 403)
        try:  # a mistyped address is said before the password is asked for
            services.shop.check_settings(config)
        except REFUSED as exc:
            return await _settings_page(
                request, viewer, bot_id, field_errors(exc), values, BAD_INPUT
            )
        if not await proves_identity(request, viewer, text_of(form, "confirm")):
            errors = {
                "confirm": _(
                    "Enter your password or a current code from your app to change the "
                    "address, network or coins."
                )
            }
            return await _settings_page(request, viewer, bot_id, errors, values, BAD_INPUT)
    try:
        after = await services.shop.save_settings(bot_id, config)
    except REFUSED as exc:
        if isinstance(exc, NotFound):
            raise
        return await _settings_page(request, viewer, bot_id, field_errors(exc), values, BAD_INPUT)
    old, new = _audited_settings(before), _audited_settings(after)
    if config.api_key:  # a new key typed in, even one that happens to end the same way
        new["trongrid_key"] = "replaced" if old["trongrid_key"] else "set"
    await audit_changes(request, viewer, "shop.settings_changed", f"@{bot.username}", old, new, new)
    change = money_change(before, after)
    if change is not None:  # what the owner's dashboard warns about for a week
        await audit(
            request, viewer, MONEY_CHANGED, f"@{bot.username}", before=change[0], after=change[1]
        )
    return redirect(request, f"/bots/{bot_id}/shop?saved=1")


# -- products ------------------------------------------------------------------------------------


def read_product(form: FormData) -> tuple[ProductDraft, dict[str, Any], dict[str, str]]:
    """The product a form describes, what its fields show again, and the errors of fields that
    are not even well formed (the service checks the rest)."""
    errors: dict[str, str] = {}
    kind = text_of(form, "kind")
    joins = whole_number(
        text_of(form, "joins"),
        errors,
        "joins",
        _("A gate slot delivers 1 to 10,000,000 joins."),
    )
    days = whole_number(
        text_of(form, "days"), errors, "days", _("A banner is shown for 1 to 365 days.")
    )
    position = whole_number(
        text_of(form, "position"), errors, "position", _("A whole number, 0 or more.")
    )
    description = text_of(form, "description")
    description_fa = text_of(form, "description_fa")
    for key, text in (("description", description), ("description_fa", description_fa)):
        if len(text) > MAX_DESCRIPTION:
            errors[key] = _("Up to %(n)s characters.", n=MAX_DESCRIPTION)
    draft = ProductDraft(
        kind=kind,
        title=text_of(form, "title"),
        price_usdt=text_of(form, "price_usdt").strip(),
        description=description,
        joins=joins,
        days=days,
        active=bool(form.get("active")),
        position=position or 0,
        title_fa=text_of(form, "title_fa"),
        description_fa=description_fa,
    )
    values: dict[str, Any] = {
        k: text_of(form, k) for k in ("kind", "title", "title_fa", "price_usdt", "joins", "days")
    }
    values.update(
        description=description,
        description_fa=description_fa,
        active=draft.active,
        position=text_of(form, "position"),
    )
    return draft, values, errors


async def _products_page(request: Request, viewer: Viewer, bot_id: int) -> Response:
    shop = services_of(request).shop
    context = {
        "bot": await services_of(request).bots.get(bot_id),
        "products": await shop.products(bot_id),
        "shop": await shop.settings(bot_id),
        **names(),
    }
    return render(request, viewer, "shop_products.html", context)


async def _product_form(
    request: Request,
    viewer: Viewer,
    bot_id: int,
    values: dict[str, Any],
    errors: dict[str, str],
    product: Product | None = None,
    status: int = 200,
) -> Response:
    context = {
        "bot": await services_of(request).bots.get(bot_id),
        "product": product,
        "values": values,
        "errors": errors,
        "kinds": KINDS,
        "max_title": MAX_TITLE,
        "max_description": MAX_DESCRIPTION,
        **names(),
    }
    return render(request, viewer, "shop_product_form.html", context, status)


def _product_values(product: Product) -> dict[str, Any]:
    """What the form shows for a stored product."""
    return {
        **{k: product[k] for k in PRODUCT_AUDITED if k not in ("joins", "days")},
        "joins": product.joins or "",
        "days": product.days or "",
        "position": product.position,
    }


def _audited_product(product: Product) -> dict[str, Any]:
    return {k: product[k] for k in PRODUCT_AUDITED}


@router.get("/bots/{bot_id}/shop/products")
async def shop_products_page(request: Request, bot_id: Id, viewer: View) -> Response:
    """The bot's products: kind, title, price, joins or days, active."""
    return await _products_page(request, viewer, bot_id)


@router.get("/bots/{bot_id}/shop/products/new")
async def shop_product_new(request: Request, bot_id: Id, viewer: ManageBots) -> Response:
    """The form for a new product."""
    values = {"kind": "gate_slot", "active": True, "position": "0"}
    return await _product_form(request, viewer, bot_id, values, {})


@router.post("/bots/{bot_id}/shop/products")
async def shop_product_create(request: Request, bot_id: Id, viewer: ManageBots) -> Response:
    """Add a product; a refusal is shown beside its field."""
    shop = services_of(request).shop
    await services_of(request).bots.get(bot_id)
    draft, values, errors = read_product(await request.form())
    if errors:
        return await _product_form(request, viewer, bot_id, values, errors, None, BAD_INPUT)
    try:
        made = await shop.create_product(bot_id, draft)
    except REFUSED as exc:
        if isinstance(exc, NotFound):
            raise
        errors = field_errors(exc)
        return await _product_form(request, viewer, bot_id, values, errors, None, BAD_INPUT)
    after = {"bot": bot_id, **_audited_product(made)}
    await audit(request, viewer, "shop.product_created", f"product:{made.id}", after=after)
    return redirect(request, f"/bots/{bot_id}/shop/products")


@router.get("/bots/{bot_id}/shop/products/{product_id}/edit")
async def shop_product_edit(
    request: Request, bot_id: Id, product_id: Id, viewer: ManageBots
) -> Response:
    """The form to change a product."""
    product = await services_of(request).shop.product(bot_id, product_id)
    return await _product_form(request, viewer, bot_id, _product_values(product), {}, product)


@router.post("/bots/{bot_id}/shop/products/{product_id}/edit")
async def shop_product_change(
    request: Request, bot_id: Id, product_id: Id, viewer: ManageBots
) -> Response:
    """Save a product's changes (orders keep what they were sold as)."""
    shop = services_of(request).shop
    before = await shop.product(bot_id, product_id)
    draft, values, errors = read_product(await request.form())
    if errors:
        return await _product_form(request, viewer, bot_id, values, errors, before, BAD_INPUT)
    try:
        after = await shop.change_product(bot_id, product_id, draft)
    except REFUSED as exc:
        if isinstance(exc, NotFound):
            raise
        errors = field_errors(exc)
        return await _product_form(request, viewer, bot_id, values, errors, before, BAD_INPUT)
    old, new = _audited_product(before), _audited_product(after)
    await audit_changes(
        request, viewer, "shop.product_changed", f"product:{product_id}", old, new, PRODUCT_AUDITED
    )
    return redirect(request, f"/bots/{bot_id}/shop/products")


@router.post("/bots/{bot_id}/shop/products/{product_id}/delete")
async def shop_product_delete(
    request: Request, bot_id: Id, product_id: Id, viewer: ManageBots
) -> Response:
    """Delete a product (its orders stay, with what they were sold as)."""
    shop = services_of(request).shop
    before = await shop.product(bot_id, product_id)
    await shop.delete_product(bot_id, product_id)
    await audit(
        request,
        viewer,
        "shop.product_deleted",
        f"product:{product_id}",
        before={"bot": bot_id, **_audited_product(before)},
    )
    return redirect(request, f"/bots/{bot_id}/shop/products")
