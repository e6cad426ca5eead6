"""The ad shop: settings and products per bot, orders and payments, and the owner's moves.

Money is at stake: changing anything takes an owner or an admin, and where the money goes (the
address, the network, the coins) an owner token; any member may read."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request, Response

from sponsorbot.features.shop import orders
from sponsorbot.features.shop.payout import MONEY_CHANGED, money_change, money_changes
from sponsorbot.features.shop.products import Product, ProductDraft
from sponsorbot.features.shop.rules import PaymentStatus, State
from sponsorbot.features.shop.settings import ShopConfig, ShopSettings
from sponsorbot.web.api.audit import audit_call
from sponsorbot.web.api.auth import actor_name, refuse_unless
from sponsorbot.web.api.deps import Admin, Before, BotFilter, BotId, Limit, Reader, RowId, Service
from sponsorbot.web.api.models_shop import (
    HashIn,
    OrderOut,
    OrderPage,
    PaymentPage,
    ProductIn,
    ProductOut,
    ReasonIn,
    ShopSettingsIn,
    ShopSettingsOut,
)

router = APIRouter()
BOT = "/bots/{bot_id}/shop"


@router.get(BOT, response_model=ShopSettingsOut, summary="A bot's shop settings")
async def get_shop(bot_id: BotId, who: Reader, features: Service) -> ShopSettings:
    return await features.shop.settings(bot_id)


@router.put(
    BOT,
    response_model=ShopSettingsOut,
    summary="Set a bot's shop settings",
    description="A new address, network or coins takes an owner token (403 otherwise); an "
    "admin token may change the rest, sending those three as they are.",
)
async def put_shop(
    request: Request, bot_id: BotId, body: ShopSettingsIn, who: Admin, features: Service
) -> ShopSettings:
    config = body.to(ShopConfig)
    bot = await features.bots.get(bot_id)
    before = await features.shop.settings(bot_id)
    # Compared with what is stored, so an admin's PUT of the other settings still goes through.
    if money_changes(before, config):
        refuse_unless(
            who, "shop.money", "only an owner token changes the shop's address, network or coins"
        )
    after = await features.shop.save_settings(bot_id, config)
    change = money_change(before, after)
    if change is not None:  # what the owner's dashboard warns about for a week
        await audit_call(request, who, MONEY_CHANGED, f"@{bot.username}", *change)
    return after


@router.get(f"{BOT}/products", response_model=list[ProductOut], summary="A bot's products")
async def list_products(bot_id: BotId, who: Reader, features: Service) -> list[Product]:
    return await features.shop.products(bot_id)


@router.post(f"{BOT}/products", status_code=201, response_model=ProductOut, summary="Add a product")
async def create_product(bot_id: BotId, body: ProductIn, who: Admin, features: Service) -> Product:
    return await features.shop.create_product(bot_id, body.to(ProductDraft))


@router.put(f"{BOT}/products/{{product_id}}", response_model=ProductOut, summary="Change a product")
async def change_product(
    bot_id: BotId, product_id: RowId, body: ProductIn, who: Admin, features: Service
) -> Product:
    return await features.shop.change_product(bot_id, product_id, body.to(ProductDraft))


@router.delete(f"{BOT}/products/{{product_id}}", status_code=204, summary="Remove a product")
async def delete_product(
    bot_id: BotId, product_id: RowId, who: Admin, features: Service
) -> Response:
    await features.shop.delete_product(bot_id, product_id)
    return Response(status_code=204)


@router.get("/shop/orders", response_model=OrderPage, summary="Orders, newest first")
async def list_orders(
    who: Reader,
    features: Service,
    bot_id: BotFilter = None,
    state: State | None = None,
    before: Before = None,
    limit: Limit = 50,
) -> orders.OrderPage:
    return await features.shop.orders(bot_id, state, before, limit)


@router.get(
    "/shop/orders/{order_id}",
    response_model=OrderOut,
    summary="One order with its payments and timeline",
)
async def get_order(order_id: RowId, who: Reader, features: Service) -> orders.Order:
    return await features.shop.order(order_id)


@router.post(
    "/shop/orders/{order_id}/approve",
    response_model=OrderOut,
    summary="Approve: lock the TRX rate and send the advertiser the payment request",
)
async def approve_order(order_id: RowId, who: Admin, features: Service) -> orders.Order:
    return await features.shop.approve(order_id, actor_name(who))


# Before the route of the moves, whose {action} would take "payments" too.
@router.post(
    "/shop/orders/{order_id}/payments",
    status_code=201,
    response_model=OrderOut,
    summary="Check a transaction hash for an order (as if the advertiser had sent it)",
)
async def add_payment(order_id: RowId, body: HashIn, who: Admin, features: Service) -> orders.Order:
    return await features.shop.add_hash(order_id, body.tx_hash, actor_name(who))


@router.post(
    "/shop/orders/{order_id}/{action}",
    response_model=OrderOut,
    summary="Reject, ask for a change, cancel, mark paid or mark refunded (with a reason)",
)
async def act_on_order(
    order_id: RowId,
    action: Literal["reject", "ask-change", "cancel", "mark-paid", "mark-refunded"],
    who: Admin,
    features: Service,
    body: ReasonIn | None = None,
) -> orders.Order:
    shop = features.shop
    acts = {
        "reject": shop.reject,
        "ask-change": shop.ask_change,
        "cancel": shop.cancel,
        "mark-paid": shop.mark_paid,
        "mark-refunded": shop.mark_refunded,
    }
    reason = body.reason if body is not None else ""
    return await acts[action](order_id, reason, actor_name(who))


@router.get("/shop/payments", response_model=PaymentPage, summary="Payments, newest first")
async def list_payments(
    who: Reader,
    features: Service,
    bot_id: BotFilter = None,
    status: PaymentStatus | None = None,
    before: Before = None,
    limit: Limit = 50,
) -> orders.PaymentPage:
    return await features.shop.payments(bot_id, status, before, limit)
