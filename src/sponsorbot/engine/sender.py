"""A bot's sender: drains its outbox, several chats at once, each chat strictly in order.

Exactly one sender runs per bot (it holds the bot's `send:` lease), so the rate limiter lives in
its memory. Telegram's answers decide each row: 429 pauses the whole bot, 401 stops it, 403
fails the row and marks the person blocked, "message is not modified" counts as done, other
400s fail the row, 5xx and network errors retry that chat with backoff.

Background rows (broadcasts) take a separate path: claimed in the database a few at a time,
just before they are sent, paced to what the bot's limit leaves free after the replies, and
never sent twice (a claimed row a stopped sender left behind is recorded as unknown).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field

import asyncpg

from sponsorbot.db.errors import DB_ERRORS
from sponsorbot.db.pool import on_citus
from sponsorbot.engine import outbox
from sponsorbot.engine.bots import BotJob, BotLink
from sponsorbot.engine.commits import GroupCommit
from sponsorbot.engine.leases import HOLDS
from sponsorbot.engine.outbox import BatchRecord, OutboxRow, Outcome
from sponsorbot.engine.pauses import Pauses
from sponsorbot.engine.ratelimit import RateLimiter
from sponsorbot.engine.recovery import PROBE_S, SenderRecovery, wake_inbox
from sponsorbot.telegram import (
    BadRequest,
    Forbidden,
    RetryAfter,
    TelegramError,
    Unauthorized,
    is_already_gone,
    is_blocked,
    is_not_modified,
)

log = logging.getLogger(__name__)

FETCH_LIMIT = 200
MAX_IN_HAND = 2000
FLUSH_EVERY_S = 0.2
SHORT_WAIT_S = 0.02
REFS_KEPT = 50_000
# Ids finished and recorded lately: a hand-over and an outbox read that both bring one row, in
# either order, are recognised by these (and by the ids still in hand).
DONE_KEPT = 20_000
# Background sending: rows are claimed a few at a time (a fifth of a second's worth, so a pause
# takes back all but those), sent as the limiter frees slots, and paced over fifths of a second
# so that a start or a pause's end is no burst that would make replies wait. Background sends
# stop while a fifth of the bot's limit is in use, which leaves that fifth to replies and keeps
# the bot's whole rate that far below the limit: a stall anywhere between us and Telegram then
# bunches sends into one of Telegram's seconds without a 429 (a 429 on a reply holds every
# visitor of the bot for a second or more). Paid broadcasts (allow_paid_broadcast) have their
# own limit.
BG_SLICE_S = 0.2
BG_ROOM = 0.2
BG_IN_FLIGHT = 64
PAID_PER_S = 1000
# The error of a row given up after network errors or 5xx for the whole retry time; a re-drive
# (`sponsorbot redrive`) queues exactly these again.
GAVE_UP = "gave up after repeated network errors"
# A stopping sender waits up to this long for the calls in flight, then as long again for its
# last write (the engine passes a share of the shutdown grace).
STOP_WAIT_S = 2.0
NO_CHAT = 0  # put in the ready queue to wake a chat worker that must stop


@dataclass(slots=True)
class _Retry:
    delay: float
    telegram: bool = True  # Telegram failed the call (not our database)


@dataclass(slots=True)
class _Throttled:
    retry_after: float


class _Refused:
    pass


def _empty() -> BatchRecord:
    return BatchRecord([], [], [])


@dataclass(slots=True)
class Ledger:
    """What a bot's senders sent and have not written yet, kept by the manager across them.

    A sender that stops on a lost lease or a database error can seldom write its last
    outcomes; they used to die with it, and its successor sent those messages again (ADR 0004).
    The next sender of the bot in this process writes them first, and
    does not read those rows meanwhile.
    """

    batch: BatchRecord = field(default_factory=_empty)
    writing: list[int] = field(default_factory=list)  # the rows of a batch being written
    citus: bool = False  # the database is a Citus coordinator (the sender asks when it starts)
    # Shared by the senders of a process: their writes that come due together go together.
    commits: GroupCommit | None = None

    def ids(self) -> list[int]:
        """The rows whose outcome waits to be written (or is being written now)."""
        return [outcome.id for outcome in self.batch.outcomes] + self.writing

    def take(self) -> BatchRecord:
        """Everything gathered, to be written; the ledger starts a new batch. Then exactly
        one of `written` and `put_back`."""
        batch, self.batch = self.batch, _empty()
        self.writing = [outcome.id for outcome in batch.outcomes]
        return batch

    def written(self) -> None:
        """The batch taken last is in the database."""
        self.writing = []

    def put_back(self, batch: BatchRecord) -> None:
        """A batch that could not be written goes back in front of what came meanwhile."""
        self.batch.outcomes[:0] = batch.outcomes
        self.batch.refs[:0] = batch.refs
        self.batch.blocked[:0] = batch.blocked
        self.batch.throttled += batch.throttled
        self.writing = []

    async def write(self, pool: asyncpg.Pool, bot_id: int) -> BatchRecord | None:
        """Write everything gathered; the batch written, or None when the database refused
        (it is kept). A write cancelled by a stop keeps it unless it committed after all: a stop
        must neither lose what was sent nor count it twice."""
        batch = self.take()
        if not (batch.outcomes or batch.refs or batch.blocked or batch.throttled):
            self.written()
            return batch
        write = asyncio.ensure_future(outbox.record(pool, bot_id, batch, self.citus, self.commits))
        try:
            await asyncio.shield(write)
        except asyncio.CancelledError:
            # A batch shared with other senders goes on without us, and may commit: its
            # outcome decides, so that what it wrote is not kept and written twice.
            await asyncio.wait([write])
            if write.cancelled() or write.exception() is not None:
                self.put_back(batch)
            else:
                self.written()
            raise
        except BaseException as exc:
            self.put_back(batch)
            if isinstance(exc, DB_ERRORS):
                log.warning("bot %s: recording sends failed, will retry: %s", bot_id, exc)
                return None
            raise
        self.written()
        return batch


class Sender(BotJob):
    """Sends one bot's queued calls while `lost` is unset."""

    def __init__(
        self,
        link: BotLink,
        limiter: RateLimiter,
        *,
        concurrency: int = 4,
        retry_for_s: float = 86400.0,
        retry_cap_s: float = 600.0,
        lease: tuple[str, str],
        ledger: Ledger | None = None,
        pauses: Pauses | None = None,
        stop_wait_s: float = STOP_WAIT_S,
        probe_s: float = PROBE_S,
        predecessor_gone: bool = False,
    ) -> None:
        super().__init__(link)
        # The lease was taken over from a holder that had stopped a while ago (one reaped as
        # dead, or run out): its sends are older than the limiter's window.
        self.predecessor_gone = predecessor_gone
        self.stop_wait_s = stop_wait_s
        self.limiter = limiter
        self.concurrency = concurrency
        self.retry_for_s = retry_for_s
        self.retry_cap_s = retry_cap_s
        self.lease = lease
        self._queues: dict[int, deque[OutboxRow]] = {}
        self._ready: asyncio.Queue[int] = asyncio.Queue()
        self._scheduled: set[int] = set()  # chats that are ready, busy or waiting out a backoff
        self._tries: dict[int, int] = {}
        self._failing_since: dict[int, float] = {}  # row id -> first transient failure
        self._in_hand: set[int] = set()
        self._refs: OrderedDict[str, int] = OrderedDict()
        self.ledger = ledger or Ledger()
        # Shared with the worker: a 429 here also stops claiming this bot's updates.
        self.pauses = pauses or Pauses()
        self._stopping = asyncio.Event()
        self._lost: asyncio.Event | None = None
        self._done_lately: OrderedDict[int, None] = OrderedDict()
        self.handed = 0
        self.paid_limiter = RateLimiter(PAID_PER_S, limiter.per_chat, limiter.window_s)
        self._bg_headroom = max(1, round(limiter.per_bot * BG_ROOM))
        self._paces = {
            paid: RateLimiter(max(1, round(rate * BG_SLICE_S)), PAID_PER_S, BG_SLICE_S)
            for paid, rate in ((False, limiter.per_bot - self._bg_headroom), (True, PAID_PER_S))
        }
        self._bg_tasks: set[asyncio.Task[None]] = set()
        self._bg_unsent: set[int] = set()  # claimed, not yet handed to Telegram
        self._bg_slots = asyncio.Semaphore(BG_IN_FLIGHT)
        self.recovery = SenderRecovery(probe_s, self._after_backoff, self._head, self._back)
        self._wakes: set[asyncio.Task[None]] = set()

    def offer(self, rows: list[OutboxRow], before: list[int]) -> bool:
        """Take rows a worker of this process just committed, without reading the outbox.

        Refused (the worker wakes us to read them instead) unless every older due row of the
        same chats (`before`) is already in hand: a chat's messages go out in order.
        """
        lost = self._lost
        if lost is None or lost.is_set() or self._stopping.is_set():
            return False
        if len(self._in_hand) + len(rows) > MAX_IN_HAND:
            return False
        if any(id_ not in self._in_hand for id_ in before):
            return False
        for row in rows:
            # An outbox read that came back before this hand-over may have taken it already.
            if row.id in self._in_hand or row.id in self._done_lately:
                continue
            self._take(row)
            self.handed += 1
        return True

    def _take(self, row: OutboxRow) -> None:
        self._in_hand.add(row.id)
        self._queues.setdefault(row.chat_id, deque()).append(row)
        self._make_ready(row.chat_id)

    async def run(self, lost: asyncio.Event) -> None:
        """Warm the connection with getMe, then send until the lease is lost or stopped."""
        # The previous holder of this bot's lease may have sent a full second's worth just
        # now, and its limiter died with it: wait one window before the first send (the load
        # test saw 28 in one second at Telegram's side across a hand-over without this).
        # Not when it is known to have stopped longer ago than that: a dead worker's bots are
        # answered again a second sooner.
        if not self.predecessor_gone:
            self.limiter.pause(self.limiter.window_s)
        self._lost = lost
        self.ledger.citus = await on_citus(self.pool)
        # Sent by a predecessor, not yet written: not to be read (and sent) again.
        self._in_hand.update(self.ledger.ids())
        try:
            await self.telegram.get_me()
        except Unauthorized:
            await self.on_refused(self.bot.info.id)
            return
        except TelegramError as exc:
            log.warning("bot %s: getMe failed at sender start: %s", self.bot.info.id, exc)
        workers = [asyncio.create_task(self._chat_worker()) for _ in range(self.concurrency)]
        background = asyncio.create_task(self._background())
        flusher = asyncio.create_task(self._flusher())
        prober = asyncio.create_task(self.recovery.run())
        key = f"outbox:{self.bot.info.id}"
        try:
            while not lost.is_set() and not self._stopping.is_set():
                # The fetch reads nothing unless the lease is still ours (database time); only
                # an empty read costs a separate look at the lease.
                fetched = await self._fetch() if len(self._in_hand) < MAX_IN_HAND else 0
                if fetched == 0 and not await self._still_ours():
                    break
                await self.notifier.wait(key, self.notifier.poll_interval())
        finally:
            self._stopping.set()
            # Calls in flight finish (their outcome is known); idle workers are woken to stop.
            for _ in workers:
                self._ready.put_nowait(NO_CHAT)
            await asyncio.wait(workers, timeout=self.stop_wait_s)
            for task in [*workers, background, prober]:
                task.cancel()
            await asyncio.gather(*workers, background, prober, return_exceptions=True)
            self.recovery.close()
            await self._stop_background()
            flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await flusher
            await self._last_flush()

    async def _still_ours(self) -> bool:
        try:
            return bool(await self.pool.fetchval(HOLDS, *self.lease))
        except DB_ERRORS as exc:
            log.warning("bot %s: cannot check the send lease: %s", self.bot.info.id, exc)
            await asyncio.sleep(1)
            return True

    async def _fetch(self) -> int:
        try:
            rows = await outbox.fetch(
                self.pool, self.bot.info.id, FETCH_LIMIT, list(self._in_hand), self.lease
            )
        except DB_ERRORS as exc:
            log.warning("bot %s: reading the outbox failed: %s", self.bot.info.id, exc)
            return 0
        for row in rows:
            # Handed over while this read was on its way: in hand still, or finished lately.
            if row.id in self._in_hand or row.id in self._done_lately:
                continue
            self._take(row)
        if len(rows) == FETCH_LIMIT:
            self.notifier.wake(f"outbox:{self.bot.info.id}", local_only=True)
        return len(rows)

    def _make_ready(self, chat_id: int) -> None:
        if chat_id not in self._scheduled:
            self._scheduled.add(chat_id)
            self._ready.put_nowait(chat_id)

    def _after_backoff(self, chat_id: int) -> None:
        self._scheduled.discard(chat_id)
        if self._queues.get(chat_id):
            self._make_ready(chat_id)

    def _head(self, chat_id: int) -> int:
        queue = self._queues.get(chat_id)
        return queue[0].id if queue else 0

    def _back(self) -> None:
        """Telegram answers this bot again: its updates waiting out a failure come due too."""
        task = asyncio.create_task(
            wake_inbox(self.pool, self.notifier, self.bot.info.id, self.limiter.per_bot)
        )
        self._wakes.add(task)
        task.add_done_callback(self._wakes.discard)

    async def _chat_worker(self) -> None:
        while not self._stopping.is_set():
            chat_id = await self._ready.get()
            if chat_id == NO_CHAT:
                return
            backoff = await self._drain_chat(chat_id)
            if backoff is not None:
                delay, failed = backoff
                if failed:
                    # Woken sooner when Telegram is seen to answer again (recovery.py).
                    self.recovery.waiting(chat_id, delay)
                else:
                    asyncio.get_running_loop().call_later(delay, self._after_backoff, chat_id)
                continue
            self._scheduled.discard(chat_id)
            if self._stopping.is_set():
                return
            if self._queues.get(chat_id):
                self._make_ready(chat_id)
            else:
                self._queues.pop(chat_id, None)

    async def _drain_chat(self, chat_id: int) -> tuple[float, bool] | None:
        """Send the chat's rows in order; if the chat must wait, how long and whether because
        Telegram failed its call (rather than for its own pace)."""
        queue = self._queues.get(chat_id)
        while queue and not self._stopping.is_set():
            row = queue[0]
            wait = self.limiter.reserve(chat_id)
            if wait > 0:
                if wait > SHORT_WAIT_S:
                    # Likely this chat's own limit: let the worker serve other chats meanwhile.
                    return wait, False
                await asyncio.sleep(wait)
                continue
            result = await self._send(row)
            if isinstance(result, _Throttled):
                self.limiter.pause(result.retry_after)
                self.pauses.pause(self.bot.info.id, result.retry_after)
                self.ledger.batch.throttled += 1
                continue
            if isinstance(result, _Refused):
                self._stopping.set()
                await self.on_refused(self.bot.info.id)
                return None
            if isinstance(result, _Retry):
                tries = self._tries.get(row.id, 0) + 1
                self._tries[row.id] = tries
                delay = self._backoff(row.id, tries, result.delay)
                if delay is not None:
                    return delay, result.telegram
                result = Outcome(row.id, "failed", GAVE_UP)
            elif row.id in self._tries:
                # Telegram answered a call it had failed: back, for this bot at least.
                self.recovery.answered()
            queue.popleft()
            self._failing_since.pop(row.id, None)
            result.tries = self._tries.pop(row.id, 0) + 1
            self.ledger.batch.outcomes.append(result)
        return None

    def _backoff(self, row_id: int, tries: int, base_s: float) -> float | None:
        """The wait before trying a row again after a transient failure, or None once it has
        failed for the whole retry time (hours, not a count: docs/adr/0005-retries.md)."""
        now = time.monotonic()
        since = self._failing_since.setdefault(row_id, now)
        if now - since >= self.retry_for_s:
            self._failing_since.pop(row_id, None)
            return None
        ceiling = min(self.retry_cap_s, base_s * 2.0 ** min(30, tries - 1))
        return ceiling * (0.5 + random.random() / 2)

    async def _background(self) -> None:
        """Claim background rows a few at a time and send each as soon as a slot is free."""
        bot_id = self.bot.info.id
        while not self._stopping.is_set():
            try:
                await self.pool.execute(outbox.ABANDONED, bot_id, *self.lease)
                break
            except DB_ERRORS as exc:
                log.warning("bot %s: cannot settle abandoned background rows: %s", bot_id, exc)
                await asyncio.sleep(1.0)
        claimed: deque[OutboxRow] = deque()
        more = True
        while not self._stopping.is_set():
            paid = bool(claimed and claimed[0].params.get("allow_paid_broadcast"))
            batch = self._paces[paid].per_bot
            if more and len(claimed) <= batch // 2 and len(self._bg_tasks) < BG_IN_FLIGHT:
                more = await self._claim(claimed, batch - len(claimed))
            if not claimed:
                # Nothing due: sleep until a feature queues some (or a poll).
                await self.notifier.wait(outbox.background_key(bot_id), 1.0)
                more = True
                continue
            row = claimed[0]
            paid = bool(row.params.get("allow_paid_broadcast"))
            limiter, pace = (self.paid_limiter if paid else self.limiter), self._paces[paid]
            headroom = 0 if paid else self._bg_headroom
            wait = max(limiter.wait(row.chat_id, headroom=headroom), pace.wait(0))
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            limiter.reserve(row.chat_id, headroom=headroom)
            pace.reserve(0)
            claimed.popleft()
            task = asyncio.create_task(self._send_background(row, limiter, pace, headroom))
            self._bg_tasks.add(task)
            task.add_done_callback(self._bg_tasks.discard)

    async def _claim(self, claimed: deque[OutboxRow], limit: int) -> bool:
        """Claim up to `limit` more rows; whether there may be more."""
        try:
            rows = await outbox.claim_background(
                self.pool, self.bot.info.id, limit, self.lease, self.ledger.citus
            )
        except DB_ERRORS as exc:
            log.warning("bot %s: claiming background rows failed: %s", self.bot.info.id, exc)
            await asyncio.sleep(1.0)
            return True
        for row in rows:
            self._bg_unsent.add(row.id)
            claimed.append(row)
        return len(rows) == limit

    async def _send_background(
        self, row: OutboxRow, limiter: RateLimiter, pace: RateLimiter, headroom: int
    ) -> None:
        """Send one claimed row (its slot reserved); a 429 or a network error tries again.

        A 429 here pauses background sending only: at full use of the bot's limit, a stall
        of a fifth of a second anywhere between us and Telegram bunches sends into one of
        Telegram's seconds. Replies go on; should they meet a 429 too, the whole bot waits.
        """
        tries = 0
        async with self._bg_slots:
            while True:
                if self._stopping.is_set():
                    return  # given back by _stop_background
                self._bg_unsent.discard(row.id)
                result = await self._send(row)
                if isinstance(result, _Throttled):
                    pace.pause(result.retry_after)
                    self.ledger.batch.throttled += 1
                elif isinstance(result, _Refused):
                    # Not sent: Telegram refused the token. Back to the queue for later.
                    self._bg_unsent.add(row.id)
                    if not self._stopping.is_set():
                        self._stopping.set()
                        await self.on_refused(self.bot.info.id)
                    return
                elif isinstance(result, _Retry):
                    tries += 1
                    delay = self._backoff(row.id, tries, result.delay)
                    if delay is None:
                        failed = Outcome(row.id, "failed", GAVE_UP)
                        failed.tries = tries
                        self.ledger.batch.outcomes.append(failed)
                        return
                    await self.recovery.until_back(delay)
                else:
                    if tries:
                        self.recovery.answered()
                    self._failing_since.pop(row.id, None)
                    result.tries = tries + 1
                    self.ledger.batch.outcomes.append(result)
                    return
                self._bg_unsent.add(row.id)
                await pace.acquire(0)
                await limiter.acquire(row.chat_id, headroom=headroom)

    async def _stop_background(self) -> None:
        """Let background calls in flight finish; give back the claimed rows never tried."""
        waiting = [t for t in self._bg_tasks if not t.done()]
        if waiting:
            await asyncio.wait(waiting, timeout=2.0)
        for task in list(self._bg_tasks):
            task.cancel()
        await asyncio.gather(*self._bg_tasks, return_exceptions=True)
        unsent, self._bg_unsent = list(self._bg_unsent), set()
        if unsent:
            try:
                await self.pool.execute(outbox.RELEASE, unsent)
            except DB_ERRORS as exc:
                log.warning(
                    "bot %s: cannot give back %d rows: %s", self.bot.info.id, len(unsent), exc
                )

    async def _resolve(self, ref: str, known: int | None) -> int | None:
        if ref in self._refs:
            return self._refs[ref]
        if known is not None:
            return known
        found: int | None = await self.pool.fetchval(outbox.FIND_REF, self.bot.info.id, ref)
        return found

    async def _send(self, row: OutboxRow) -> Outcome | _Retry | _Throttled | _Refused:
        params = dict(row.params)
        if row.uses_ref is not None:
            try:
                message_id = await self._resolve(row.uses_ref, row.ref_message_id)
            except DB_ERRORS:
                return _Retry(1.0, telegram=False)
            if message_id is None:
                return Outcome(row.id, "failed", "the message it refers to was never sent")
            params["message_id"] = message_id
        try:
            result = await self.telegram.call(row.method, params)
        except RetryAfter as exc:
            return _Throttled(exc.retry_after or 1.0)
        except Unauthorized:
            return _Refused()
        except Forbidden as exc:
            if is_blocked(exc):
                # The person is marked blocked, which the panel shows; one line each would flood
                # the log during a broadcast.
                self.ledger.batch.blocked.append(row.chat_id)
                log.debug("bot %s: chat %s blocked the bot", self.bot.info.id, row.chat_id)
            else:
                self._refused(row, exc)
            return Outcome(row.id, "failed", exc.description)
        except BadRequest as exc:
            if is_not_modified(exc):
                return Outcome(row.id, "sent")
            if row.method == "deleteMessage" and is_already_gone(exc):
                # Nothing left to delete: done, with Telegram's reason kept.
                return Outcome(row.id, "sent", exc.description)
            self._refused(row, exc)
            return Outcome(row.id, "failed", exc.description)
        except TelegramError as exc:
            if exc.is_transient:
                return _Retry(1.0)
            return Outcome(row.id, "failed", exc.description)
        message_id = result.get("message_id") if isinstance(result, dict) else None
        if row.ref is not None and isinstance(message_id, int):
            self._refs[row.ref] = message_id
            if len(self._refs) > REFS_KEPT:
                self._refs.popitem(last=False)
            self.ledger.batch.refs.append((row.ref, row.chat_id, message_id))
        return Outcome(row.id, "sent", None, message_id if isinstance(message_id, int) else None)

    def _refused(self, row: OutboxRow, exc: TelegramError) -> None:
        """A call Telegram refused for good: the person gets nothing, so the owner can find why
        in the log (Telegram's own words; they never hold the token)."""
        log.warning(
            "bot %s: %s to chat %s refused by Telegram: %s",
            self.bot.info.id,
            row.method,
            row.chat_id,
            exc.description,
        )

    async def _flusher(self) -> None:
        while True:
            # On the same beat in every sender of the process, so that their writes share one
            # round trip and one commit (the ledger's GroupCommit).
            await asyncio.sleep(FLUSH_EVERY_S - time.monotonic() % FLUSH_EVERY_S)
            await self._flush()

    async def _flush(self) -> bool:
        """Write the outcomes gathered; False (they are kept) when the database refused."""
        batch = await self.ledger.write(self.pool, self.bot.info.id)
        if batch is None:
            return False
        for outcome in batch.outcomes:
            self._in_hand.discard(outcome.id)
            self._done_lately[outcome.id] = None
        while len(self._done_lately) > DONE_KEPT:
            self._done_lately.popitem(last=False)
        return True

    async def _last_flush(self) -> None:
        """Write what is left, trying for a few seconds; what still fails stays in the ledger
        for this bot's next sender in this process."""
        deadline = time.monotonic() + self.stop_wait_s
        while not await self._flush():
            if time.monotonic() >= deadline:
                log.warning(
                    "bot %s: %d outcomes not written yet; the next sender writes them",
                    self.bot.info.id,
                    len(self.ledger.batch.outcomes),
                )
                return
            await asyncio.sleep(0.5)
