"""The shop's periodic work (docs/shop-payments.md):

- the verification runner claims submitted hashes, checks them on TronGrid every few seconds
  and settles each one: a real transfer to the shop is recorded once and credited to the order
  whose exact amount it is, or held for the owner; a bad one is turned down with its reason;
- the clock expires unpaid orders, reminds part payers, starts paid ads and finishes ended ones.

The scheduler's lease makes one worker run it at a time, but a lease can run out under a slow
TronGrid: every hash and every start is claimed in the database, so an overlap does no harm.

TronGrid is only ever asked outside a transaction; what it said is written in one short
transaction per hash, with the advertiser's message as an outbox row in the same commit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import aiohttp
import asyncpg

from sponsorbot.config import Settings, TronNetwork
from sponsorbot.db.pool import on_citus
from sponsorbot.features.errors import FeatureError
from sponsorbot.features.shop import ledger, notices, queries
from sponsorbot.features.shop.fulfil import Fulfilment
from sponsorbot.features.shop.ledger import enqueue, lock_order, log_step
from sponsorbot.features.shop.rules import PAYABLE, RATE_KEPT, can, reminders_due, show
from sponsorbot.features.shop.service import ShopService
from sponsorbot.features.texts import render
from sponsorbot.telegram import TelegramError
from sponsorbot.tron.address import to_base58
from sponsorbot.tron.check import verify_hash
from sponsorbot.tron.client import TronGridError
from sponsorbot.tron.prices import PriceUnavailable
from sponsorbot.tron.verifier import Verdict

log = logging.getLogger(__name__)

# Unknown or unconfirmed hashes are checked again for this long, then turned down.
WAIT_LIMIT = timedelta(minutes=15)
# TronGrid failing (a refused key, an outage) is retried this long, then the hash is turned
# down as `lookup_failed` and the owner sees why in its last error.
LOOKUP_LIMIT = timedelta(hours=24)
# How long a worker holds the hashes it took for checking; a dead worker's come back after it.
CHECK_CLAIM_S = 60.0
# An order is not expired while a hash is being checked, but never for longer than this.
EXPIRY_GRACE_S = (WAIT_LIMIT + timedelta(minutes=5)).total_seconds()
BATCH = 20
PARALLEL = 4
# A check asks TronGrid twice (the transaction, then its solidified info).
CALLS_PER_CHECK = 2
BUDGET_SPENT = "the shop's TronGrid budget for this hour is spent"


def next_check(checks: int, now: datetime, failed: bool) -> datetime:
    """When to ask again: soon while a payer waits, backing off when TronGrid itself fails."""
    if failed:
        return now + timedelta(seconds=min(5 * 2 ** min(checks, 6), 120))
    return now + timedelta(seconds=3 if checks < 10 else 10)


async def trongrid_key(shop: ShopService, settings: Settings, bot_id: int) -> str | None:
    """The key for a shop's TronGrid calls: its own, else the server's, else none."""
    key = await shop.api_key(bot_id)
    if key is None and settings.trongrid_api_key is not None:
        key = settings.trongrid_api_key.get_secret_value()
    return key


# When TronGrid last refused a shop's key (noted every ten minutes at most): the team is told
# while it was within the hour (features/alerts).
KEY_REFUSED = """
UPDATE shop_settings SET key_refused_at = now()
WHERE bot_id = $1 AND (key_refused_at IS NULL OR key_refused_at < now() - interval '10 minutes')
"""


async def key_refused(pool: asyncpg.Pool, bot_id: int, exc: TronGridError) -> None:
    """Note a refused API key (401/403) for the team; other TronGrid failures are not the key."""
    if exc.kind == "unauthorized":
        await pool.execute(KEY_REFUSED, bot_id)


def start_backoff(tries: int) -> timedelta:
    """When a failed start is tried again: 1, 5 and 30 minutes, then hourly."""
    return timedelta(minutes=(1, 5, 30)[tries - 1] if tries <= 3 else 60)


# A dataclass so that each job declares only what it adds; eq=False keeps identity, and
# repr=False keeps the settings (the database URL among them) out of any repr.
@dataclass(eq=False, repr=False)
class TronGridJob:
    """What the shop's two periodic TronGrid jobs (the runner here, the watcher) share: the
    shop, how to reach TronGrid, and whether the database is a Citus coordinator."""

    shop: ShopService
    settings: Settings
    session: Callable[[], aiohttp.ClientSession]
    # Whether the database is a Citus coordinator (db/pool.on_citus), asked at the first
    # tick: the claims and the candidates' lock take their Citus forms there.
    citus: bool | None = field(default=None, init=False)

    @property
    def pool(self) -> asyncpg.Pool:
        """The shop's database."""
        return self.shop.pool

    async def _ask_citus(self) -> None:
        """Learn, once, whether the database is a Citus coordinator."""
        if self.citus is None:
            self.citus = await on_citus(self.pool)


@dataclass(eq=False, repr=False)
class ShopRunner(TronGridJob):
    """The verification runner and the shop's clock. Two workers may run it at once (a job's
    lease can run out under a slow TronGrid): every hash and every start is claimed first."""

    fulfil: Fulfilment

    async def tick(self, _pool: asyncpg.Pool) -> None:
        """One round: check due hashes, then move the clock (even if the checks failed)."""
        await self._ask_citus()
        try:
            await self.check_payments()
        finally:
            await self.clock()

    # The verification runner

    async def check_payments(self) -> None:
        """Claim the hashes that are due and check them, a few at a time."""
        claim = queries.CLAIM_DUE_CITUS if self.citus else queries.CLAIM_DUE
        due = await self.pool.fetch(claim, BATCH, CHECK_CLAIM_S)
        gate = asyncio.Semaphore(PARALLEL)

        async def one(payment: asyncpg.Record) -> None:
            async with gate:
                try:
                    await self._check(payment)
                except Exception:
                    # One hash's trouble (a database error, a surprise) is not the others':
                    # its claim runs out and it is checked again.
                    log.exception("payment %s: the check failed; it is tried again", payment["id"])

        await asyncio.gather(*(one(p) for p in due))

    async def _check(self, payment: asyncpg.Record) -> None:
        order = await self.pool.fetchrow(queries.ORDER, payment["order_id"])
        if order is None or order["address"] is None or order["approved_at"] is None:
            return
        if not await self.shop.spend_calls(order["bot_id"], CALLS_PER_CHECK):
            # The shop's hourly TronGrid budget is spent: checked again next hour, not failed.
            later = await self.pool.fetchval(queries.NEXT_HOUR)
            await self.pool.execute(queries.PAYMENT_WAIT, payment["id"], BUDGET_SPENT, later)
            return
        key = await trongrid_key(self.shop, self.settings, order["bot_id"])
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
                # What a TRX transfer is worth comes from the order it pays (ledger.value_of).
                None,
                accept_trx=bool(order["accept_trx"]),
            )
        except TronGridError as exc:
            # Not the payer's fault: the order keeps its state and the hash is asked again,
            # for a bounded time.
            log.warning("payment %s: TronGrid: %s", payment["id"], exc)
            await key_refused(self.pool, order["bot_id"], exc)
            if now - payment["submitted_at"] > LOOKUP_LIMIT:
                await self._settle(payment, Verdict("reject", "lookup_failed"), now, str(exc))
                return
            at = next_check(payment["checks"], now, failed=True)
            await self.pool.execute(queries.PAYMENT_RETRY, payment["id"], str(exc), at)
            return
        await self._settle(payment, verdict, now)

    async def _settle(
        self, payment: asyncpg.Record, verdict: Verdict, now: datetime, error: str | None = None
    ) -> None:
        texts = (await self.shop.config.get(payment["bot_id"])).texts
        woken = {payment["bot_id"]}
        async with ledger.transaction(self.pool) as conn:
            claim = await conn.fetchrow(queries.PAYMENT_LOCK, payment["id"], payment["bot_id"])
            if claim is None or claim["status"] != "checking":
                return  # another worker settled it meanwhile
            order = await conn.fetchrow(queries.ORDER, claim["order_id"])
            if verdict.verdict == "wait":
                await self._wait(conn, claim, order, verdict, now, texts)
            elif verdict.verdict == "reject":
                reason = verdict.reason or "failed"
                await self._reject(conn, claim, order, reason, verdict, texts, error)
            else:
                woken |= await self._attribute(conn, claim, order, verdict, now, texts)
        for bot_id in woken:
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
        error: str | None = None,
    ) -> None:
        await _decide(conn, payment, "rejected", reason, verdict, None, error)
        await log_step(
            conn, order["id"], "payment_rejected", "system", hash=payment["tx_hash"], reason=reason
        )
        facts = {"to": verdict.to, "block_time": verdict.block_time}
        await enqueue(
            conn,
            order["bot_id"],
            [notices.refusal(order, payment["tx_hash"], reason, facts, texts)],
        )

    async def _attribute(
        self,
        conn: asyncpg.Connection,
        claim: asyncpg.Record,
        order: asyncpg.Record,
        verdict: Verdict,
        now: datetime,
        texts: Mapping[str, Any],
    ) -> set[int]:
        """A real transfer to the shop: record it once, then credit it to the order whose exact
        amount it is (whoever sent the hash), or hold it for the owner. The bots to wake."""
        transfer = await ledger.record(conn, order["network"], claim["tx_hash"], verdict)
        if transfer["state"] == "credited":
            if (transfer["order_bot_id"], transfer["order_id"]) == (order["bot_id"], order["id"]):
                # Found and counted already (by the watcher, or the owner): say so.
                await _decide(conn, claim, "credited", None, verdict, transfer["credited_usdt"])
                hash_ = notices.short(claim["tx_hash"])
                counted = notices.say(order, "shop_already_counted", texts, hash=hash_)
                await enqueue(conn, order["bot_id"], [counted])
            else:
                await self._reject(conn, claim, order, "already_used", verdict, texts)
            return set()
        if transfer["state"] == "returned":
            await self._reject(conn, claim, order, "returned", verdict, texts)
            return set()
        outcome, target = await ledger.match(conn, transfer, bool(self.citus))
        if target is None:
            await _decide(conn, claim, "held", outcome.hold, verdict, None)
            await log_step(
                conn,
                order["id"],
                "payment_held",
                "system",
                hash=claim["tx_hash"],
                reason=outcome.hold,
            )
            await enqueue(conn, order["bot_id"], [notices.held(order, transfer, texts)])
            return set()
        target_texts = texts
        if target["bot_id"] != order["bot_id"]:
            target_texts = (await self.shop.config.get(target["bot_id"])).texts
        if target["id"] == order["id"]:
            value = ledger.value_of(transfer, target)
            await _decide(conn, claim, "credited", None, verdict, value)
        else:
            # The transfer is another order's by its amount: it never counts for this one.
            await self._reject(conn, claim, order, "already_used", verdict, texts)
        made = await ledger.credit(conn, transfer, target, "amount", "system", now, target_texts)
        await enqueue(conn, target["bot_id"], made.messages)
        return {target["bot_id"]}

    # The clock

    async def clock(self) -> None:
        """Expire, remind, start and finish, in that order; one order's trouble stops no other."""
        now = self.shop.clock()
        for row in await self.pool.fetch(queries.TO_EXPIRE, EXPIRY_GRACE_S):
            await self._each("expire", row["id"], self._expire(row["bot_id"], row["id"], now))
        for row in await self.pool.fetch(queries.TO_REMIND):
            await self._each("remind", row["id"], self._remind(row["bot_id"], row["id"], now))
        kept = RATE_KEPT.total_seconds()
        for row in await self.pool.fetch(queries.TO_REQUOTE, kept):
            await self._each("re-quote", row["id"], self._requote(row["bot_id"], row["id"], now))
        to_start = queries.TO_START_CITUS if self.citus else queries.TO_START
        for row in await self.pool.fetch(to_start):
            await self._each("start", row["id"], self._start(row["id"], row["start_tries"], now))
        for row in await self.pool.fetch(queries.RUNNING):
            await self._each("finish", row["id"], self._running(row, now))

    async def _each(self, what: str, order_id: int, step: Awaitable[None]) -> None:
        try:
            await step
        except Exception:
            log.exception("order %s: %s failed; it is tried again", order_id, what)

    async def _running(self, row: asyncpg.Record, now: datetime) -> None:
        if await self.fulfil.finished(row, now):
            await self._complete(row["id"], now)
        elif row["broadcast_status"] == "draft":
            # Made but never sent (a worker died between the two): send it now.
            await self.fulfil.resume(row["bot_id"], row["broadcast_id"])

    async def _expire(self, bot_id: int, order_id: int, now: datetime) -> None:
        async with ledger.transaction(self.pool) as conn:
            order = await lock_order(conn, order_id, bot_id)
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

    async def _remind(self, bot_id: int, order_id: int, now: datetime) -> None:
        async with ledger.transaction(self.pool) as conn:
            order = await lock_order(conn, order_id, bot_id)
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

    async def _requote(self, bot_id: int, order_id: int, now: datetime) -> None:
        """A TRX rate older than a day is quoted again, and the advertiser told the new TRX
        amount; without a quote nothing changes and it is tried again next round."""
        try:
            quote = await self.shop.prices().usdt_per_trx()
        except PriceUnavailable as exc:
            log.warning("order %s: the TRX rate could not be quoted again: %s", order_id, exc)
            return
        async with ledger.transaction(self.pool) as conn:
            order = await lock_order(conn, order_id, bot_id)
            if order is None or order["state"] not in PAYABLE or order["usdt_per_trx"] is None:
                return
            texts = (await self.shop.config.get(order["bot_id"])).texts
            trx = await ledger.requote_due(conn, order, quote.rate)
            await conn.execute(queries.REQUOTED, order_id, quote.rate, quote.source, now, trx)
            await log_step(
                conn, order_id, "rate_locked", "system", rate=str(quote.rate), source=quote.source
            )
            updated = await conn.fetchrow(queries.ORDER, order_id)
            await enqueue(conn, order["bot_id"], [notices.requoted(updated, texts)])
        self.shop.wake(order["bot_id"])

    async def _start(self, order_id: int, tries: int, now: datetime) -> None:
        """Start a claimed paid order's ad; a failure is tried again later, less and less often."""
        order = await self.pool.fetchrow(queries.ORDER, order_id)
        if order is None or order["state"] != "paid":
            return
        try:
            made = await self.fulfil.start(order, now)
        except (FeatureError, TelegramError) as exc:
            message = exc.message if isinstance(exc, FeatureError) else exc.description
            async with ledger.transaction(self.pool) as conn:
                await conn.execute(queries.START_LATER, order_id, now + start_backoff(tries))
                # The first tries, then one line a day: enough for the owner to see why.
                if tries <= 3 or tries % 24 == 0:
                    await log_step(
                        conn, order_id, "start_failed", "system", error=message, tries=tries
                    )
            log.warning("order %s: the ad did not start: %s", order_id, message)
            return
        texts = (await self.shop.config.get(order["bot_id"])).texts
        async with ledger.transaction(self.pool) as conn:
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
        async with ledger.transaction(self.pool) as conn:
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
    error: str | None = None,
) -> None:
    """Record the hash's verdict with what the chain showed; the caller holds its row lock."""
    done = await conn.execute(
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
        error,
    )
    if done != "UPDATE 1":
        # Never go on as if it were written: the transaction rolls back.
        raise RuntimeError(f"payment {payment['id']} was not checking any more")


def _deadline(order: Mapping[str, Any]) -> datetime:
    """Until when an order may be paid: the part-payment window once one came in."""
    if order["due_at"] is not None:
        return order["due_at"]  # type: ignore[no-any-return]
    return order["expires_at"] or datetime.max.replace(tzinfo=UTC)
