"""Bots Telegram asked to wait: while one is paused, its updates are not claimed.

A 429 answer to any call of a bot (a handler's getChatMember as well as a send) says how long
the whole bot must wait. Claiming its other updates meanwhile would only meet more 429s, so
the worker leaves them waiting; they spend no attempt (docs/adr/0005-retries.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable


class Pauses:
    """Per bot, the monotonic time until which Telegram asked it to wait."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[int, float] = {}

    def pause(self, bot_id: int, seconds: float) -> None:
        """Pause the bot for `seconds` from now (a longer pause already set is kept)."""
        until = self._clock() + max(0.0, seconds)
        if until > self._until.get(bot_id, 0.0):
            self._until[bot_id] = until

    def allowed(self, bot_ids: Iterable[int]) -> list[int]:
        """The bots of `bot_ids` that are not paused now."""
        now = self._clock()
        for bot_id in [b for b, until in self._until.items() if until <= now]:
            del self._until[bot_id]
        return [b for b in bot_ids if b not in self._until]
