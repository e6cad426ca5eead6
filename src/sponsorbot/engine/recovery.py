"""Back within a minute: what waits for Telegram is tried again as soon as it answers again.

A call Telegram fails (5xx, the network) waits out an exponential backoff of its own, up to
`retry_cap_s` (10 minutes by default), so after a long outage people who came early in it
waited minutes more once Telegram was back. Now, while a bot's calls fail, one of them (the
oldest waiting) is tried again every `probe_s`; the first call Telegram answers after failing
it is the sign it is back, and then everything waiting for that bot is tried at once: its
sender's chats in backoff (`SenderRecovery`, oldest first) and its updates waiting out a
transient failure (`inbox.wake_waiting`, oldest first), wherever they wait.

Why this cannot stampede: only a call that failed before and now succeeded wakes the others
(a first try proves nothing about the failed ones), at most once per `probe_s` per bot; the
sender's woken chats go through the same limiter as any send, so they leave at the bot's limit
(25 a second) and each chat at its own pace (3 a second, in order); the woken updates are
spread at the bot's limit by their due times and claimed oldest first, one per person at a
time, within the worker's in-hand limit. During an outage the probing costs one call per bot
every `probe_s`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import asyncpg

from sponsorbot.db.errors import DB_ERRORS
from sponsorbot.engine import inbox
from sponsorbot.engine.notify import Notifier, wait_at_most

log = logging.getLogger(__name__)

PROBE_S = 5.0


class SenderRecovery:
    """A sender's chats waiting out a transient failure, and the probe that ends the wait."""

    def __init__(
        self,
        probe_s: float,
        retry: Callable[[int], None],
        head: Callable[[int], int],
        on_back: Callable[[], None],
    ) -> None:
        self.probe_s = probe_s
        # retry(chat): the chat's wait is over; head(chat): the id of its oldest row, by which
        # the woken are ordered; on_back(): Telegram answers again (wake the bot's updates).
        self._retry = retry
        self._head = head
        self._on_back = on_back
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._quiet_until = 0.0
        self._wake_due = False
        self._back = asyncio.Event()

    def waiting(self, chat_id: int, delay: float) -> None:
        """The chat's next row failed for a passing reason: retry it after `delay`, or
        sooner, when Telegram is seen to answer again."""
        old = self._timers.pop(chat_id, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timers[chat_id] = loop.call_later(delay, self._expired, chat_id)

    def _expired(self, chat_id: int) -> None:
        self._timers.pop(chat_id, None)
        self._retry(chat_id)

    @property
    def chats_waiting(self) -> int:
        """How many chats wait for Telegram now."""
        return len(self._timers)

    def answered(self) -> None:
        """Telegram answered a call it had failed: it is back for this bot. Wake everything
        now, or (within `probe_s` of the last wake) at the next probe."""
        if time.monotonic() >= self._quiet_until:
            self.wake_all()
        elif self._timers:
            self._wake_due = True

    def wake_all(self) -> None:
        """Every waiting chat is retried now, oldest first; background waits end."""
        self._wake_due = False
        self._quiet_until = time.monotonic() + self.probe_s
        for chat_id in sorted(self._timers, key=self._head):
            self._timers.pop(chat_id).cancel()
            self._retry(chat_id)
        self._back.set()
        self._back = asyncio.Event()
        self._on_back()

    async def until_back(self, delay: float) -> None:
        """Sleep `delay`, or less if Telegram is seen to answer again meanwhile."""
        await wait_at_most(self._back, delay)

    async def run(self) -> None:
        """Every `probe_s`: a wake that was held back happens; else, while chats wait, the
        oldest is retried now, one call, so that Telegram's return is noticed."""
        while True:
            await asyncio.sleep(self.probe_s)
            if not self._timers:
                continue
            if self._wake_due:
                self.wake_all()
                continue
            chat_id = min(self._timers, key=self._head)
            self._timers.pop(chat_id).cancel()
            self._retry(chat_id)

    def close(self) -> None:
        """Forget the waits (the sender stops; its successor reads the rows again)."""
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()


class InboxProbes:
    """Per bot, the one update of a worker that probes whether Telegram answers again.

    An update whose handler Telegram failed waits out its own delay; for each bot, one of
    them (the first to fail while none probes) waits at most `probe_s` instead, and again
    after each failure. When a retried update of such a bot succeeds, the bot's waiting
    updates are woken (at most once per `probe_s`).
    """

    def __init__(self, probe_s: float) -> None:
        self.probe_s = probe_s
        self._probes: dict[int, tuple[int, float]] = {}  # bot -> (update, probing until)
        self._quiet_until: dict[int, float] = {}

    def failed(self, bot_id: int, update_id: int, delay: float) -> float:
        """An update of the bot failed on Telegram; the delay it is to wait."""
        now = time.monotonic()
        current = self._probes.get(bot_id)
        if current is not None and current[0] != update_id and current[1] > now:
            return delay
        delay = min(delay, self.probe_s)
        # Until its next try has had time to come back; then another failure may probe.
        self._probes[bot_id] = (update_id, now + delay + self.probe_s)
        return delay

    def succeeded(self, bot_id: int, retried: bool) -> bool:
        """An update of the bot succeeded; True when the bot's waiting updates are to be
        woken now (a retried update succeeded while Telegram was failing the bot)."""
        if not retried or bot_id not in self._probes:
            return False
        now = time.monotonic()
        if now < self._quiet_until.get(bot_id, 0.0):
            return False
        del self._probes[bot_id]
        self._quiet_until[bot_id] = now + self.probe_s
        return True


async def wake_inbox(pool: asyncpg.Pool, notifier: Notifier, bot_id: int, per_s: float) -> None:
    """Telegram answers the bot again: its updates waiting out a transient failure come due
    now, `per_s` a second (`inbox.wake_waiting`), and the workers are woken to claim them."""
    try:
        woken = await inbox.wake_waiting(pool, bot_id, per_s)
    except DB_ERRORS as exc:
        log.warning("bot %s: cannot bring its waiting updates forward: %s", bot_id, exc)
        return
    if woken:
        log.info("bot %s: Telegram answers again; %d waiting updates retried now", bot_id, woken)
        notifier.wake("inbox")
