"""Telegram's flood limits, injected faults and added latency, all set at run time."""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass

# Above this many tracked chats, forget the ones idle for a second (keeps memory flat).
_SWEEP_AT = 20_000


class FloodLimiter:
    """Per-bot and per-chat sliding one-second windows of accepted sends.

    Sends with `allow_paid_broadcast` count in a window of their own, up to `paid_per_bot`: the
    Bot API lets a bot pay (in Stars) to go past the free limit, up to 1000 messages a second.
    """

    def __init__(self, per_bot: int = 30, per_chat: int = 5, paid_per_bot: int = 1000) -> None:
        self.per_bot = per_bot
        self.per_chat = per_chat
        self.paid_per_bot = paid_per_bot
        self._bots: dict[int, deque[float]] = {}
        self._paid: dict[int, deque[float]] = {}
        self._chats: dict[tuple[int, int], deque[float]] = {}

    def acquire(self, bot_id: int, chat_id: int, now: float, *, paid: bool = False) -> int:
        """Record a send and return 0, or return the seconds to wait (nothing recorded)."""
        bot_window = (self._paid if paid else self._bots).setdefault(bot_id, deque())
        bot_limit = self.paid_per_bot if paid else self.per_bot
        chat_window = self._chats.get((bot_id, chat_id))
        if chat_window is None:
            if len(self._chats) > _SWEEP_AT:
                self._sweep(now)
            chat_window = self._chats[(bot_id, chat_id)] = deque()
        for window in (bot_window, chat_window):
            while window and window[0] <= now - 1.0:
                window.popleft()
        wait = 0.0
        if len(bot_window) >= bot_limit:
            wait = bot_window[0] + 1.0 - now
        if len(chat_window) >= self.per_chat:
            wait = max(wait, chat_window[0] + 1.0 - now)
        if wait > 0:
            return max(1, math.ceil(wait))
        bot_window.append(now)
        chat_window.append(now)
        return 0

    def _sweep(self, now: float) -> None:
        stale = [k for k, w in self._chats.items() if not w or w[-1] <= now - 1.0]
        for key in stale:
            del self._chats[key]

    def clear(self) -> None:
        """Forget all windows."""
        self._bots.clear()
        self._paid.clear()
        self._chats.clear()


@dataclass(slots=True)
class Fault:
    """What goes wrong with one method (or ``*``, every method)."""

    error_rate: float = 0.0
    status: int = 500
    timeout_rate: float = 0.0
    hang_seconds: float = 30.0
    force_429_next: int = 0
    retry_after: int = 1


STATUS_TEXT = {
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


@dataclass(slots=True)
class Verdict:
    """The fault chosen for one call: an error status, a hang, or a forced 429."""

    kind: str
    status: int = 0
    seconds: float = 0.0


class Faults:
    """Injected failures, decided per call from a seeded random."""

    def __init__(self, seed: int | None = None) -> None:
        self.by_method: dict[str, Fault] = {}
        self._rng = random.Random(seed)

    def set(self, method: str, fault: Fault) -> None:
        """Replace the fault of ``method`` (lower-cased; ``*`` for all)."""
        self.by_method[method.lower()] = fault

    def clear(self) -> None:
        """No more faults."""
        self.by_method.clear()

    def decide(self, method: str) -> Verdict | None:
        """The fault this call suffers, if any (the method's own rule first, then ``*``)."""
        for key in (method, "*"):
            fault = self.by_method.get(key)
            if fault is None:
                continue
            if fault.force_429_next > 0:
                fault.force_429_next -= 1
                return Verdict("429", seconds=fault.retry_after)
            if fault.timeout_rate and self._rng.random() < fault.timeout_rate:
                return Verdict("timeout", status=504, seconds=fault.hang_seconds)
            if fault.error_rate and self._rng.random() < fault.error_rate:
                return Verdict("error", status=fault.status)
        return None


class Latency:
    """Every Bot API call waits ``fixed`` plus up to ``jitter`` milliseconds."""

    def __init__(self, fixed_ms: float = 0.0, jitter_ms: float = 0.0, seed: int | None = None):
        self.fixed_ms = fixed_ms
        self.jitter_ms = jitter_ms
        self._rng = random.Random(seed)

    def seconds(self) -> float:
        """The delay of one call, in seconds."""
        if self.jitter_ms:
            return (self.fixed_ms + self._rng.uniform(0, self.jitter_ms)) / 1000
        return self.fixed_ms / 1000
