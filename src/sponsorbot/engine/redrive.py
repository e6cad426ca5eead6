"""Re-drive: give dead updates and given-up messages another go, when the owner says so.

An update is dead after `max_attempts` real failures, or after being retried for
`retry_for_h` hours of transient ones (a long outage of Telegram or the network). A message is
failed for good after the same hours of network errors. Once the cause is fixed the owner
re-drives them (`sponsorbot redrive`, the panel, the owner API): updates go back to the
queue with a fresh retry time, each still in its person's order; messages that Telegram
refused for a reason of its own (blocked, chat not found) are not sent again.

Unless told how far back (`since`, by arrival), a re-drive takes only what gave up within the
last `WINDOW` (ADR 0005): failures older than that are stale, and messages days old should
not go out because an owner pressed a button. The engine does not know what a message belongs
to: a feature names the rows that must stay failed (a cancelled broadcast's) by a statement of
its own, a hold (`Feature.redrive_holds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg

from sponsorbot.engine.notify import CHANNEL, NOTIFY_MANY
from sponsorbot.engine.sender import GAVE_UP

# How far back a re-drive reaches when not told: counted from when a row gave up, not from its
# arrival, since a message retried for `retry_for_h` (24 h by default) is that old when it does.
WINDOW = timedelta(hours=24)

# $1: one bot or all (NULL); $2: only what was received (queued) at or after this time; $3:
# only what gave up at or after this time (dead: handled_at; failed: sent_at); $4: the error
# of a message given up. Each statement answers the bots it touched, so exactly their workers
# and senders are woken.
_DEAD = """status = 'dead' AND ($1::bigint IS NULL OR bot_id = $1)
      AND ($2::timestamptz IS NULL OR received_at >= $2)
      AND ($3::timestamptz IS NULL OR handled_at >= $3)"""
# {held}: the features' holds (_HELD), each a condition on the row `o`.
_GIVEN_UP = """o.status = 'failed' AND o.error = $4 AND ($1::bigint IS NULL OR o.bot_id = $1)
      AND ($2::timestamptz IS NULL OR o.created_at >= $2)
      AND ($3::timestamptz IS NULL OR o.sent_at >= $3){held}"""
# A hold answers (bot_id, outbox_id) of rows a re-drive leaves failed.
_HELD = """
      AND NOT EXISTS (SELECT 1 FROM ({hold}) h (bot_id, outbox_id)
                      WHERE h.bot_id = o.bot_id AND h.outbox_id = o.id)"""

_UPDATES = f"""
WITH u AS (
    UPDATE inbox SET status = 'pending', failures = 0, retry_since = now(),
                     next_attempt_at = now(), handled_at = NULL
    WHERE {_DEAD}
    RETURNING bot_id
)
SELECT bot_id, count(*) AS n FROM u GROUP BY bot_id
"""
_MESSAGES = f"""
WITH u AS (
    -- A broadcast row was claimed (taken_at) before it gave up: unclaimed, it is sent again.
    UPDATE outbox o SET status = 'pending', sent_at = NULL, error = NULL, taken_at = NULL
    WHERE {_GIVEN_UP}
    RETURNING o.bot_id
)
SELECT bot_id, count(*) AS n FROM u GROUP BY bot_id
"""
_COUNT = f"""
SELECT (SELECT count(*) FROM inbox WHERE {_DEAD}) AS updates,
       (SELECT count(*) FROM outbox o WHERE {_GIVEN_UP}) AS messages
"""


@dataclass(frozen=True, slots=True)
class Redriven:
    """How many updates and messages went back to their queues (or would, when counting)."""

    updates: int
    messages: int


def _held(holds: Sequence[str]) -> str:
    """The holds as the {held} of the statements above."""
    return "".join(_HELD.format(hold=hold) for hold in holds)


def _window(since: datetime | None) -> tuple[datetime | None, datetime | None]:
    """(arrived since, gave up since): `since` when given, else the last `WINDOW`."""
    return (since, None) if since is not None else (None, datetime.now(UTC) - WINDOW)


async def redrive(
    pool: asyncpg.Pool,
    bot_id: int | None = None,
    since: datetime | None = None,
    holds: Sequence[str] = (),
) -> Redriven:
    """Queue dead updates and given-up messages again (of one bot; what arrived since a time,
    else what gave up in the last `WINDOW`), but the messages a hold names; wakes the workers
    and senders."""
    window = _window(since)
    async with pool.acquire() as conn, conn.transaction():
        updates = await conn.fetch(_UPDATES, bot_id, *window)
        messages = await conn.fetch(_MESSAGES.format(held=_held(holds)), bot_id, *window, GAVE_UP)
        keys = ["inbox"] if updates else []
        keys += [f"outbox:{r['bot_id']}" for r in messages]
        if keys:
            await conn.execute(NOTIFY_MANY, CHANNEL, "redrive", keys)
    return Redriven(sum(r["n"] for r in updates), sum(r["n"] for r in messages))


async def waiting(
    pool: asyncpg.Pool,
    bot_id: int | None = None,
    since: datetime | None = None,
    holds: Sequence[str] = (),
) -> Redriven:
    """How many a re-drive would queue again now (the same arguments)."""
    row = await pool.fetchrow(_COUNT.format(held=_held(holds)), bot_id, *_window(since), GAVE_UP)
    return Redriven(int(row["updates"]), int(row["messages"]))
