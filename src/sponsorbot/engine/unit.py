"""The unit of work: what a handler reads with, and the writes and calls it leaves behind.

A handler reads first (the database, Telegram membership checks; no transaction open) and
records its writes in a unit of work. The worker commits those writes together with marking the
update done (`inbox.DONE_AND_ENQUEUE`), so an update's effects and its replies commit or roll
back as one: in one statement when every write stands alone (`UnitOfWork.write_alone`), else in
one short transaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from sponsorbot.engine.conversation import READ, Conversation
from sponsorbot.engine.outbox import ENQUEUE
from sponsorbot.telegram import Bot

Write = Callable[[asyncpg.Connection], Awaitable[Any]]

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


@dataclass(frozen=True, slots=True)
class QueuedCall:
    """A Bot API call for the bot's sender, as a handler queues it.

    `ref` remembers the message_id the call returns under a key; `uses_ref` fills this call's
    `message_id` from such a key when it is sent (edit or delete a message that a row queued
    earlier sent). `not_before` delays it (durable: it waits in the outbox).
    """

    chat_id: int
    method: str
    params: dict[str, Any]
    priority: int = PRIORITY_REPLY
    not_before: datetime | None = None
    ref: str | None = None
    uses_ref: str | None = None

    @classmethod
    def build(
        cls,
        chat_id: int,
        method: str,
        params: dict[str, Any],
        *,
        priority: int = PRIORITY_REPLY,
        not_before: datetime | None = None,
        ref: str | None = None,
        uses_ref: str | None = None,
    ) -> QueuedCall:
        """A call to `chat_id`: its id goes into the parameters, and None values are left out."""
        body = {"chat_id": chat_id, **{k: v for k, v in params.items() if v is not None}}
        return cls(chat_id, method, body, priority, not_before, ref, uses_ref)


# A call's columns in the outbox, in the order ENQUEUE and enqueue_values take them.
_FIELDS = ("chat_id", "method", "params", "priority", "not_before", "ref", "uses_ref")


def call_arrays(calls: list[QueuedCall]) -> list[list[Any]]:
    """Calls as the column arrays ENQUEUE and DONE_AND_ENQUEUE take ($3-$9)."""
    return [[getattr(call, name) for call in calls] for name in _FIELDS]


def call_values(calls: list[QueuedCall]) -> list[Any]:
    """Calls as the rows of outbox.enqueue_values take them, one after the other ($3 on)."""
    return [getattr(call, name) for call in calls for name in _FIELDS]


@dataclass(slots=True)
class UnitOfWork:
    """Writes and calls gathered during a handler, committed after it returns.

    Three ways to write, by what the write needs:
    - `write_alone`: one INSERT/UPDATE/DELETE that needs none of the others; these ride beside
      the done mark in one statement (no transaction round trips).
    - `write_in_order`: a statement that must see an earlier write, run in a transaction.
    - `run_in_transaction`: a function of the connection, for anything more.
    """

    bot_id: int
    inbox_id: int | None = None
    writes: list[Write] = field(default_factory=list)
    statements: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    calls: list[QueuedCall] = field(default_factory=list)

    def run_in_transaction(self, write: Write) -> None:
        """Run `write(conn)` inside the commit transaction, in the order added."""
        self.writes.append(write)

    def write_in_order(self, sql: str, *args: Any) -> None:
        """Run one SQL statement inside the commit transaction, in the order added."""

        async def run(conn: asyncpg.Connection) -> None:
            await conn.execute(sql, *args)

        self.writes.append(run)

    def write_alone(self, sql: str, *args: Any) -> None:
        """An INSERT, UPDATE or DELETE that needs none of this update's other writes.

        The worker runs these beside the done mark, in one statement (one round trip, no
        transaction), after any in-order writes. They all see the database as it was before
        that statement, so two of them must never touch the same row. (On Citus they run one
        after the other in the commit's transaction: inbox.MARK_DONE says why.)
        """
        if ";" in sql:
            raise ValueError("one statement, without a semicolon")
        self.statements.append((sql, args))

    def queue(self, call: QueuedCall) -> None:
        """Queue a built call (see `sponsorbot.engine.calls`) for this bot's sender."""
        self.calls.append(call)

    def send(self, chat_id: int, method: str, params: dict[str, Any], **options: Any) -> None:
        """Queue a Bot API call by method name and parameters (`QueuedCall.build`'s options)."""
        self.calls.append(QueuedCall.build(chat_id, method, params, **options))

    async def commit(self, pool: asyncpg.Pool) -> None:
        """Apply the writes and queue the calls in one transaction (outside a worker)."""
        async with pool.acquire() as conn, conn.transaction():
            for write in self.writes:
                await write(conn)
            for sql, args in self.statements:
                await conn.execute(sql, *args)
            if self.calls:
                await conn.execute(ENQUEUE, self.bot_id, self.inbox_id, *call_arrays(self.calls))


@dataclass(slots=True)
class Context:
    """What a handler gets besides the update."""

    bot: BotInfo
    telegram: Bot
    db: asyncpg.Pool
    uow: UnitOfWork
    attempt: int = 1
    # The person the update is about (the inbox's chat key), and Telegram's id of the update.
    chat_key: int = 0
    update_id: int = 0
    # What the router's read-ahead for this kind of update found when it was claimed.
    ahead: Any = None
    _conversation: Conversation | None = None
    _conversation_read: bool = False

    def conversation_is(self, conversation: Conversation | None) -> None:
        """This person's conversation as already read (with the claim): not read again."""
        self._conversation = conversation
        self._conversation_read = True

    async def conversation(self) -> Conversation | None:
        """This person's conversation with the bot, if one is open (read once per update)."""
        if not self._conversation_read:
            row = await self.db.fetchrow(READ, self.bot.id, self.chat_key)
            self._conversation = Conversation.of(row)
            self._conversation_read = True
        return self._conversation
