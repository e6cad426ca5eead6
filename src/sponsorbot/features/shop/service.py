"""The owner's side of the shop: its settings, its products, the orders and what can be done
with them (approve, reject, ask for a change, cancel, mark paid, mark refunded).

Every change of an order and the message it means for the advertiser commit together (the
message is an outbox row), and every step goes into the order's timeline.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import segno

from sponsorbot.config import TronNetwork
from sponsorbot.engine import conversation
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.token_box import TokenBox, TokenError, tail
from sponsorbot.features.errors import Conflict, Invalid, NotFound
from sponsorbot.features.service import OwnerService
from sponsorbot.features.shop import ledger, notices, queries
from sponsorbot.features.shop.ledger import enqueue, lock_order, log_step
from sponsorbot.features.shop.orders import (
    Attention,
    Order,
    OrderPage,
    Payment,
    PaymentPage,
    Step,
    Stuck,
    base58,
)
from sponsorbot.features.shop.products import Product, ProductDraft, check_product
from sponsorbot.features.shop.rules import (
    PAYMENT_STATUSES,
    STATES,
    TRANSFER_STATES,
    can,
)
from sponsorbot.features.shop.settings import CALLS_PER_HOUR, ShopConfig, ShopSettings
from sponsorbot.features.shop.transfers import Claim, Transfer, TransferPage
from sponsorbot.features.texts import render
from sponsorbot.telegram import TelegramError
from sponsorbot.tron.address import AddressError, parse_address, to_base58
from sponsorbot.tron.networks import HashError, parse_hash
from sponsorbot.tron.prices import PriceSources, PriceUnavailable

log = logging.getLogger(__name__)

RESEAL_SELECT = "SELECT bot_id, api_key FROM shop_settings WHERE api_key IS NOT NULL"
# The QR code goes after the payment request that explains it: the request is queued (the
# sender delivers it within moments), the photo is sent straight away, so it waits for the
# queue to reach that chat, a few seconds at most (a stalled sender must not hold it).
QUEUED_FOR_CHAT = """
SELECT EXISTS (SELECT 1 FROM outbox WHERE bot_id = $1 AND chat_id = $2 AND status = 'pending')
"""
QR_WAITS_S = 3.0
QR_POLL_S = 0.05
RESEAL_UPDATE = "UPDATE shop_settings SET api_key = $2 WHERE bot_id = $1 AND api_key = $3"


async def reseal_keys(pool: asyncpg.Pool, box: TokenBox) -> int:
    """Seal every shop's TronGrid key with the newest installation key; how many moved."""
    moved = 0
    for row in await pool.fetch(RESEAL_SELECT):
        old = bytes(row["api_key"])
        new = box.reseal(old)
        if new != old:
            status = await pool.execute(RESEAL_UPDATE, row["bot_id"], new, old)
            moved += int(status.rsplit(" ", 1)[-1])
    return moved


MAX_REASON = 500
PAGE = 50
MAX_PAGE = 200
# A paid order whose ad is not out after this long is shown to the owner (the clock keeps
# trying meanwhile).
STUCK_AFTER = timedelta(minutes=10)
# Orders the owner may credit a transfer to: waiting for payment, or expired with a payment
# that came late.
ASSIGNABLE = ("awaiting_payment", "partly_paid", "expired")
# How long an advertiser asked for a change has to send it.
CHANGE_TTL_S = 7 * 24 * 3600.0


def check_reason(reason: str, required: bool = True) -> str | None:
    """A reason given to the advertiser: trimmed, bounded, required where it explains a no."""
    reason = reason.strip()
    if not reason:
        if required:
            raise Invalid("give the advertiser a reason", code="reason")
        return None
    if len(reason) > MAX_REASON:
        raise Invalid(f"the reason is at most {MAX_REASON} characters", code="reason")
    return reason


@dataclass(eq=False, repr=False)
class ShopService(OwnerService):
    """Everything the panel and the owner API do with the shop."""

    box: TokenBox
    prices: Callable[[], PriceSources]
    notifier: Notifier
    # SPONSORBOT_TRON_NETWORK: what a shop that was never set up shows.
    network: str = "mainnet"
    # SPONSORBOT_ALLOW_TESTNET: whether a shop may be set to Nile or Shasta.
    allow_testnet: bool = False
    # Bots whose stored TronGrid key no installation key opens, already logged once.
    _unreadable_logged: set[int] = field(default_factory=set, init=False)

    def clock(self) -> datetime:
        """Now (a method, so a test could move it)."""
        return datetime.now(UTC)

    # Settings

    async def settings(self, bot_id: int) -> ShopSettings:
        """The bot's shop settings (a shop never set up: closed, on the server's network)."""
        await self.bots.get(bot_id)
        row = await self.pool.fetchrow(queries.SETTINGS, bot_id)
        if row is None:
            unset = ShopConfig(network=self.network)
            return ShopSettings(
                bot_id=bot_id,
                enabled=unset.enabled,
                network=unset.network,
                address=None,
                accept_usdt=unset.accept_usdt,
                accept_trx=unset.accept_trx,
                api_key_tail=None,
                key_unreadable=False,
                pay_within_h=unset.pay_within_h,
                trongrid_calls=0,
            )
        sealed = bytes(row["api_key"]) if row["api_key"] else None
        key = self._opened(bot_id, sealed) if sealed else None
        return ShopSettings(
            bot_id=bot_id,
            enabled=row["enabled"],
            network=row["network"],
            address=base58(row["address"]),
            accept_usdt=row["accept_usdt"],
            accept_trx=row["accept_trx"],
            api_key_tail=tail(key) if key else None,
            # A key sealed under an installation key that is gone (ADR 0010): the page says so
            # and takes a new one instead of failing.
            key_unreadable=sealed is not None and key is None,
            pay_within_h=row["pay_within_h"],
            trongrid_calls=row["calls"],
        )

    async def spend_calls(self, bot_id: int, calls: int) -> bool:
        """Count TronGrid calls against the shop's hourly budget; False when it is spent (the
        caller waits for the next hour, and the settings page says so)."""
        # Only approved orders are checked, and approving needs the shop's row.
        spent = await self.pool.fetchval(queries.SPEND_CALLS, bot_id, calls, CALLS_PER_HOUR)
        return spent is not None

    async def api_key(self, bot_id: int) -> str | None:
        """The bot's TronGrid key in clear, for the runner's requests only; None when there is
        none or it cannot be opened (the caller then uses the server's key)."""
        row = await self.pool.fetchrow(queries.SETTINGS, bot_id)
        if row is None or row["api_key"] is None:
            return None
        return self._opened(bot_id, bytes(row["api_key"]))

    def _opened(self, bot_id: int, sealed: bytes) -> str | None:
        """The sealed key in clear, or None when no installation key opens it: after a key
        rotation that dropped the old key too early, or a backup restored under another key.
        Said in the log once per bot, not on every payment check."""
        try:
            return self.box.open(sealed)
        except TokenError:
            if bot_id not in self._unreadable_logged:
                self._unreadable_logged.add(bot_id)
                log.warning(
                    "bot %s: its shop's TronGrid key cannot be decrypted with "
                    "SPONSORBOT_SECRET_KEY; the server's key is used until the owner enters "
                    "it again in the panel",
                    bot_id,
                )
            return None

    def check_settings(self, new: ShopConfig) -> bytes | None:
        """Invalid, with a code, for settings that cannot be saved (nothing is stored); else
        the address as bytes. The address must pass its checksum, and a test network needs
        SPONSORBOT_ALLOW_TESTNET. The panel asks this before the owner's password, so a
        mistyped address is said first."""
        if new.network not in {n.value for n in TronNetwork}:
            raise Invalid("the network is mainnet, nile or shasta", code="shop_network")
        if new.network != TronNetwork.MAINNET and not self.allow_testnet:
            # Faucet coins would pay for real ads (docs/adr/0009-payout-owner.md).
            raise Invalid(
                "test networks (nile, shasta) are off: SPONSORBOT_ALLOW_TESTNET is not set",
                code="shop_network",
            )
        address: bytes | None = None
        if new.address.strip():
            try:
                address = parse_address(new.address.strip())
            except AddressError as exc:
                raise Invalid(
                    f"the TRON address is not valid: {exc}", code="shop_address"
                ) from None
        if new.enabled and address is None:
            raise Invalid("the shop needs its TRON address to be on", code="shop_address")
        if not (new.accept_usdt or new.accept_trx):
            raise Invalid("accept USDT, TRX or both", code="shop_coins")
        if not 1 <= new.pay_within_h <= 720:
            raise Invalid("the time to pay is 1 to 720 hours", code="shop_pay_within")
        key = (new.api_key or "").strip()
        if key and (len(key) > 200 or not key.isprintable() or " " in key):
            raise Invalid("the TronGrid API key is not well-formed", code="shop_api_key")
        return address

    async def save_settings(self, bot_id: int, new: ShopConfig) -> ShopSettings:
        """Check (check_settings) and store the settings."""
        await self.bots.get(bot_id)
        address = self.check_settings(new)
        row = await self.pool.fetchrow(queries.SETTINGS, bot_id)
        sealed: bytes | None = bytes(row["api_key"]) if row and row["api_key"] else None
        if new.api_key is not None:
            key = new.api_key.strip()
            sealed = self.box.seal(key) if key else None
            # A key entered again (or removed) is logged afresh if it ever becomes unreadable.
            self._unreadable_logged.discard(bot_id)
        await self.pool.execute(
            queries.SAVE_SETTINGS,
            bot_id,
            new.enabled,
            new.network,
            address,
            new.accept_usdt,
            new.accept_trx,
            sealed,
            new.pay_within_h,
        )
        self.config.invalidate(bot_id)
        return await self.settings(bot_id)

    # Products

    async def products(self, bot_id: int, active_only: bool = False) -> list[Product]:
        """The bot's products, in their order."""
        await self.bots.get(bot_id)
        rows = await self.pool.fetch(queries.PRODUCTS, bot_id, active_only)
        return [Product.of(r) for r in rows]

    async def product(self, bot_id: int, product_id: int) -> Product:
        """One product of the bot."""
        row = await self.pool.fetchrow(queries.PRODUCT, bot_id, product_id)
        if row is None:
            await self.bots.get(bot_id)
            raise NotFound("no such product in this bot")
        return Product.of(row)

    async def create_product(self, bot_id: int, draft: ProductDraft) -> Product:
        """Add a product."""
        await self.bots.get(bot_id)
        product_id = await self.pool.fetchval(queries.INSERT_PRODUCT, bot_id, *check_product(draft))
        return await self.product(bot_id, product_id)

    async def change_product(self, bot_id: int, product_id: int, draft: ProductDraft) -> Product:
        """Change a product (orders keep the title and price they were made with)."""
        fields = check_product(draft)
        done = await self.pool.execute(queries.UPDATE_PRODUCT, bot_id, product_id, *fields)
        if done.endswith(" 0"):
            await self.product(bot_id, product_id)
        return await self.product(bot_id, product_id)

    async def delete_product(self, bot_id: int, product_id: int) -> None:
        """Remove a product (its orders stay, with what they were sold as)."""
        async with ledger.transaction(self.pool) as conn:
            await conn.execute(queries.DETACH_PRODUCT, bot_id, product_id)
            done = await conn.execute(queries.DELETE_PRODUCT, bot_id, product_id)
        if done.endswith(" 0"):
            await self.product(bot_id, product_id)

    # Orders: reading

    async def orders(
        self,
        bot_id: int | None = None,
        state: str | None = None,
        before: int | None = None,
        limit: int = PAGE,
    ) -> OrderPage:
        """A page of orders, newest first, with the count of each state."""
        if state is not None and state not in STATES:
            raise Invalid(f"a state is one of {', '.join(STATES)}", code="order_state")
        if bot_id is not None:
            await self.bots.get(bot_id)
        rows, next_before = await self._keyset(queries.ORDERS, limit, bot_id, state, before)
        counts = await self.pool.fetch(queries.STATE_COUNTS, bot_id)
        return OrderPage(
            items=tuple(Order.of(r) for r in rows),
            next_before=next_before,
            counts={r["state"]: r["n"] for r in counts},
        )

    async def _keyset(
        self, sql: str, limit: int, *args: Any
    ) -> tuple[list[asyncpg.Record], int | None]:
        """A page of `sql`'s rows, newest first (it takes `args`, then how many to read: one
        more than the page, which tells whether another follows), and the id to list below
        for the next page (None on the last)."""
        limit = max(1, min(limit, MAX_PAGE))
        rows = await self.pool.fetch(sql, *args, limit + 1)
        shown = rows[:limit]
        return shown, (int(shown[-1]["id"]) if len(rows) > limit else None)

    async def order(self, order_id: int) -> Order:
        """One order with its payments and its whole timeline."""
        row = await self.pool.fetchrow(queries.ORDER, order_id)
        if row is None:
            raise NotFound("no such order")
        payments = await self.pool.fetch(queries.PAYMENTS_OF_ORDER, order_id)
        timeline = await self.pool.fetch(queries.TIMELINE, order_id)
        return Order.of(
            row,
            payments=tuple(Payment.of(p) for p in payments),
            timeline=tuple(Step(**dict(t)) for t in timeline),
        )

    async def payments(
        self,
        bot_id: int | None = None,
        status: str | None = None,
        before: int | None = None,
        limit: int = PAGE,
    ) -> PaymentPage:
        """A page of submitted hashes with their verdicts, newest first."""
        if status is not None and status not in PAYMENT_STATUSES:
            raise Invalid("a payment is checking, credited or rejected", code="payment_status")
        rows, next_before = await self._keyset(queries.PAYMENTS, limit, bot_id, status, before)
        return PaymentPage(items=tuple(Payment.of(r) for r in rows), next_before=next_before)

    # Orders: the owner's moves

    async def _texts(self, bot_id: int) -> Mapping[str, Mapping[str, str]]:
        return (await self.config.get(bot_id)).texts

    async def _locked(self, conn: asyncpg.Connection, order_id: int, move: str) -> asyncpg.Record:
        row = await lock_order(conn, order_id)
        if row is None:
            raise NotFound("no such order")
        if not can(move, row["state"]):
            raise _wrong_state(row["state"], move)
        return row

    def wake(self, bot_id: int) -> None:
        """Tell the bot's sender that messages are queued."""
        self.notifier.wake(f"outbox:{bot_id}")

    async def approve(self, order_id: int, actor: str) -> Order:
        """Lock the shop's address and the TRX rate, send the payment request and the QR code."""
        row = await self.pool.fetchrow(queries.ORDER, order_id)
        if row is None:
            raise NotFound("no such order")
        if not can("approve", row["state"]):
            raise _wrong_state(row["state"], "approve")
        shop = await self.pool.fetchrow(queries.SETTINGS, row["bot_id"])
        if shop is None or shop["address"] is None:
            raise Conflict("set the shop's TRON address first", code="shop_address")
        rate: Decimal | None = None
        source: str | None = None
        if shop["accept_trx"]:
            try:
                quote = await self.prices().usdt_per_trx()
            except PriceUnavailable as exc:
                raise Conflict(
                    f"no TRX price is available right now ({exc}); approve again in a minute, "
                    "or accept USDT only",
                    code="prices_unavailable",
                ) from None
            rate, source = quote.rate, quote.source
        now = self.clock()
        expires = now + timedelta(hours=shop["pay_within_h"])
        texts = await self._texts(row["bot_id"])
        async with ledger.transaction(self.pool) as conn:
            row = await self._locked(conn, order_id, "approve")
            await conn.execute(
                queries.APPROVE,
                order_id,
                shop["network"],
                shop["address"],
                shop["accept_usdt"],
                shop["accept_trx"],
                now,
                rate,
                source,
                expires,
            )
            row = await conn.fetchrow(queries.ORDER, order_id)
            await ledger.assign_due(conn, row, row["price_usdt"])
            await log_step(conn, order_id, "approved", actor)
            if rate is not None:
                await log_step(
                    conn, order_id, "rate_locked", "system", rate=str(rate), source=source
                )
            row = await conn.fetchrow(queries.ORDER, order_id)
            await enqueue(conn, row["bot_id"], [notices.payment_request(row, texts)])
        self.wake(row["bot_id"])
        await self._send_qr(row, texts)
        return await self.order(order_id)

    async def _send_qr(self, order: Mapping[str, Any], texts: Mapping[str, Any]) -> None:
        """The address as a QR code, sent as a photo; the text request holds it all anyway,
        so a failure here is logged and not the owner's problem."""
        waited = 0.0
        while waited < QR_WAITS_S and await self.pool.fetchval(
            QUEUED_FOR_CHAT, order["bot_id"], order["user_id"]
        ):
            await asyncio.sleep(QR_POLL_S)
            waited += QR_POLL_S
        address = to_base58(bytes(order["address"]))
        png = qr_png(address)
        caption = render(
            "shop_qr_caption", order["language"], texts, order=order["id"], address=address
        )
        try:
            telegram = await self._telegram(order["bot_id"])
            sent = await telegram.call(
                "sendPhoto",
                {"chat_id": order["user_id"], "caption": caption, "parse_mode": "HTML"},
                files={"photo": (f"order-{order['id']}.png", png, "image/png")},
            )
        except TelegramError as exc:
            log.warning("order %s: the QR code was not sent: %s", order["id"], exc.description)
            return
        photos = sent.get("photo") if isinstance(sent, dict) else None
        if photos:
            await self.pool.execute(queries.SET_QR, order["id"], photos[-1].get("file_id"))

    async def reject(self, order_id: int, reason: str, actor: str) -> Order:
        """Turn the order down, telling the advertiser why."""
        why = check_reason(reason)
        await self._move(
            order_id, "reject", "rejected", why, actor, "shop_rejected", "rejected", reason=why
        )
        return await self.order(order_id)

    async def ask_change(self, order_id: int, reason: str, actor: str) -> Order:
        """Send the order back to the advertiser for a change of its material."""
        why = check_reason(reason)
        row = await self._move(
            order_id,
            "ask_change",
            "in_review",
            why,
            actor,
            "shop_change_asked",
            "change_asked",
            reason=why,
        )
        # The advertiser's next message is the new material.
        await self.pool.execute(
            conversation.SET,
            row["bot_id"],
            row["user_id"],
            "shop:material",
            {"order_id": order_id, "product_id": row["product_id"], "kind": row["kind"]},
            CHANGE_TTL_S,
        )
        return await self.order(order_id)

    async def cancel(self, order_id: int, reason: str, actor: str) -> Order:
        """Cancel an order nobody has paid for in full."""
        why = check_reason(reason, required=False)
        await self._move(
            order_id,
            "cancel",
            "cancelled",
            why,
            actor,
            "shop_order_cancelled",
            "cancelled",
            reason=why or "",
        )
        return await self.order(order_id)

    async def mark_refunded(self, order_id: int, reason: str, actor: str) -> Order:
        """Record that the owner gave the money back (by hand: the bot holds no key)."""
        why = check_reason(reason, required=False)
        await self._move(order_id, "refund", "refunded", why, actor, "shop_refunded", "refunded")
        return await self.order(order_id)

    async def mark_paid(self, order_id: int, reason: str, actor: str) -> Order:
        """Count the order as paid without a verified hash (the reason goes on record)."""
        why = check_reason(reason)
        await self._move(order_id, "mark_paid", "paid", why, actor, "shop_paid", "marked_paid")
        return await self.order(order_id)

    async def _move(
        self,
        order_id: int,
        move: str,
        to: str,
        note: str | None,
        actor: str,
        key: str,
        step: str,
        **values: Any,
    ) -> asyncpg.Record:
        """Move the order, log the step and tell the advertiser (`key`), in one commit."""
        async with ledger.transaction(self.pool) as conn:
            row = await self._locked(conn, order_id, move)
            texts = await self._texts(row["bot_id"])
            await conn.execute(queries.SET_STATE, order_id, to, note)
            await log_step(conn, order_id, step, actor, reason=note)
            await enqueue(conn, row["bot_id"], [notices.say(row, key, texts, **values)])
        self.wake(row["bot_id"])
        return row

    async def add_hash(self, order_id: int, text: str, actor: str) -> Order:
        """Check a hash for the advertiser (they sent it some other way)."""
        try:
            tx_hash = parse_hash(text)
        except HashError as exc:
            raise Invalid(str(exc), code="tx_hash") from None
        async with ledger.transaction(self.pool) as conn:
            row = await lock_order(conn, order_id)
            if row is None:
                raise NotFound("no such order")
            if row["state"] not in ("awaiting_payment", "partly_paid"):
                raise Conflict("this order is not waiting for a payment", code="order_state")
            made = await conn.fetchval(
                queries.INSERT_PAYMENT, order_id, row["bot_id"], tx_hash, "panel"
            )
            if made is None:
                raise Conflict(
                    "this hash is already being checked for this order", code="tx_hash_known"
                )
            await log_step(conn, order_id, "hash_submitted", actor, hash=tx_hash)
        return await self.order(order_id)

    async def attention(self) -> Attention:
        """What the owner should look at: orders paid or running for a while with no ad out,
        and how many transfers wait to be assigned."""
        stuck = await self.pool.fetch(queries.STUCK, STUCK_AFTER.total_seconds())
        waiting = await self.pool.fetchval(queries.WAITING_TRANSFERS)
        return Attention(
            stuck=tuple(Stuck(**dict(r)) for r in stuck), waiting_transfers=int(waiting)
        )

    # Transfers: what the chain brought in, and the owner's decisions on what matched no order

    async def transfers(
        self, state: str | None = None, before: int | None = None, limit: int = PAGE
    ) -> TransferPage:
        """A page of transfers seen, newest first, each with the orders that claimed it."""
        if state is not None and state not in TRANSFER_STATES:
            raise Invalid(f"a transfer is {', '.join(TRANSFER_STATES)}", code="transfer_state")
        rows, next_before = await self._keyset(queries.TRANSFERS, limit, state, before)
        return TransferPage(items=await self._with_claims(rows), next_before=next_before)

    async def transfer(self, transfer_id: int) -> Transfer:
        """One transfer with its claims."""
        row = await self.pool.fetchrow(queries.TRANSFER, transfer_id)
        if row is None:
            raise NotFound("no such transfer")
        return (await self._with_claims([row]))[0]

    async def _with_claims(self, rows: list[asyncpg.Record]) -> tuple[Transfer, ...]:
        """The transfers, each with its claims (read in one statement for all)."""
        claims: dict[str, list[Claim]] = {r["tx_hash"]: [] for r in rows}
        if rows:
            for c in await self.pool.fetch(queries.CLAIMS, list(claims)):
                claims[c["tx_hash"]].append(Claim.of(c["claim"]))
        return tuple(Transfer.of(r, tuple(claims[r["tx_hash"]])) for r in rows)

    async def assign_transfer(self, transfer_id: int, order_id: int, actor: str) -> Transfer:
        """Credit a transfer that waits for the owner to an order of the same address (a part
        payment, an over-payment, an amount two orders shared)."""
        async with ledger.transaction(self.pool) as conn:
            transfer = await conn.fetchrow(ledger.LOCK_BY_ID, transfer_id)
            if transfer is None:
                raise NotFound("no such transfer")
            if transfer["state"] != "unattributed":
                raise Conflict(
                    f"this transfer is {transfer['state']}, not waiting", code="transfer_state"
                )
            order = await lock_order(conn, order_id)
            if order is None:
                raise NotFound("no such order")
            if (order["network"], order["address"]) != (
                transfer["network"],
                transfer["to_address"],
            ):
                raise Conflict(
                    "this transfer went to another address or network than the order's",
                    code="transfer_address",
                )
            if order["state"] not in ASSIGNABLE:
                raise _wrong_state(order["state"], "credit")
            texts = await self._texts(order["bot_id"])
            made = await ledger.credit(conn, transfer, order, "owner", actor, self.clock(), texts)
            await enqueue(conn, order["bot_id"], made.messages)
        self.wake(order["bot_id"])
        return await self.transfer(transfer_id)

    async def return_transfer(self, transfer_id: int, note: str, actor: str) -> Transfer:
        """Record that a transfer that waits for the owner was sent back (by hand)."""
        why = check_reason(note, required=False)
        done = await self.pool.fetchval(queries.RETURN_TRANSFER, transfer_id, why, actor)
        if done is None:
            row = await self.transfer(transfer_id)
            raise Conflict(f"this transfer is {row.state}, not waiting", code="transfer_state")
        return await self.transfer(transfer_id)

    async def requeue(self, payment_id: int, actor: str) -> Order:
        """Check a turned-down hash again (the network saw it late, TronGrid was down)."""
        row = await self.pool.fetchrow(queries.PAYMENT_BY_ID, payment_id)
        if row is None:
            raise NotFound("no such payment")
        async with ledger.transaction(self.pool) as conn:
            done = await conn.fetchval(queries.REQUEUE, row["bot_id"], payment_id)
            if done is None:
                raise Conflict("only a turned-down hash can be checked again", code="payment")
            await log_step(conn, row["order_id"], "hash_requeued", actor, hash=row["tx_hash"])
        return await self.order(row["order_id"])


def _wrong_state(state: str, move: str) -> Conflict:
    """The 409 for a move the order's state does not allow."""
    return Conflict(
        f"an order that is {state.replace('_', ' ')} cannot be "
        f"{move.replace('_', ' ')}{'d' if move.endswith('e') else 'ed'}",
        code="order_state",
        state=state,
    )


def qr_png(address: str) -> bytes:
    """The address as a QR code (PNG), large enough to scan from a phone's screen."""
    buffer = io.BytesIO()
    segno.make(address, error="m").save(buffer, kind="png", scale=10, border=4)
    return buffer.getvalue()
