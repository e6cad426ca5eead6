"""The handler interface: features register a handler per update kind.

A handler reads first (the database, Telegram membership checks; no transaction open) and
records its writes in a unit of work. The worker commits those writes in one short transaction
together with marking the update done, so an update's effects and its replies commit or roll
back as one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from sponsorbot.telegram import Bot

log = logging.getLogger(__name__)

Write = Callable[[asyncpg.Connection], Awaitable[Any]]

ENQUEUE = """
INSERT INTO outbox (bot_id, chat_id, method, params, priority, not_before, ref, uses_ref, inbox_id)
VALUES ($1, $2, $3, $4, $5, COALESCE($6, now()), $7, $8, $9)
"""

PRIORITY_REPLY = 0
PRIORITY_LATER = 5
PRIORITY_BROADCAST = 10


@dataclass(frozen=True, slots=True)
class BotInfo:
    """What a handler may know about its bot."""

    id: int
    username: str
    mode: str
    status: str


@dataclass(slots=True)
class UnitOfWork:
    """Writes gathered during a handler, committed in one transaction after it returns."""

    bot_id: int
    inbox_id: int | None = None
    writes: list[Write] = field(default_factory=list)
    outbox_rows: int = 0

    def add(self, write: Write) -> None:
        """Run `write(conn)` inside the commit transaction, in the order added."""
        self.writes.append(write)

    def execute(self, sql: str, *args: Any) -> None:
        """Run one SQL statement inside the commit transaction."""

        async def run(conn: asyncpg.Connection) -> None:
            await conn.execute(sql, *args)

        self.writes.append(run)

    def send(
        self,
        chat_id: int,
        method: str,
        params: dict[str, Any],
        *,
        priority: int = PRIORITY_REPLY,
        not_before: datetime | None = None,
        ref: str | None = None,
        uses_ref: str | None = None,
    ) -> None:
        """Queue a Bot API call for this bot's sender.

        `ref` remembers the message_id the call returns under a key; `uses_ref` fills this
        call's `message_id` from such a key when it is sent (edit or delete a message that a
        row queued earlier sent).
        """
        params = {"chat_id": chat_id, **params}
        self.outbox_rows += 1
        self.execute(
            ENQUEUE,
            self.bot_id,
            chat_id,
            method,
            params,
            priority,
            not_before,
            ref,
            uses_ref,
            self.inbox_id,
        )


@dataclass(slots=True)
class Context:
    """What a handler gets besides the update."""

    bot: BotInfo
    telegram: Bot
    db: asyncpg.Pool
    uow: UnitOfWork
    attempt: int = 1


Handler = Callable[[dict[str, Any], Context], Awaitable[None]]


class Registry:
    """Handlers by update kind; an update with no handler is marked done untouched."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def register(self, kind: str, handler: Handler) -> None:
        """Handle updates of this kind (`message`, `callback_query`, ...) with `handler`."""
        if kind in self._handlers:
            raise ValueError(f"a handler for {kind!r} is already registered")
        self._handlers[kind] = handler

    def get(self, kind: str) -> Handler | None:
        """The handler for a kind, if any."""
        return self._handlers.get(kind)

    def kinds(self) -> list[str]:
        """The kinds with a handler."""
        return sorted(self._handlers)
