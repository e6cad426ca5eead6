"""Each bot's queue of updates: ids, confirmation by offset, 24 h retention, and wake-ups."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

RETENTION_SECONDS = 24 * 3600


@dataclass(slots=True)
class Update:
    """One stored update: ``body`` is exactly what getUpdates and the webhook send."""

    update_id: int
    created: float
    chat_key: int
    kind: str
    body: dict[str, Any]


class UpdateQueue:
    """Unconfirmed updates of one bot, oldest first, with a signal for whoever waits on them."""

    def __init__(self, first_id: int) -> None:
        self.pending: dict[int, Update] = {}
        self.next_id = first_id
        self._changed = asyncio.Event()

    def push(self, kind: str, payload: dict[str, Any], chat_key: int, now: float) -> Update:
        """Store a new update and wake long polls and the webhook deliverer."""
        update_id = self.next_id
        self.next_id += 1
        update = Update(update_id, now, chat_key, kind, {"update_id": update_id, kind: payload})
        self.pending[update_id] = update
        self.notify()
        return update

    def notify(self) -> None:
        """Wake everyone waiting; swapping the event keeps later waiters from waking early."""
        self._changed.set()
        self._changed = asyncio.Event()

    def changed(self) -> asyncio.Event:
        """An event set at the next change; take it before checking, then wait on it."""
        return self._changed

    def confirm_below(self, offset: int) -> None:
        """Forget every update whose id is below ``offset`` (how getUpdates confirms)."""
        while self.pending:
            first = next(iter(self.pending))
            if first >= offset:
                break
            del self.pending[first]

    def drop_expired(self, now: float) -> None:
        """Forget updates kept longer than Telegram keeps them."""
        limit = now - RETENTION_SECONDS
        while self.pending:
            first = next(iter(self.pending.values()))
            if first.created >= limit:
                break
            del self.pending[first.update_id]

    def take(self, offset: int, limit: int) -> list[Update]:
        """Apply getUpdates' offset rules and return up to ``limit`` updates."""
        if offset < 0:
            # A negative offset counts from the end and forgets everything before it.
            keep = list(self.pending)[offset:]
            if keep:
                self.confirm_below(keep[0])
        elif offset > 0:
            self.confirm_below(offset)
        result: list[Update] = []
        for update in self.pending.values():
            if len(result) >= limit:
                break
            result.append(update)
        return result

    def remove(self, update_id: int) -> None:
        """Forget one update (delivered by webhook)."""
        self.pending.pop(update_id, None)

    def clear(self) -> None:
        """Forget every pending update (drop_pending_updates)."""
        self.pending.clear()
        self.notify()
