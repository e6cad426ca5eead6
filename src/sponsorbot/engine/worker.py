"""The claim loop: keep up to N updates in hand (N adapts, see inhand.py), claim again when a
quarter of them are free."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import asyncpg

from sponsorbot.db import errors as db_errors
from sponsorbot.db.errors import DB_ERRORS
from sponsorbot.db.pool import on_citus
from sponsorbot.engine import inbox, outbox
from sponsorbot.engine.bots import ActiveBot
from sponsorbot.engine.commits import GroupCommit
from sponsorbot.engine.conversation import Conversation
from sponsorbot.engine.inbox import CLAIM, DONE_AND_ENQUEUE, LOST_CLAIM, claim_with, done_with
from sponsorbot.engine.inhand import InHandLimit
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.outbox import OutboxRow
from sponsorbot.engine.pauses import Pauses
from sponsorbot.engine.recovery import PROBE_S, InboxProbes, wake_inbox
from sponsorbot.engine.routing import Router
from sponsorbot.engine.unit import Context, UnitOfWork, call_arrays, call_values
from sponsorbot.telegram import BotApi, TelegramError, Unauthorized, scrub

log = logging.getLogger(__name__)

INBOX = "inbox"
# How often the event loop's lag is sampled.
LAG_EVERY_S = 0.1
# Woken with nothing known to wait, a worker lets updates gather this long before claiming: a
# claim costs the database about the same for one row as for ten, and the api wakes the
# workers for every few updates it stores. The product's is SPONSORBOT_WORKER_CLAIM_GATHER_MS
# (config.py, longer: ADR 0024); this one is the engine's own, for tools and tests.
CLAIM_GATHER_S = 0.01


# Hand an update's queued calls to a sender in this process: (bot id, rows, ids of older due
# rows of the same chats) -> taken. Not taken: the sender is woken to read them from the outbox.
Offer = Callable[[int, list[OutboxRow], list[int]], bool]


def _nobody(_bot_id: int, _rows: list[OutboxRow], _before: list[int]) -> bool:
    return False


class _LostClaim(Exception):
    """Our lock expired and another worker took the update: our writes must not commit."""


def transient(exc: BaseException) -> tuple[bool, float | None]:
    """Whether a handler's failure may pass by itself, and the wait Telegram asked for.

    Telegram's 5xx and 429, the network and a database restart are transient: retried for
    hours without counting as a failure. Anything else (a bug, a refusal) is a failure.
    """
    if isinstance(exc, TelegramError):
        wait = exc.retry_after if exc.error_code == 429 else None
        return exc.is_transient, wait
    return db_errors.is_transient(exc), None


class Worker:
    """Claims updates of the active bots and runs their handlers."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        router: Router,
        notifier: Notifier,
        api: BotApi,
        bots: Callable[[], dict[int, ActiveBot]],
        *,
        slots: int = 32,
        slots_max: int | None = None,
        lock_s: float = 120.0,
        max_attempts: int = 8,
        retry_base_s: float = 1.0,
        retry_cap_s: float = 600.0,
        retry_for_s: float = 86400.0,
        offer: Offer | None = None,
        pauses: Pauses | None = None,
        claimer: Callable[[], int | None] = lambda: None,
        on_refused: Callable[[int], Awaitable[None]] | None = None,
        probe_s: float = PROBE_S,
        wake_per_s: float = 25.0,
        on_back: Callable[[int], None] = lambda _bot_id: None,
        commit_gather_s: float = 0.002,
        claim_gather_s: float = CLAIM_GATHER_S,
    ) -> None:
        self.pool = pool
        self.router = router
        self.notifier = notifier
        self.api = api
        self.bots = bots
        self.limit = InHandLimit(slots, slots if slots_max is None else slots_max, lock_s)
        self.lock_s = lock_s
        self.max_attempts = max_attempts
        self.retry_base_s = retry_base_s
        self.retry_cap_s = retry_cap_s
        self.retry_for_s = retry_for_s
        self.offer: Offer = offer or _nobody
        self.pauses = pauses or Pauses()
        self.claimer = claimer
        self.on_refused = on_refused
        # Telegram's return, noticed by a retried update (recovery.py): the bot's waiting
        # updates come due at `wake_per_s` (its limit), and `on_back` tells its sender here.
        self.probes = InboxProbes(probe_s)
        self.wake_per_s = wake_per_s
        self.on_back = on_back
        self._wakes: set[asyncio.Task[None]] = set()
        # Done marks of updates that finish together commit together (engine/commits.py).
        self.commits = GroupCommit(pool, gather_s=commit_gather_s)
        self.claim_gather_s = claim_gather_s
        self._in_hand: dict[asyncio.Task[None], int] = {}
        self.handled = 0
        self._claim_sql = CLAIM
        # On Citus the claim goes one bot at a time (inbox.one_bot), starting at a bot that
        # moves on each time.
        self._each_bot = False
        self._first_bot = 0

    @property
    def in_hand(self) -> int:
        """How many updates this worker holds now."""
        return len(self._in_hand)

    async def run(self, stop: asyncio.Event, grace_s: float = 8.0) -> None:
        """Claim and handle until `stop`, then finish what is in hand (bounded by `grace_s`)."""
        # The features' routers are all included by now.
        self._claim_sql = claim_with(tuple(sorted(self.router.read_aheads().items())))
        self._each_bot = await on_citus(self.pool)
        self.commits.per_bot = self._each_bot  # known here: the batches need not ask again
        if self._each_bot:
            self._claim_sql = inbox.one_bot(self._claim_sql)
        stopper = asyncio.create_task(self._wake_on(stop))
        lag = asyncio.create_task(self._watch_lag(stop))
        # Whether the last claim got all it asked for: more are likely waiting.
        full = False
        try:
            while not stop.is_set():
                free = self.limit.limit - len(self._in_hand)
                if free >= self.limit.threshold:
                    claimed = await self._claim(free)
                    full = claimed == free
                    if self.limit.claimed(free, claimed, time.monotonic()):
                        log.debug("holding up to %d updates at once", self.limit.limit)
                    if full:
                        continue
                woken = await self.notifier.wait(INBOX, self.notifier.poll_interval())
                if woken and not full and not stop.is_set():
                    await asyncio.sleep(self.claim_gather_s)
        finally:
            stopper.cancel()
            lag.cancel()
            await self._drain(grace_s)

    async def _watch_lag(self, stop: asyncio.Event) -> None:
        """Sample how late a timer fires: the event loop's lag, which says whether this
        process keeps pace with what it holds."""
        while not stop.is_set():
            start = time.monotonic()
            await asyncio.sleep(LAG_EVERY_S)
            now = time.monotonic()
            if self.limit.lagged(now - start - LAG_EVERY_S, now):
                log.debug("holding up to %d updates at once (lagging)", self.limit.limit)

    async def _wake_on(self, stop: asyncio.Event) -> None:
        await stop.wait()
        self.notifier.wake(INBOX, local_only=True)

    async def _claim(self, free: int) -> int:
        bots = self.bots()
        claimer = self.claimer()
        try:
            ready = self.pauses.allowed(bots)
            if self._each_bot and ready:
                self._first_bot = (self._first_bot + 1) % len(ready)
                ready = ready[self._first_bot :] + ready[: self._first_bot]
            rows = await inbox.claim(
                self.pool, ready, free, self.lock_s, claimer, self._claim_sql, self._each_bot
            )
        except DB_ERRORS as exc:
            log.warning("claim failed, trying again shortly: %s", exc)
            await asyncio.sleep(1)
            await self._release_lost(claimer)
            return 0
        for row in rows:
            task = asyncio.create_task(self._handle(row, bots.get(row.bot_id)))
            self._in_hand[task] = row.id
            task.add_done_callback(self._finished)
        return len(rows)

    async def _release_lost(self, claimer: int | None) -> None:
        """After a failed claim: if it committed but its answer was lost, the rows it took
        would wait out the whole lock time. Give back whatever we hold but do not know of."""
        if claimer is None:
            return
        try:
            await self.pool.execute(inbox.RELEASE_LOST, claimer, list(self._in_hand.values()))
        except DB_ERRORS as exc:
            log.warning("could not check for updates a lost claim took: %s", exc)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._in_hand.pop(task, None)
        if self.limit.limit - len(self._in_hand) == self.limit.threshold:
            self.notifier.wake(INBOX, local_only=True)

    async def _handle(self, row: inbox.InboxRow, bot: ActiveBot | None) -> None:
        uow = UnitOfWork(row.bot_id, inbox_id=row.id)
        start = time.monotonic()
        try:
            if bot is None:
                raise RuntimeError("the bot is not active in this worker")
            if self.router.handles(row.kind):
                telegram = self.api.bot(bot.token)
                ctx = Context(
                    bot.info,
                    telegram,
                    self.pool,
                    uow,
                    row.attempts,
                    row.chat_key,
                    row.update_id,
                    row.ahead,
                )
                if row.talk is not None:
                    ctx.conversation_is(Conversation.of_claim(row.talk))
                await self.router.dispatch(row.kind, row.payload, ctx)
            committed = await self._commit(row, uow)
        except _LostClaim:
            log.warning("update %s of bot %s was taken over; not committing", row.id, row.bot_id)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await self._failed(row, exc)
            return
        finally:
            self.limit.finished(time.monotonic() - start)
        self.handled += 1
        if committed["next"]:
            # The person's next update was passed over while this one was in hand.
            self.notifier.wake(INBOX, local_only=True)
        if uow.calls:
            self._hand_over(row.bot_id, uow, committed)
        if self.probes.succeeded(row.bot_id, row.attempts > 1):
            self._back(row.bot_id)

    def _back(self, bot_id: int) -> None:
        """Telegram answers the bot again: what waits for it is tried now."""
        self.on_back(bot_id)
        task = asyncio.create_task(wake_inbox(self.pool, self.notifier, bot_id, self.wake_per_s))
        self._wakes.add(task)
        task.add_done_callback(self._wakes.discard)

    async def _commit(self, row: inbox.InboxRow, uow: UnitOfWork) -> Mapping[str, Any]:
        """The handler's writes, the done mark and its queued calls, atomically."""
        if self._each_bot:
            return await self._commit_in_steps(row, uow)
        args = [row.bot_id, row.id, *call_arrays(uow.calls), row.attempts]
        sql = DONE_AND_ENQUEUE
        if uow.statements:
            sql = done_with(tuple(statement for statement, _ in uow.statements))
            for _, more in uow.statements:
                args.extend(more)
        try:
            if not uow.writes:
                # One statement is its own transaction: no BEGIN and COMMIT round trips, and
                # it can share one round trip and commit with other updates' statements.
                result: Mapping[str, Any] | None = await self.commits.run(sql, args, row.bot_id)
                if result is None or result["done"] != 1:
                    raise _LostClaim
                return result
            async with self.pool.acquire() as conn, conn.transaction():
                for write in uow.writes:
                    await write(conn)
                result = await conn.fetchrow(sql, *args)
                if result is None or result["done"] != 1:
                    raise _LostClaim
                return result
        except asyncpg.PostgresError as exc:
            if exc.sqlstate == LOST_CLAIM:
                raise _LostClaim from None
            raise

    async def _commit_in_steps(self, row: inbox.InboxRow, uow: UnitOfWork) -> Mapping[str, Any]:
        """On Citus: the same commit as single-shard statements in one transaction
        (inbox.MARK_DONE), with the same result as DONE_AND_ENQUEUE's row."""
        ids: list[int] = []
        async with self.pool.acquire() as conn, conn.transaction():
            if await conn.fetchrow(inbox.MARK_DONE, row.bot_id, row.id, row.attempts) is None:
                raise _LostClaim
            for write in uow.writes:
                await write(conn)
            for sql, more in uow.statements:
                await conn.execute(sql, *more)
            before: list[int] = []
            if uow.calls:
                if len(uow.calls) <= outbox.VALUES_MOST:
                    queued = await conn.fetch(
                        outbox.enqueue_values(len(uow.calls)),
                        row.bot_id,
                        row.id,
                        *call_values(uow.calls),
                    )
                else:
                    queued = await conn.fetch(
                        outbox.ENQUEUE_STEP, row.bot_id, row.id, *call_arrays(uow.calls)
                    )
                ids = sorted(r["id"] for r in queued)
                chats = sorted({call.chat_id for call in uow.calls})
                before = [r["id"] for r in await conn.fetch(inbox.BEFORE_STEP, row.bot_id, chats)]
            more_due = await conn.fetchval(inbox.NEXT_STEP, row.bot_id, row.chat_key)
        return {"done": 1, "ids": ids, "before": before, "next": more_due is not None}

    def _hand_over(self, bot_id: int, uow: UnitOfWork, committed: Mapping[str, Any]) -> None:
        """Give the queued calls to this process's sender of the bot, or wake whoever sends."""
        ids: list[int] = committed["ids"]
        rows = [
            OutboxRow(id_, call.chat_id, call.method, call.params, call.ref, call.uses_ref, 0, None)
            for id_, call in zip(ids, uow.calls, strict=True)
            if call.not_before is None
        ]
        # On Citus the statement's own inserts run first, as a step of their own, so `before`
        # may name them too.
        before = [id_ for id_ in committed["before"] if id_ not in ids]
        if len(rows) < len(ids) or not self.offer(bot_id, rows, before):
            self.notifier.wake(f"outbox:{bot_id}")

    async def _failed(self, row: inbox.InboxRow, exc: Exception) -> None:
        error = scrub(f"{type(exc).__name__}: {exc}")[:2000]
        passing, wait = transient(exc)
        if isinstance(exc, Unauthorized) and self.on_refused is not None:
            # The token was revoked: no fault of this update. The bot stops until the owner
            # gives it a new token, and the update waits for that without counting a failure.
            passing = True
            try:
                await self.on_refused(row.bot_id)
            except DB_ERRORS as db_exc:
                log.warning("could not mark bot %s's token refused: %s", row.bot_id, db_exc)
        if wait is not None:
            # Telegram's own wait, plus a little so a bot's updates do not all return at once.
            delay = wait * (1 + random.random() / 10)
            self.pauses.pause(row.bot_id, wait)
        else:
            delay = inbox.retry_delay(row.attempts, self.retry_base_s, self.retry_cap_s)
            if passing and isinstance(exc, TelegramError) and not isinstance(exc, Unauthorized):
                # One update per bot probes for Telegram's return (recovery.py).
                delay = self.probes.failed(row.bot_id, row.id, delay)
        args = (
            row.id,
            row.attempts,
            self.max_attempts,
            delay,
            error,
            passing,
            self.retry_for_s,
            row.bot_id,
        )
        status = await self._record_failure(row, args)
        if status == "dead":
            log.error(
                "update %s of bot %s (chat %s) is dead after %d attempts: %s",
                row.id,
                row.bot_id,
                row.chat_key,
                row.attempts,
                error,
            )
        elif status is not None:
            log.info(
                "update %s failed (attempt %d%s), retry in %.1fs: %s",
                row.id,
                row.attempts,
                ", transient" if passing else "",
                delay,
                error,
            )

    async def _record_failure(self, row: inbox.InboxRow, args: tuple[object, ...]) -> str | None:
        """Write the failure; while the database is away, keep trying until the lock would
        expire anyway, so an update in hand during a restart is retried in seconds, not after
        the whole lock time. None when it could not be written (the lock's expiry retries it)."""
        deadline = time.monotonic() + self.lock_s
        pause = 0.2
        while True:
            try:
                status: str | None = await self.pool.fetchval(inbox.MARK_FAILED, *args)
                return status
            except DB_ERRORS as db_exc:
                if not db_errors.is_transient(db_exc) or time.monotonic() + pause > deadline:
                    log.warning("could not record failure of update %s: %s", row.id, db_exc)
                    return None
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)

    async def _drain(self, grace_s: float) -> None:
        if not self._in_hand:
            return
        tasks = list(self._in_hand)
        _, pending = await asyncio.wait(tasks, timeout=grace_s)
        if not pending:
            return
        ids = [self._in_hand[t] for t in pending if t in self._in_hand]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        try:
            await self.pool.execute(inbox.RELEASE, ids)
        except DB_ERRORS:
            log.warning("could not give back %d updates; their locks will expire", len(ids))
