"""The shop's transfers: what came in on the chain, and the owner's decisions on transfers that
matched no order by their amount (assign one to an order, or record that it was sent back),
and a turned-down hash checked again.

A transfer is credited automatically only when its amount is exactly what one open order asks
for; everything else is the owner's to decide (docs/shop-payments.md)."""

from __future__ import annotations

from fastapi import APIRouter

from sponsorbot.features.shop import transfers
from sponsorbot.features.shop.orders import Order
from sponsorbot.features.shop.rules import TransferState
from sponsorbot.web.api.auth import actor_name
from sponsorbot.web.api.deps import Admin, Before, Limit, Reader, RowId, Service
from sponsorbot.web.api.models_shop import AssignIn, NoteIn, OrderOut, TransferOut, TransferPage

router = APIRouter()


@router.get("/shop/transfers", response_model=TransferPage, summary="Transfers, newest first")
async def list_transfers(
    who: Reader,
    features: Service,
    state: TransferState | None = None,
    before: Before = None,
    limit: Limit = 50,
) -> transfers.TransferPage:
    return await features.shop.transfers(state, before, limit)


@router.get("/shop/transfers/{transfer_id}", response_model=TransferOut, summary="One transfer")
async def get_transfer(transfer_id: RowId, who: Reader, features: Service) -> transfers.Transfer:
    return await features.shop.transfer(transfer_id)


@router.post(
    "/shop/transfers/{transfer_id}/assign",
    response_model=TransferOut,
    summary="Credit a transfer that matched no order to an order of the same address",
)
async def assign_transfer(
    transfer_id: RowId, body: AssignIn, who: Admin, features: Service
) -> transfers.Transfer:
    return await features.shop.assign_transfer(transfer_id, body.order_id, actor_name(who))


@router.post(
    "/shop/transfers/{transfer_id}/returned",
    response_model=TransferOut,
    summary="Record that a transfer that matched no order was sent back",
)
async def return_transfer(
    transfer_id: RowId, who: Admin, features: Service, body: NoteIn | None = None
) -> transfers.Transfer:
    note = body.note if body is not None else ""
    return await features.shop.return_transfer(transfer_id, note, actor_name(who))


@router.post(
    "/shop/payments/{payment_id}/requeue",
    response_model=OrderOut,
    summary="Check a turned-down transaction hash again",
)
async def requeue_payment(payment_id: RowId, who: Admin, features: Service) -> Order:
    return await features.shop.requeue(payment_id, actor_name(who))
