"""Which bots this worker serves: a sender per bot and a poller per polling bot, under leases."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable

import asyncpg

from sponsorbot.db.errors import DB_ERRORS
from sponsorbot.engine.bots import BOTS_CHANGED, ActiveBot, BotLink, BotService
from sponsorbot.engine.commits import GroupCommit
from sponsorbot.engine.leases import Leases
from sponsorbot.engine.notify import Notifier, wait_at_most
from sponsorbot.engine.outbox import OutboxRow
from sponsorbot.engine.pauses import Pauses
from sponsorbot.engine.poller import Poller
from sponsorbot.engine.ratelimit import RateLimiter
from sponsorbot.engine.recovery import PROBE_S
from sponsorbot.engine.sender import Ledger, Sender
from sponsorbot.telegram import BotApi

log = logging.getLogger(__name__)

LIVE_WORKERS = "SELECT count(*) FROM leases WHERE name LIKE 'worker:%' AND expires_at > now()"
# Bots whose sender runs in another live worker.
SENT_ELSEWHERE = """
SELECT substr(name, 6)::bigint FROM leases
WHERE name LIKE 'send:%' AND owner <> $1 AND expires_at > now()
"""
Job = Callable[[asyncio.Event], Awaitable[None]]


class BotManager:
    """Keeps the directory of active bots and, for each, tries to hold its send and poll leases."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        api: BotApi,
        service: BotService,
        leases: Leases,
        notifier: Notifier,
        *,
        per_bot: int = 25,
        per_chat: int = 3,
        concurrency: int = 4,
        retry_for_s: float = 86400.0,
        retry_cap_s: float = 600.0,
        retry_lease_s: float = 2.0,
        pauses: Pauses | None = None,
        stop_wait_s: float = 2.0,
        probe_s: float = PROBE_S,
    ) -> None:
        self.pool = pool
        self.api = api
        self.service = service
        self.leases = leases
        self.notifier = notifier
        self.per_bot = per_bot
        self.per_chat = per_chat
        self.concurrency = concurrency
        self.retry_for_s = retry_for_s
        self.retry_cap_s = retry_cap_s
        self.retry_lease_s = retry_lease_s
        self.bots: dict[int, ActiveBot] = {}
        self.claimable: dict[int, ActiveBot] = {}
        self._tasks: dict[tuple[str, int], asyncio.Task[None]] = {}
        self.holding: set[tuple[str, int]] = set()
        self.senders: dict[int, Sender] = {}
        # Per bot: outcomes a stopped sender could not write, for its successor here (ADR 0004).
        self.ledgers: dict[int, Ledger] = {}
        # The senders' writes of one beat go to the database together (engine/commits.py).
        self.records = GroupCommit(pool, gather_s=0.0)
        self.pauses = pauses or Pauses()
        self.stop_wait_s = stop_wait_s
        self.probe_s = probe_s
        # Set (and replaced) when leases may have come free: a dead worker was reaped, or the
        # bots changed. Lease holders waiting to retry try at once instead of after
        # `retry_lease_s`, so a dead worker's bots are taken over in a fraction of a second.
        self._freed = asyncio.Event()
        # Cleared while this worker cannot prove to the others that it is alive (its liveness
        # lock is gone): they may take its bots any moment, so it holds no lease meanwhile.
        self.alive = asyncio.Event()
        self.alive.set()
        self._lost: dict[str, asyncio.Event] = {}
        # Each worker takes at most its share of bots, so senders spread over the workers.
        self.share = 1_000_000

    def offer(self, bot_id: int, rows: list[OutboxRow], before: list[int]) -> bool:
        """Hand freshly committed outbox rows to this process's sender of the bot, if any."""
        sender = self.senders.get(bot_id)
        return sender is not None and sender.offer(rows, before)

    def active(self) -> dict[int, ActiveBot]:
        """The bots whose updates this worker claims, by id.

        Every active bot except those whose sender runs in another live worker: that worker
        claims them, and hands their replies to its sender directly. Nothing is lost by this:
        one bot's traffic is capped by Telegram (25 messages a second) far below what a worker
        handles, and a bot whose sender's worker dies comes back here when its lease expires.
        """
        return self.claimable

    async def refresh(self) -> None:
        """Reload active bots; start and stop senders and pollers to match."""
        bots = {b.info.id: b for b in await self.service.active()}
        self.bots = bots
        await self.leases.acquire(f"worker:{self.leases.owner}")
        elsewhere = set(r[0] for r in await self.pool.fetch(SENT_ELSEWHERE, self.leases.owner))
        claimable = {i: b for i, b in bots.items() if i not in elsewhere}
        gained = claimable.keys() - self.claimable.keys()
        self.claimable = claimable
        if gained:
            # Their updates (a dead worker's, given back) are claimed now, not at the next poll.
            self.notifier.wake("inbox", local_only=True)
        workers = max(1, await self.pool.fetchval(LIVE_WORKERS))
        self.share = max(1, math.ceil(len(bots) / workers))
        wanted: set[tuple[str, int]] = set()
        for bot_id, bot in bots.items():
            wanted.add(("send", bot_id))
            if bot.info.mode == "polling":
                wanted.add(("poll", bot_id))
        for key in list(self._tasks):
            if key not in wanted or self._tasks[key].done():
                task = self._tasks.pop(key)
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        await self._give_back_excess()
        for key in wanted - set(self._tasks):
            kind, bot_id = key
            self._tasks[key] = asyncio.create_task(self._hold(kind, bots[bot_id]), name=str(key))

    def _held(self, kind: str) -> int:
        return sum(1 for k, _ in self.holding if k == kind)

    async def _give_back_excess(self) -> None:
        """Above our share (another worker started): release the excess for others to take."""
        for kind in ("send", "poll"):
            excess = self._held(kind) - self.share
            if excess <= 0:
                continue
            keys = sorted(k for k in self.holding if k[0] == kind)[-excess:]
            tasks = [t for t in (self._tasks.pop(k, None) for k in keys) if t is not None]
            log.info("giving %d %s leases to other workers", len(tasks), kind)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def run(self, stop: asyncio.Event) -> None:
        """Refresh on every bots-changed wake-up and every couple of seconds, until `stop`."""
        woken = False
        while not stop.is_set():
            try:
                await self.refresh()
            except DB_ERRORS as exc:
                log.warning("cannot load bots: %s", exc)
            except Exception:
                # Whatever it was, this loop keeps the senders, pollers and leases alive.
                log.exception("refreshing the bots failed")
            if woken:
                # Not a poll: a dead worker was reaped, or the bots changed. With the count of
                # live workers (our share) fresh, the lease holders waiting try at once.
                self._freed.set()
                self._freed = asyncio.Event()
            left = await self._write_orphans()
            waiter = asyncio.create_task(self.notifier.wait(BOTS_CHANGED, 0.5 if left else 2.0))
            stopper = asyncio.create_task(stop.wait())
            await asyncio.wait([waiter, stopper], return_when="FIRST_COMPLETED")
            waiter.cancel()
            stopper.cancel()
            woken = waiter.done() and not waiter.cancelled() and waiter.result()
        await self.close()

    async def _write_orphans(self) -> bool:
        """Write the outcomes of senders that stopped without writing them and have no
        successor here (the lease went elsewhere): recording needs no lease. Run the moment a
        sender stops, then every half second while some remain (a new holder elsewhere sends
        nothing in its first second). True while some are still unwritten."""
        left = False
        for bot_id, ledger in list(self.ledgers.items()):
            if ledger.batch.outcomes and bot_id not in self.senders:
                left = await ledger.write(self.pool, bot_id) is None or left
        return left

    async def close(self) -> None:
        """Stop every sender and poller; their leases are released on the way out."""
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(*DB_ERRORS):
            await self.leases.release(f"worker:{self.leases.owner}")

    async def refused(self, bot_id: int) -> None:
        """Telegram refused the bot's token (401): mark it and stop serving it."""
        await self.service.mark_token_refused(bot_id)
        self.bots.pop(bot_id, None)
        self.claimable.pop(bot_id, None)

    def suspend(self) -> None:
        """The liveness lock is lost: stop every sender and poller until it is back, so no
        message goes out twice once another worker takes the bots over."""
        if self.alive.is_set():
            log.warning("liveness lost: this worker stops sending until it is back")
        self.alive.clear()
        for lost in self._lost.values():
            lost.set()

    def resume(self) -> None:
        """The liveness lock is held again: leases may be taken (or taken back)."""
        self.alive.set()

    def telegram_back(self, bot_id: int) -> None:
        """Telegram answers the bot again (seen by a retried update): the chats its sender
        here holds in backoff are tried now."""
        sender = self.senders.get(bot_id)
        if sender is not None:
            sender.recovery.answered()

    async def _retry_later(self) -> None:
        await wait_at_most(self._freed, self.retry_lease_s)

    async def _hold(self, kind: str, bot: ActiveBot) -> None:
        name = f"{kind}:{bot.info.id}"
        while True:
            await self.alive.wait()
            if self._held(kind) >= self.share:
                await self._retry_later()
                continue
            try:
                taken_over = await self.leases.take(name)
            except DB_ERRORS as exc:
                log.warning("lease %s: %s", name, exc)
                taken_over = None
            if taken_over is None:
                await self._retry_later()
                continue
            lost = asyncio.Event()
            self._lost[name] = lost
            self.holding.add((kind, bot.info.id))
            try:
                async with self.leases.kept(name, lost):
                    await self._run_one(kind, bot, name, lost, taken_over)
            finally:
                self.holding.discard((kind, bot.info.id))
                self._lost.pop(name, None)
            if bot.info.id not in self.bots:
                return

    async def _run_one(
        self, kind: str, bot: ActiveBot, name: str, lost: asyncio.Event, taken_over: bool
    ) -> None:
        job: Job
        sender: Sender | None = None
        link = BotLink(self.pool, bot, self.api, self.notifier, self.refused)
        if kind == "send":
            limiter = RateLimiter(self.per_bot, self.per_chat)
            sender = Sender(
                link,
                limiter,
                concurrency=self.concurrency,
                retry_for_s=self.retry_for_s,
                retry_cap_s=self.retry_cap_s,
                lease=(name, self.leases.owner),
                ledger=self.ledgers.setdefault(bot.info.id, Ledger(commits=self.records)),
                pauses=self.pauses,
                stop_wait_s=self.stop_wait_s,
                probe_s=self.probe_s,
                predecessor_gone=taken_over,
            )
            self.senders[bot.info.id] = sender
            job = sender.run
        else:
            job = Poller(
                link, allowed_updates=self.service.allowed_updates, max_backoff_s=self.probe_s
            ).run
        # A poll in progress is not interrupted by `lost` by itself: race the two.
        task = asyncio.create_task(job(lost))
        watcher = asyncio.create_task(lost.wait())
        try:
            await asyncio.wait([task, watcher], return_when="FIRST_COMPLETED")
        finally:
            watcher.cancel()
            if not task.done():
                if kind == "send":
                    lost.set()
                    # Longer than the sender's own stop: its calls in flight, its background
                    # sends and its last write each have their share of the grace.
                    try:
                        await asyncio.wait_for(
                            asyncio.shield(task), timeout=3 * self.stop_wait_s + 3
                        )
                    except TimeoutError:
                        task.cancel()
                else:
                    task.cancel()
            if sender is not None and self.senders.get(bot.info.id) is sender:
                del self.senders[bot.info.id]
                # The lease may be going to another worker: what was sent is written now.
                await self._write_orphans()
            with contextlib.suppress(asyncio.CancelledError):
                exc = await asyncio.gather(task, return_exceptions=True)
                if exc and isinstance(exc[0], Exception):
                    log.error("%s stopped with an error", name, exc_info=exc[0])
