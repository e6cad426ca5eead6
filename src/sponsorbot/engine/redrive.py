"""Re-drive: give dead updates and given-up messages another go, when the owner says so.

An update is dead after `max_attempts` real failures, or after being retried for
`retry_for_h` hours of transient ones (a long outage of Telegram or the network). A message is
failed for good after the same hours of network errors. Once the cause is fixed the owner
re-drives them (`sponsorbot redrive`, the panel, the owner API): updates go back to the
queue with a fresh retry time, each still in its person's order; messages that Telegram
refused for a reason of its own (blocked, chat not found) are not sent again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from sponsorbot.engine.notify import CHANNEL, NOTIFY_MANY
from sponsorbot.engine.sender import GAVE_UP

# $1: one bot or all (NULL); $2: only what was received (queued) at or after this time. Each
# answers the bots it touched, so exactly their workers and senders are woken.
_UPDATES = """
WITH u AS (
    UPDATE inbox SET status = 'pending', failures = 0, retry_since = now(),
                     next_attempt_at = now(), handled_at = NULL
    WHERE status = 'dead' AND ($1::bigint IS NULL OR bot_id = $1)
      AND ($2::timestamptz IS NULL OR received_at >= $2)
    RETURNING bot_id
)
SELECT bot_id, count(*) AS n FROM u GROUP BY bot_id
"""
_MESSAGES = """
WITH u AS (
    -- A broadcast row was claimed (taken_at) before it gave up: unclaimed, it is sent again.
    UPDATE outbox SET status = 'pending', sent_at = NULL, error = NULL, taken_at = NULL
    WHERE status = 'failed' AND error = $3 AND ($1::bigint IS NULL OR bot_id = $1)
      AND ($2::timestamptz IS NULL OR created_at >= $2)
    RETURNING bot_id
)
SELECT bot_id, count(*) AS n FROM u GROUP BY bot_id
"""
COUNT = """
SELECT (SELECT count(*) FROM inbox
        WHERE status = 'dead' AND ($1::bigint IS NULL OR bot_id = $1)
          AND ($2::timestamptz IS NULL OR received_at >= $2)) AS updates,
       (SELECT count(*) FROM outbox
        WHERE status = 'failed' AND error = $3 AND ($1::bigint IS NULL OR bot_id = $1)
          AND ($2::timestamptz IS NULL OR created_at >= $2)) AS messages
"""


@dataclass(frozen=True, slots=True)
class Redriven:
    """How many updates and messages went back to their queues (or would, when counting)."""

    updates: int
    messages: int


async def redrive(
    pool: asyncpg.Pool, bot_id: int | None = None, since: datetime | None = None
) -> Redriven:
    """Queue dead updates and given-up messages again (of one bot, since a time); wakes the
    workers and senders."""
    async with pool.acquire() as conn, conn.transaction():
        updates = await conn.fetch(_UPDATES, bot_id, since)
        messages = await conn.fetch(_MESSAGES, bot_id, since, GAVE_UP)
        keys = ["inbox"] if updates else []
        keys += [f"outbox:{r['bot_id']}" for r in messages]
        if keys:
            await conn.execute(NOTIFY_MANY, CHANNEL, "redrive", keys)
    return Redriven(sum(r["n"] for r in updates), sum(r["n"] for r in messages))


async def waiting(
    pool: asyncpg.Pool, bot_id: int | None = None, since: datetime | None = None
) -> Redriven:
    """How many a re-drive would queue again now."""
    row = await pool.fetchrow(COUNT, bot_id, since, GAVE_UP)
    return Redriven(int(row["updates"]), int(row["messages"]))
