"""Filters for router handlers: each is `check(event, ctx) -> bool` (or an awaitable bool), or
a mapping for a filter that hands what it found to the handler (`engine/routing.py`).

They read the update's body only, except `State`, which reads the person's conversation (read
with the claim, else one indexed read made only when a handler with this filter is tried, and
then once per update) and hands it on as `conversation`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from sponsorbot.engine.conversation import Conversation, States
from sponsorbot.engine.unit import Context

_COMMAND = re.compile(r"^/([A-Za-z0-9_]{1,32})(?:@\w+)?(?:\s|$)")


def command_of(message: Any) -> str | None:
    """The command a message's text starts with (`/Batch@bot x` -> `batch`), if any."""
    text = message.get("text") if isinstance(message, dict) else None
    if not isinstance(text, str):
        return None
    match = _COMMAND.match(text)
    return match.group(1).lower() if match else None


def start_payload(message: Any) -> str:
    """What follows `/start` (the deep-link code), stripped; empty when there is none."""
    parts = str(message.get("text") or "").split(maxsplit=1)
    return parts[1].strip() if len(parts) == 2 else ""


class Command:
    """A message starting with one of these commands (`/name` or `/name@bot`)."""

    def __init__(self, *names: str) -> None:
        self.names = frozenset(n.lower().lstrip("/") for n in names)

    def __call__(self, message: Any, ctx: Context) -> bool:
        return command_of(message) in self.names


class CommandStart:
    """`/start`; with `payload=True` only a deep link (`/start <code>`), False only without."""

    def __init__(self, payload: bool | None = None) -> None:
        self.payload = payload

    def __call__(self, message: Any, ctx: Context) -> bool:
        if command_of(message) != "start":
            return False
        return self.payload is None or bool(start_payload(message)) == self.payload


class ChatType:
    """A message (or the message under a button) in a chat of one of these types."""

    def __init__(self, *types: str) -> None:
        self.types = frozenset(types)

    def __call__(self, event: Any, ctx: Context) -> bool:
        message = event.get("message") if "data" in event else event
        chat = message.get("chat") if isinstance(message, dict) else None
        return isinstance(chat, dict) and chat.get("type") in self.types


class ContentType:
    """A message carrying one of these kinds of content (`text`, `document`, `video`, ...)."""

    def __init__(self, *kinds: str) -> None:
        self.kinds = tuple(kinds)

    def __call__(self, message: Any, ctx: Context) -> bool:
        return any(message.get(kind) for kind in self.kinds)


def from_person(event: Any, ctx: Context) -> bool:
    """Sent by a person (not a bot, not a channel)."""
    user = event.get("from")
    return isinstance(user, dict) and isinstance(user.get("id"), int) and not user.get("is_bot")


class CallbackPrefix:
    """A button press whose data is `<prefix>` or starts with `<prefix>:`."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._head = prefix + ":"

    def __call__(self, query: Any, ctx: Context) -> bool:
        data = query.get("data")
        return isinstance(data, str) and (data == self.prefix or data.startswith(self._head))


class State:
    """The person's open conversation is in one of these states (a `States` class: any of its
    states; `State()`: in any at all); the handler gets it as `conversation`."""

    def __init__(self, *names: str | type[States]) -> None:
        self.names = frozenset(
            state for name in names for state in ((name,) if isinstance(name, str) else tuple(name))
        )

    async def __call__(
        self, event: Any, ctx: Context
    ) -> Literal[False] | Mapping[str, Conversation]:
        conversation = await ctx.conversation()
        if conversation is None or (self.names and conversation.state not in self.names):
            return False
        return {"conversation": conversation}
