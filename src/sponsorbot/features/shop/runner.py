"""The shop's periodic work, once in the cluster (the scheduler's lease):

- the verification runner checks submitted hashes on TronGrid every few seconds and settles
  each one (credit, reject, or wait up to 15 minutes), the order's state moving with it;
- the clock expires unpaid orders, reminds part payers, starts paid ads and finishes ended ones.

TronGrid is only ever asked outside a transaction; what it said is written in one short
transaction per hash, with the advertiser's message as an outbox row in the same commit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import aiohttp
import asyncpg

from sponsorbot.config import Settings, TronNetwork
from sponsorbot.features.errors import FeatureError
from sponsorbot.features.shop import notices, queries
from sponsorbot.features.shop.fulfil import Fulfilment
from sponsorbot.features.shop.rules import PAYABLE, after_credit, can, reminders_due, show
from sponsorbot.features.shop.service import ShopService, enqueue, log_step
from sponsorbot.features.texts import render
from sponsorbot.telegram import TelegramError
from sponsorbot.tron.address import to_base58
from sponsorbot.tron.check import verify_hash
from sponsorbot.tron.client import TronGridError
from sponsorbot.tron.verifier import Verdict

log = logging.getLogger(__name__)

# Unknown or unconfirmed hashes are checked again for this long, then turned down.
WAIT_LIMIT = timedelta(minutes=15)
BATCH = 20
PARALLEL = 4


def next_check(checks: int, now: datetime, failed: bool) -> datetime:
    """When to ask again: soon while a payer waits, backing off when TronGrid itself fails."""
    if failed:
        return now + timedelta(seconds=min(5 * 2 ** min(checks, 6), 120))
    return now + timedelta(seconds=3 if checks < 10 else 10)


class ShopRunner:
    """The verification runner and the shop's clock."""

    def __init__(
        self,
        shop: ShopService,
        fulfil: Fulfilment,
        settings: Settings,
        session: Callable[[], aiohttp.ClientSession],
    ) -> None:
        self.shop = shop
        self.fulfil = fulfil
        self.settings = settings
        self.session = session
        # A start that failed (a channel right missing, Telegram down) is tried again later.
        self._start_after: dict[int, datetime] = {}

    @property
    def pool(self) -> asyncpg.Pool:
        """The shop's database."""
        return self.shop.pool

    async def tick(self, _pool: asyncpg.Pool) -> None:
        """One round: check due hashes, then move the clock."""
        await self.check_payments()
        await self.clock()

    # The verification runner

    async def check_payments(self) -> None:
        """Check every hash that is due, a few at a time."""
        due = await self.pool.fetch(queries.DUE_PAYMENTS, BATCH)
        gate = asyncio.Semaphore(PARALLEL)

        async def one(payment: asyncpg.Record) -> None:
            async with gate:
                try:
                    await self._check(payment)
                except (OSError, asyncpg.PostgresError):
                    log.exception("payment %s: the check failed; it is tried again", payment["id"])

        await asyncio.gather(*(one(p) for p in due))

    async def _check(self, payment: asyncpg.Record) -> None:
        order = await self.pool.fetchrow(queries.ORDER, payment["order_id"])
        if order is None or order["address"] is None or order["approved_at"] is None:
            return
        key = await self.shop.api_key(order["bot_id"])
        if key is None and self.settings.trongrid_api_key is not None:
            key = self.settings.trongrid_api_key.get_secret_value()
        now = self.shop.clock()
        try:
            verdict = await verify_hash(
                self.session(),
                self.settings.trongrid_url_for(TronNetwork(order["network"])),
                key,
                payment["tx_hash"],
                TronNetwork(order["network"]),
                to_base58(bytes(order["address"])),
                order["approved_at"],
                order["usdt_per_trx"] if order["accept_trx"] else None,
                accept_trx=bool(order["accept_trx"]),
            )
        except TronGridError as exc:
            # Not the payer's fault: the order keeps its state and the hash is asked again.
            at = next_check(payment["checks"], now, failed=True)
            await self.pool.execute(queries.PAYMENT_RETRY, payment["id"], str(exc), at)
            log.warning("payment %s: TronGrid: %s", payment["id"], exc)
            return
        await self._settle(payment, verdict, now)

    async def _settle(self, payment: asyncpg.Record, verdict: Verdict, now: datetime) -> None:
        bot_id = payment["bot_id"]
        texts = (await self.shop.config.get(bot_id)).texts
        async with self.pool.acquire() as conn, conn.transaction():
            order = await conn.fetchrow(queries.ORDER_FOR_UPDATE, payment["order_id"])
            if verdict.verdict == "wait":
                await self._wait(conn, payment, order, verdict, now, texts)
            elif verdict.verdict == "reject":
                await self._reject(conn, payment, order, verdict.reason or "failed", verdict, texts)
            else:
                await self._credit(conn, payment, order, verdict, now, texts)
        self.shop.wake(bot_id)

    async def _wait(
        self,
        conn: asyncpg.Connection,
        payment: asyncpg.Record,
        order: asyncpg.Record,
        verdict: Verdict,
        now: datetime,
        texts: Mapping[str, Any],
    ) -> None:
        reason = verdict.reason or "unknown"
        if now - payment["submitted_at"] > WAIT_LIMIT:
            await self._reject(conn, payment, order, reason, verdict, texts)
            return
        seen = f"waiting: {reason}"
        at = next_check(payment["checks"], now, failed=False)
        await conn.execute(queries.PAYMENT_RETRY, payment["id"], seen, at)
        if reason == "unconfirmed" and payment["last_error"] != seen:
            out = notices.say(
                order, "shop_unconfirmed", texts, hash=notices.short(payment["tx_hash"])
            )
            await enqueue(conn, order["bot_id"], [out])
            await log_step(
                conn, order["id"], "payment_unconfirmed", "system", hash=payment["tx_hash"]
            )

    async def _reject(
        self,
        conn: asyncpg.Connection,
        payment: asyncpg.Record,
        order: asyncpg.Record,
        reason: str,
        verdict: Verdict,
        texts: Mapping[str, Any],
    ) -> None:
        await _decide(conn, payment, "rejected", reason, verdict, None)
        await log_step(
            conn, order["id"], "payment_rejected", "system", hash=payment["tx_hash"], reason=reason
        )
        facts = {"to": verdict.to, "block_time": verdict.block_time}
        await enqueue(
            conn,
            order["bot_id"],
            [notices.refusal(order, payment["tx_hash"], reason, facts, texts)],
        )

    async def _credit(
        self,
        conn: asyncpg.Connection,
        payment: asyncpg.Record,
        order: asyncpg.Record,
        verdict: Verdict,
        now: datetime,
        texts: Mapping[str, Any],
    ) -> None:
        credit = verdict.credited_usdt
        elsewhere = await conn.fetchval(queries.CREDITED_ELSEWHERE, payment["tx_hash"], order["id"])
        if credit is None or elsewhere is not None:
            await self._reject(conn, payment, order, "already_used", verdict, texts)
            return
        try:
            async with conn.transaction():
                await _decide(conn, payment, "credited", None, verdict, credit)
        except asyncpg.UniqueViolationError:
            # Another order's credit of the same hash committed first: the index decides.
            await self._reject(conn, payment, order, "already_used", verdict, texts)
            return
        in_time = order["state"] in PAYABLE or (
            order["state"] == "expired" and payment["submitted_at"] <= _deadline(order)
        )
        state = order["state"]
        paid = after_credit(
            state, order["price_usdt"], order["paid_usdt"], credit, order["due_at"], now
        )
        if in_time:
            state = paid.state
        await conn.execute(queries.CREDIT_ORDER, order["id"], paid.paid, state, paid.due_at)
        await log_step(
            conn,
            order["id"],
            "payment_credited",
            "system",
            hash=payment["tx_hash"],
            coin=verdict.coin,
            amount=str(verdict.amount),
            credited_usdt=str(credit),
        )
        updated = await conn.fetchrow(queries.ORDER, order["id"])
        out = [
            notices.say(
                updated,
                "shop_credited",
                texts,
                amount=show(verdict.amount or Decimal(0)),
                coin=verdict.coin,
                credited=show(credit),
                paid=show(paid.paid),
                price=show(order["price_usdt"]),
            )
        ]
        if in_time and state == "paid":
            await log_step(conn, order["id"], "paid", "system")
            out.append(notices.say(updated, "shop_paid", texts))
            if paid.extra > 0:
                out.append(notices.say(updated, "shop_overpaid", texts, extra=show(paid.extra)))
        elif in_time:
            out.append(notices.still_due(updated, texts))
        await enqueue(conn, order["bot_id"], out)

    # The clock

    async def clock(self) -> None:
        """Expire, remind, start and finish, in that order."""
        now = self.shop.clock()
        for order_id in [r["id"] for r in await self.pool.fetch(queries.TO_EXPIRE)]:
            await self._expire(order_id, now)
        for order_id in [r["id"] for r in await self.pool.fetch(queries.TO_REMIND)]:
            await self._remind(order_id, now)
        for order_id in [r["id"] for r in await self.pool.fetch(queries.TO_START)]:
            if self._start_after.get(order_id, now) <= now:
                await self._start(order_id, now)
        for row in await self.pool.fetch(queries.RUNNING):
            if await self.fulfil.finished(row, now):
                await self._complete(row["id"], now)

    async def _expire(self, order_id: int, now: datetime) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            order = await conn.fetchrow(queries.ORDER_FOR_UPDATE, order_id)
            if order is None or not can("expire", order["state"]) or _deadline(order) > now:
                return
            texts = (await self.shop.config.get(order["bot_id"])).texts
            await conn.execute(queries.SET_STATE, order_id, "expired", None)
            await log_step(conn, order_id, "expired", "system", paid_usdt=str(order["paid_usdt"]))
            paid = ""
            if order["paid_usdt"] > 0:
                paid = render(
                    "shop_expired_paid", order["language"], texts, paid=show(order["paid_usdt"])
                )
            out = notices.say(order, "shop_expired", texts, paid=paid)
            await enqueue(conn, order["bot_id"], [out])
        self.shop.wake(order["bot_id"])

    async def _remind(self, order_id: int, now: datetime) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            order = await conn.fetchrow(queries.ORDER_FOR_UPDATE, order_id)
            if order is None or order["state"] != "partly_paid" or order["due_at"] is None:
                return
            due = reminders_due(order["due_at"], order["reminded"], now)
            if due <= order["reminded"]:
                return
            texts = (await self.shop.config.get(order["bot_id"])).texts
            await conn.execute(queries.REMINDED, order_id, due)
            await log_step(conn, order_id, "reminder", "system", number=due)
            await enqueue(
                conn, order["bot_id"], [notices.still_due(order, texts, key="shop_reminder")]
            )
        self.shop.wake(order["bot_id"])

    async def _start(self, order_id: int, now: datetime) -> None:
        order = await self.pool.fetchrow(queries.ORDER, order_id)
        if order is None or order["state"] != "paid":
            return
        try:
            made = await self.fulfil.start(order, now)
        except (FeatureError, TelegramError) as exc:
            self._start_after[order_id] = now + timedelta(minutes=1)
            message = exc.message if isinstance(exc, FeatureError) else exc.description
            async with self.pool.acquire() as conn:
                await log_step(conn, order_id, "start_failed", "system", error=message)
            log.warning("order %s: the ad did not start: %s", order_id, message)
            return
        self._start_after.pop(order_id, None)
        texts = (await self.shop.config.get(order["bot_id"])).texts
        async with self.pool.acquire() as conn, conn.transaction():
            done = await conn.execute(
                queries.STARTED, order_id, now, made.campaign_id, made.broadcast_id, made.ends_at
            )
            if done.endswith(" 0"):
                return
            await log_step(
                conn,
                order_id,
                "started",
                "system",
                campaign_id=made.campaign_id,
                broadcast_id=made.broadcast_id,
            )
            await enqueue(conn, order["bot_id"], [notices.say(order, "shop_started", texts)])
        self.shop.config.invalidate(order["bot_id"])
        self.shop.wake(order["bot_id"])

    async def _complete(self, order_id: int, now: datetime) -> None:
        order = await self.pool.fetchrow(queries.ORDER, order_id)
        if order is None or order["state"] != "running":
            return
        report = await self.fulfil.report(order, now)
        texts = (await self.shop.config.get(order["bot_id"])).texts
        async with self.pool.acquire() as conn, conn.transaction():
            done = await conn.execute(queries.COMPLETED, order_id, now, report)
            if done.endswith(" 0"):
                return
            await log_step(conn, order_id, "completed", "system", **report)
            key = f"shop_report_{order['kind']}"
            await enqueue(conn, order["bot_id"], [notices.say(order, key, texts, **report)])
        self.shop.config.invalidate(order["bot_id"])
        self.shop.wake(order["bot_id"])


async def _decide(
    conn: asyncpg.Connection,
    payment: Mapping[str, Any],
    status: str,
    reason: str | None,
    verdict: Verdict,
    credit: Decimal | None,
) -> None:
    """Record the hash's verdict with what the chain showed."""
    await conn.execute(
        queries.PAYMENT_DECIDED,
        payment["id"],
        status,
        reason,
        verdict.coin,
        verdict.amount,
        verdict.from_,
        verdict.to,
        credit,
        verdict.block_time,
    )


def _deadline(order: Mapping[str, Any]) -> datetime:
    """Until when an order may be paid: the part-payment window once one came in."""
    if order["due_at"] is not None:
        return order["due_at"]  # type: ignore[no-any-return]
    return order["expires_at"] or datetime.max.replace(tzinfo=UTC)
