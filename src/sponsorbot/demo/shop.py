"""The demo's ad shop, on its first bot: settings, three products, and orders in every state.

The live ones go through the owner API and the simulated TronGrid as they would for real: an
order waiting for the owner, one sent back for a change, one approved and waiting for payment,
one paid in part (a real USDT transfer, verified by the runner), one paid in full (a banner that
then runs), one turned down and one cancelled. Finished ones (completed, expired, refunded) are
history, written as rows with their timelines, dated earlier in the month: each approved by
the demo's owner (in the audit log too, as the panel writes it) and paid by a transfer the shop
credited, so an order's paid amount is the sum of its payments, as on a live one.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg

from sponsorbot.demo.setup import ProductBot
from sponsorbot.features.accounts.audit import Actor, record
from sponsorbot.loadtest.scenario import OwnerApi
from sponsorbot.simulator.client import SimulatorClient
from sponsorbot.tron.address import parse_address

log = logging.getLogger(__name__)

PRODUCTS = (
    {"kind": "gate_slot", "title": "Gate slot, 500 joins", "price_usdt": "25", "joins": 500},
    {"kind": "broadcast", "title": "A post to every subscriber", "price_usdt": "40"},
    {"kind": "banner", "title": "Banner after every file, 7 days", "price_usdt": "15", "days": 7},
)
BANNER = {"text": "Fresh films every night at Night Owl Cinema", "url": "https://example.com/owl"}
CHANNEL = {"chat_id": -1001999000001, "title": "Ad Channel", "username": None}
ORDER = """
INSERT INTO shop_orders (bot_id, product_id, kind, title, joins, days, user_id, user_name,
                         language, material, price_usdt, state, note, network, address,
                         accept_usdt, accept_trx, approved_at, usdt_per_trx, rate_source,
                         expires_at, paid_usdt, started_at, ends_at, ended_at, report,
                         created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'mainnet', $14, true, true,
        $15::timestamptz, 0.25, 'coingecko', $15::timestamptz + interval '24 hours', $16, $17,
        $18, $19, $20, $21, $21)
RETURNING id
"""
STEP = """
INSERT INTO shop_order_log (bot_id, order_id, at, kind, actor, data)
SELECT o.bot_id, o.id, $2, $3, $4, $5 FROM shop_orders o WHERE o.id = $1
"""
# A live order is submitted as it is made: its "ordered" time is its first step's.
LIVE_ORDER = """
INSERT INTO shop_orders (bot_id, product_id, kind, title, joins, days, user_id, user_name,
                         language, material, price_usdt, created_at, updated_at)
SELECT bot_id, id, kind, title, joins, days, $2, 'Advertiser', 'fa', $3, price_usdt, $4, $4
FROM shop_products WHERE id = $1
RETURNING id
"""
OWNER = "SELECT id, name, email FROM users WHERE role = 'owner' ORDER BY id LIMIT 1"
# A finished order's payment, as the shop records a hash it credited: the transfer and the
# advertiser's claim of it.
TRANSFER = """
INSERT INTO shop_transfers (network, tx_hash, coin, amount, from_address, to_address,
                            block_time, state, order_bot_id, order_id, credited_usdt,
                            matched_by, seen_at, decided_at, decided_by)
VALUES ('mainnet', $1, 'USDT', $2, $3, $4, $5, 'credited', $6, $7, $2, 'hash', $5, $5, 'system')
"""
PAYMENT = """
INSERT INTO shop_payments (order_id, bot_id, tx_hash, source, status, coin, amount,
                           from_address, to_address, credited_usdt, block_time, checks,
                           next_check_at, submitted_at, decided_at)
VALUES ($1, $2, $3, 'bot', 'credited', 'USDT', $4, $5, $6, $4, $7, 1, $7, $7, $7)
"""
# Where the advertisers' coins came from: a made-up TRON address (0x41, then 20 bytes).
PAYER = b"\x41" + hashlib.sha256(b"demo advertiser wallet").digest()[:20]


async def create(
    api: OwnerApi, pool: asyncpg.Pool, sim: SimulatorClient, bot: ProductBot, now: datetime
) -> None:
    """The shop of `bot`, its products and its orders."""
    bot_id = await pool.fetchval("SELECT id FROM bots WHERE username = $1", bot.sim.plan.username)
    shop = await sim.tron_create_wallet(trx="0", usdt="0")
    payer = await sim.tron_create_wallet(trx="100000", usdt="10000")
    await api.call(
        "PUT",
        f"/bots/{bot_id}/shop",
        {"enabled": True, "network": "mainnet", "address": shop["address"]},
    )
    made = [await api.call("POST", f"/bots/{bot_id}/shop/products", p) for p in PRODUCTS]
    slot, post, banner = made
    users = await sim.create_users(
        8, language_code="fa", started=bot.sim.plan.username, first_name="Advertiser"
    )
    await _history(pool, bot_id, slot, banner, users[:3], parse_address(shop["address"]), now)
    orders = []
    for user, product, material in (
        (users[3], slot, CHANNEL),
        (users[4], post, {"post": {"text": "Our new channel: films every night", "buttons": []}}),
        (users[5], banner, BANNER),
        (users[6], slot, CHANNEL),
        (users[7], banner, BANNER),
        (users[3], post, {"post": {"text": "Big sale this week", "buttons": []}}),
        (users[4], banner, BANNER),
    ):
        order_id = await pool.fetchval(LIVE_ORDER, product["id"], user, material, now)
        await pool.execute(STEP, order_id, now, "submitted", f"tg:{user}", {})
        orders.append(order_id)
    # The first stays submitted: the owner's to review.
    _waiting, change, due, part, full, rejected, cancelled = orders
    base = "/shop/orders"
    await api.call("POST", f"{base}/{change}/ask-change", {"reason": "Please add a link"})
    await api.call("POST", f"{base}/{rejected}/reject", {"reason": "Not for this audience"})
    await api.call("POST", f"{base}/{cancelled}/cancel", {"reason": "The advertiser asked"})
    approved = {}
    for order_id in (due, part, full):
        approved[order_id] = await api.call("POST", f"{base}/{order_id}/approve")
    # A part payment is never its order's exact amount: it waits for the owner (the panel's
    # Transfers page shows it), then the paid one is the exact amount asked.
    half = await sim.tron_usdt(payer["address"], shop["address"], "7", solidify="now")
    await api.call("POST", f"{base}/{part}/payments", {"tx_hash": half["hash"]})
    exact = approved[full]["due_usdt"]
    whole = await sim.tron_usdt(payer["address"], shop["address"], exact, solidify="now")
    await api.call("POST", f"{base}/{full}/payments", {"tx_hash": whole["hash"]})
    log.info("shop: %d products, %d live orders", len(made), len(orders))


async def _history(
    pool: asyncpg.Pool,
    bot_id: int,
    slot: dict[str, Any],
    banner: dict[str, Any],
    users: list[int],
    address: bytes,
    now: datetime,
) -> None:
    """Orders that finished earlier in the month: completed, expired (paid in part),
    refunded."""
    owner = await pool.fetchrow(OWNER)
    approver = f"panel:{owner['id']}"
    audited = Actor(int(owner["id"]), f"{owner['name']} <{owner['email']}>", None)
    rows: list[tuple[Any, ...]] = [
        (slot, users[0], CHANNEL, "completed", 25, 20, {"joins": 512}),
        (banner, users[1], BANNER, "expired", 5, 12, None),
        (banner, users[2], BANNER, "refunded", 15, 8, None),
    ]
    for product, user, material, state, paid, days_ago, report in rows:
        approved = now - timedelta(days=days_ago)
        paid_at = approved + timedelta(minutes=40)
        started = approved + timedelta(hours=2) if state == "completed" else None
        ended = approved + timedelta(days=6) if state == "completed" else None
        order_id = await pool.fetchval(
            ORDER,
            bot_id,
            product["id"],
            product["kind"],
            product["title"],
            product.get("joins"),
            product.get("days"),
            user,
            "Advertiser",
            "fa",
            material,
            product["price_usdt"],
            state,
            "Refunded by bank transfer" if state == "refunded" else None,
            address,
            approved,
            paid,
            started,
            None,
            ended,
            report,
            approved - timedelta(hours=1),
        )
        tx_hash = hashlib.sha256(f"demo order {order_id}".encode()).hexdigest()
        amount = Decimal(paid)
        await pool.execute(TRANSFER, tx_hash, amount, PAYER, address, paid_at, bot_id, order_id)
        await pool.execute(PAYMENT, order_id, bot_id, tx_hash, amount, PAYER, address, paid_at)
        credit = {
            "hash": tx_hash,
            "coin": "USDT",
            "amount": str(amount),
            "credited_usdt": str(amount),
            "matched_by": "hash",
        }
        steps: list[tuple[str, datetime, str, dict[str, Any]]] = [
            ("submitted", approved - timedelta(hours=1), f"tg:{user}", {}),
            ("approved", approved, approver, {}),
            ("hash_submitted", paid_at, f"tg:{user}", {"hash": tx_hash}),
            ("payment_credited", paid_at, "system", credit),
        ]
        if amount >= Decimal(product["price_usdt"]):
            steps.append(("paid", paid_at, "system", {}))
        if started is not None:
            steps.append(("started", started, "system", {}))
        closing = {"refunded": approver}.get(state, "system")
        steps.append((state, ended or approved + timedelta(days=1), closing, report or {}))
        for kind, at, actor, data in steps:
            await pool.execute(STEP, order_id, at, kind, actor, data)
        # The owner's moves are in the audit log as the panel writes them.
        target = f"order:{order_id}"
        after = {"state": "awaiting_payment", "usdt_per_trx": "0.25", "rate_source": "coingecko"}
        await record(
            pool, approved, audited, "shop.order_approved", target, {"state": "submitted"}, after
        )
        if state == "refunded":
            await record(
                pool,
                approved + timedelta(days=1),
                audited,
                "shop.order_refunded",
                target,
                {"state": "paid"},
                {"state": "refunded", "reason": "Refunded by bank transfer"},
            )
