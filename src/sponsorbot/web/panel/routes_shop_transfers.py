"""The shop's Transfers page: what came in on the chain, and the owner's decisions on the
transfers that matched no order by their exact amount (assign one to an order, or record that
it was sent back). Every decision is audited."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.config import TronNetwork
from sponsorbot.features.errors import NotFound
from sponsorbot.features.shop.rules import TRANSFER_STATES
from sponsorbot.features.shop.transfers import Transfer
from sponsorbot.tron import tronscan_url
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import ManageBots, View
from sponsorbot.web.panel.errors import REFUSED, describe
from sponsorbot.web.panel.fields import is_id, text_of
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.routes_shop import Id
from sponsorbot.web.panel.routes_shop_orders import PAGE, asked, shop_names
from sponsorbot.web.panel.web import Viewer, audit, redirect, render

router = APIRouter(include_in_schema=False, tags=["panel"])
TRANSFER_STATE_NAMES = {
    "unattributed": N_("Waiting for you"),
    "credited": N_("Credited"),
    "returned": N_("Sent back"),
}
TRANSFER_BADGES = {"unattributed": "paused", "credited": "active", "returned": "ended"}
HOLD_NAMES = {
    "no_match": N_("Not the exact amount of any open order"),
    "ambiguous": N_("Two open orders ask for this amount"),
    "too_early": N_("Made before the order it matches was approved"),
}
MATCH_NAMES = {
    "amount": N_("its exact amount"),
    "owner": N_("assigned by hand"),
    "hash": N_("its hash (before exact amounts)"),
}


def _rows(items: tuple[Transfer, ...]) -> list[dict[str, Any]]:
    return [{**t, "url": tronscan_url(TronNetwork(t.network), t.tx_hash)} for t in items]


@router.get("/shop/transfers")
async def transfers_page(request: Request, viewer: View) -> Response:
    """Transfers seen, newest first; those waiting for the owner first by default."""
    return await _page(request, viewer)


async def _page(
    request: Request, viewer: Viewer, message: str = "", status_code: int = 200
) -> Response:
    shown = asked(request, "state", TRANSFER_STATES)
    page = await services_of(request).shop.transfers(shown.choice, shown.before, PAGE)
    context = {
        "transfers": _rows(page.items),
        "bots": await services_of(request).bots.all(),
        "state": shown.choice,
        "states": TRANSFER_STATES,
        "transfer_state_names": TRANSFER_STATE_NAMES,
        "transfer_badges": TRANSFER_BADGES,
        "hold_names": HOLD_NAMES,
        "match_names": MATCH_NAMES,
        **shown.pager("/shop/transfers", page.next_before),
        "filtered": bool(shown.filters),
        "message": message,
        **shop_names(),
    }
    return render(request, viewer, "shop_transfers.html", context, status_code)


@router.post("/shop/transfers/{transfer_id}/assign")
async def transfer_assign(request: Request, transfer_id: Id, viewer: ManageBots) -> Response:
    """Credit a waiting transfer to the order number typed."""
    form = await request.form()
    typed = text_of(form, "order_id").lstrip("#")
    shop = services_of(request).shop
    if not is_id(typed):
        return await _page(request, viewer, _("Type the number of the order to credit."), 400)
    try:
        after = await shop.assign_transfer(transfer_id, int(typed), f"panel:{viewer.user.id}")
    except REFUSED as exc:
        if isinstance(exc, NotFound) and "transfer" in str(exc):
            raise
        return await _page(request, viewer, describe(exc), 409)
    credited = {"order_id": after.order_id, "credited_usdt": after.credited_usdt}
    await _audit(request, viewer, "shop.transfer_assigned", transfer_id, credited)
    return redirect(request, f"/shop/orders/{after.order_id}")


@router.post("/shop/transfers/{transfer_id}/returned")
async def transfer_returned(request: Request, transfer_id: Id, viewer: ManageBots) -> Response:
    """Record that a waiting transfer was sent back by hand."""
    form = await request.form()
    note = text_of(form, "note")
    try:
        await services_of(request).shop.return_transfer(
            transfer_id, note, f"panel:{viewer.user.id}"
        )
    except REFUSED as exc:
        if isinstance(exc, NotFound):
            raise
        return await _page(request, viewer, describe(exc), 409)
    returned = {"state": "returned", "note": note.strip()}
    await _audit(request, viewer, "shop.transfer_returned", transfer_id, returned)
    return redirect(request, "/shop/transfers")


async def _audit(
    request: Request, viewer: Viewer, kind: str, transfer_id: int, after: dict[str, Any]
) -> None:
    """Audit what became of a transfer that waited for the owner (the only one they can move)."""
    before = {"state": "unattributed"}
    await audit(request, viewer, kind, f"transfer:{transfer_id}", before=before, after=after)
