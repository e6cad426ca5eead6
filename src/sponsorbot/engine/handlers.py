"""The handler interface: features register a handler per update kind.

A handler reads first (the database, Telegram membership checks; no transaction open) and
records its writes in a unit of work. The worker commits those writes together with marking the
update done, so an update's effects and its replies commit or roll back as one: in one
statement when every write is independent (`UnitOfWork.write`), else in one short transaction.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from sponsorbot.telegram import Bot

log = logging.getLogger(__name__)

Write = Callable[[asyncpg.Connection], Awaitable[Any]]

_QUEUED = """
INSERT INTO outbox (bot_id, chat_id, method, params, priority, not_before, ref, uses_ref, inbox_id)
SELECT $1, s.chat_id, s.method, s.params, s.priority, COALESCE(s.not_before, now()), s.ref,
       s.uses_ref, $2
FROM {source} unnest($3::bigint[], $4::text[], $5::jsonb[], $6::int[], $7::timestamptz[],
                     $8::text[], $9::text[]) WITH ORDINALITY
     AS s (chat_id, method, params, priority, not_before, ref, uses_ref, n)
ORDER BY s.n
"""
# Queue the calls of one unit of work in one statement, in the order they were asked for.
ENQUEUE = _QUEUED.format(source="")
# Mark the update done and queue its calls in one statement (one round trip, and atomic on its
# own when the handler wrote nothing else); the calls are queued only if the mark took. It also
# returns the new outbox ids, in call order, and the ids of older due rows of the same chats
# (the statement does not see its own inserts), for the hand-off to a local sender.
_DONE = f"""
done AS (
    UPDATE inbox SET status = 'done', handled_at = clock_timestamp(), locked_until = NULL,
                     error = NULL
    WHERE id = $2 AND status = 'processing' AND attempts = $10
    RETURNING id
), queued AS ({_QUEUED.format(source="done,")} RETURNING id)
"""
_RESULT = """, ARRAY(SELECT q.id FROM queued q ORDER BY q.id) AS ids,
       ARRAY(SELECT o.id FROM outbox o
             WHERE o.bot_id = $1 AND o.status = 'pending' AND o.chat_id = ANY ($3::bigint[])
               AND o.not_before <= now()
             ORDER BY o.id) AS before
"""
DONE_AND_ENQUEUE = f"WITH {_DONE}SELECT (SELECT count(*) FROM done) AS done{_RESULT}"
DONE_ARGS = 10
# With independent writes in front, a lost claim must fail the whole statement: those writes
# have no other way to know the mark did not take (0005_one_statement_commit.sql).
LOST_CLAIM = "SB001"
_LOST_CHECK = (
    "SELECT CASE WHEN (SELECT count(*) FROM done) = 1 THEN 1 ELSE sponsorbot_claim_lost() END"
    f" AS done{_RESULT}"
)
_PARAM = re.compile(r"\$(\d+)")


def _shifted(sql: str, by: int) -> str:
    return _PARAM.sub(lambda m: f"${int(m.group(1)) + by}", sql)


@functools.lru_cache(maxsize=256)
def done_with(statements: tuple[str, ...]) -> str:
    """DONE_AND_ENQUEUE with `statements` in front as data-modifying CTEs: one statement.

    The statements' parameters follow DONE_AND_ENQUEUE's ten, in order. The statements are our
    own constants (UnitOfWork.write), so the set of combinations, and this cache, stays small.
    """
    parts = []
    offset = DONE_ARGS
    for i, sql in enumerate(statements):
        parts.append(f"w{i} AS ({_shifted(sql, offset)})")
        offset += max((int(n) for n in _PARAM.findall(sql)), default=0)
    return "WITH " + ", ".join(parts) + ", " + _DONE + _LOST_CHECK


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
    statements: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    calls: list[tuple[int, str, dict[str, Any], int, datetime | None, str | None, str | None]] = (
        field(default_factory=list)
    )

    def add(self, write: Write) -> None:
        """Run `write(conn)` inside the commit transaction, in the order added."""
        self.writes.append(write)

    def execute(self, sql: str, *args: Any) -> None:
        """Run one SQL statement inside the commit transaction."""

        async def run(conn: asyncpg.Connection) -> None:
            await conn.execute(sql, *args)

        self.writes.append(run)

    def write(self, sql: str, *args: Any) -> None:
        """An INSERT, UPDATE or DELETE that needs none of this update's other writes.

        The worker runs these beside the done mark, in one statement (one round trip, no
        transaction), after any `execute` and `add` writes. They all see the database as it
        was before that statement, so two of them must never touch the same row.
        """
        if ";" in sql:
            raise ValueError("one statement, without a semicolon")
        self.statements.append((sql, args))

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
        self.calls.append((chat_id, method, params, priority, not_before, ref, uses_ref))

    def call_arrays(self) -> list[list[Any]]:
        """The queued calls as the column arrays ENQUEUE and DONE_AND_ENQUEUE take ($3-$9)."""
        return [[c[i] for c in self.calls] for i in range(7)]

    async def commit(self, pool: asyncpg.Pool) -> None:
        """Apply the writes and queue the calls in one transaction (outside a worker)."""
        async with pool.acquire() as conn, conn.transaction():
            for write in self.writes:
                await write(conn)
            for sql, args in self.statements:
                await conn.execute(sql, *args)
            if self.calls:
                await conn.execute(ENQUEUE, self.bot_id, self.inbox_id, *self.call_arrays())


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
