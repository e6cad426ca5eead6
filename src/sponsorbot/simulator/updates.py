"""Each bot's queue of updates: ids, confirmation by offset, 24 h retention, and wake-ups."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import orjson

from sponsorbot.simulator.types import shape

RETENTION_SECONDS = 24 * 3600
# Every update type the Bot API knows, in the server's order (getWebhookInfo lists them so).
UPDATE_TYPES = (
    "message",
    "edited_message",
    "channel_post",
    "edited_channel_post",
    "inline_query",
    "chosen_inline_result",
    "callback_query",
    "shipping_query",
    "pre_checkout_query",
    "poll",
    "poll_answer",
    "my_chat_member",
    "chat_member",
    "chat_join_request",
    "chat_boost",
    "removed_chat_boost",
    "message_reaction",
    "message_reaction_count",
    "business_connection",
    "business_message",
    "edited_business_message",
    "deleted_business_messages",
    "purchased_paid_media",
    "managed_bot",
    "guest_message",
)
# What a bot receives when it never named allowed_updates (Telegram leaves these three out).
OPT_IN_UPDATES = frozenset({"chat_member", "message_reaction", "message_reaction_count"})


def read_allowed_updates(value: Any) -> list[str] | None:
    """``allowed_updates`` as the server reads it: None (keep the old list) when it is not a
    list of strings; [] (the default) when it names no known type; else the known types in
    the server's order. Unknown names are skipped, case does not matter."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return None
    asked = {name.lower() for name in value}
    chosen = [name for name in UPDATE_TYPES if name in asked]
    if not chosen or set(chosen) == set(UPDATE_TYPES) - OPT_IN_UPDATES:
        return []
    return chosen


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
        body = shape("Update", update_id=update_id, **{kind: payload})
        update = Update(update_id, now, chat_key, kind, body)
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
