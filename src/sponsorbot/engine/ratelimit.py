"""Sliding-window send limiter for one bot's outbox sender.

Telegram counts messages per bot and per chat over sliding windows, so the limiter keeps an exact
log of recent send times instead of token buckets: a bucket refilled continuously can let through
a burst that, seen from Telegram's side, puts more than the limit into one second.

A send at time ``t`` is allowed when fewer than the limit of earlier sends ``s`` satisfy
``t - s < window_s`` (for the bot as a whole and for the chat). Time is taken from one monotonic
clock and never goes backwards.

Only stdlib imports here: the import-linter contract keeps this module free of project code.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import Callable

__all__ = ["RateLimiter"]

ChatKey = int | str


class RateLimiter:
    """At most ``per_bot`` sends per window for the bot and ``per_chat`` per window per chat.

    One instance serves one bot's sender inside one event loop. ``reserve`` is synchronous, so
    concurrent ``acquire`` calls cannot interleave between the check and the record.
    """

    def __init__(
        self,
        per_bot: int = 25,
        per_chat: int = 3,
        window_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Create a limiter; ``clock`` must be monotonic (tests pass a fake one)."""
        if per_bot < 1 or per_chat < 1:
            raise ValueError("per_bot and per_chat must be at least 1")
        if window_s <= 0:
            raise ValueError("window_s must be positive")
        self.per_bot = per_bot
        self.per_chat = per_chat
        self.window_s = window_s
        self._clock = clock
        # Bot-wide log: send times inside the window, oldest first; never longer than per_bot.
        self._bot_log: deque[float] = deque()
        # Per-chat logs, ordered by each chat's latest send so idle chats sit at the front
        # and can be dropped in amortised O(1) (memory stays bounded by recent activity).
        self._chat_logs: OrderedDict[ChatKey, deque[float]] = OrderedDict()
        self._paused_until = float("-inf")
        self._latest = float("-inf")

    def reserve(self, chat_id: ChatKey, now: float | None = None, *, headroom: int = 0) -> float:
        """Record a send to ``chat_id`` and return 0.0 if allowed now, else the seconds to wait.

        When a wait is returned nothing is recorded: the caller sleeps that long and asks again.
        The wait is exact: the time until the pause ends or the oldest send that blocks (bot-wide
        or for this chat) leaves the window, whichever is later. With ``headroom`` the send
        leaves that many of the bot's slots free (background work yielding to replies).
        """
        now = self._now(now)
        self._prune(now)
        wait = self._wait(chat_id, now, headroom)
        if wait > 0:
            return wait
        self._bot_log.append(now)
        chat_log = self._chat_logs.get(chat_id)
        if chat_log is None:
            chat_log = self._chat_logs[chat_id] = deque()
        else:
            self._chat_logs.move_to_end(chat_id)
        chat_log.append(now)
        self._latest = now
        return 0.0

    def wait(self, chat_id: ChatKey, now: float | None = None, *, headroom: int = 0) -> float:
        """What `reserve` would answer now, without recording anything."""
        now = self._now(now)
        self._prune(now)
        return self._wait(chat_id, now, headroom)

    def _wait(self, chat_id: ChatKey, now: float, headroom: int) -> float:
        wait = self._paused_until - now
        limit = max(1, self.per_bot - headroom)
        if len(self._bot_log) >= limit:
            wait = max(wait, self.window_s - (now - self._bot_log[len(self._bot_log) - limit]))
        chat_log = self._chat_logs.get(chat_id)
        if chat_log is not None:
            while chat_log and now - chat_log[0] >= self.window_s:
                chat_log.popleft()
            if len(chat_log) >= self.per_chat:
                wait = max(wait, self.window_s - (now - chat_log[0]))
        return wait

    async def acquire(self, chat_id: ChatKey, *, headroom: int = 0) -> None:
        """Wait until a send to ``chat_id`` is allowed, and record it."""
        while True:
            wait = self.reserve(chat_id, headroom=headroom)
            if wait <= 0:
                return
            # The wait is exact, so this is a timed sleep rather than polling.
            await asyncio.sleep(wait)

    def pause(self, seconds: float, now: float | None = None) -> None:
        """Hold every send of the bot for ``seconds`` (after a 429); never shortens a pause."""
        if seconds < 0:
            raise ValueError("seconds must not be negative")
        self._paused_until = max(self._paused_until, self._now(now) + seconds)

    def room(self, headroom: int = 0, now: float | None = None) -> int:
        """How many sends to distinct fresh chats the bot may make now, leaving ``headroom``."""
        now = self._now(now)
        self._prune(now)
        if self._paused_until > now:
            return 0
        return max(0, self.per_bot - headroom - len(self._bot_log))

    def paused_for(self, now: float | None = None) -> float:
        """Seconds left in the current pause, 0.0 when not paused."""
        return max(0.0, self._paused_until - self._now(now))

    def tracked_chats(self) -> int:
        """Number of chats currently holding a send log (for health metrics and tests)."""
        return len(self._chat_logs)

    def _now(self, now: float | None) -> float:
        # A caller-supplied time older than a recorded send would break the logs' ordering;
        # treat it as the latest recorded time instead.
        return max(self._clock() if now is None else now, self._latest)

    def _prune(self, now: float) -> None:
        window = self.window_s
        bot_log = self._bot_log
        while bot_log and now - bot_log[0] >= window:
            bot_log.popleft()
        chats = self._chat_logs
        while chats:
            chat_id, chat_log = next(iter(chats.items()))
            # reserve() may have emptied a log while the bot-wide limit blocked the send.
            if chat_log and now - chat_log[-1] < window:
                break
            del chats[chat_id]
