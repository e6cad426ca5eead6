"""Outbox SQL: what a bot's sender reads and how it records what happened."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg

FETCH = """
SELECT o.id, o.chat_id, o.method, o.params, o.ref, o.uses_ref, o.attempts,
       r.message_id AS ref_message_id
FROM outbox o
LEFT JOIN message_refs r ON r.bot_id = o.bot_id AND r.ref = o.uses_ref
WHERE o.bot_id = $1 AND o.status = 'pending' AND o.not_before <= now()
  AND o.id <> ALL ($3::bigint[])
  AND EXISTS (SELECT 1 FROM leases l WHERE l.name = $4 AND l.owner = $5 AND l.expires_at > now())
ORDER BY o.priority, o.id
LIMIT $2
"""
FIND_REF = "SELECT message_id FROM message_refs WHERE bot_id = $1 AND ref = $2"

FINISH = """
UPDATE outbox o SET status = f.status, error = f.error, result_message_id = f.message_id,
                    attempts = o.attempts + f.tries, sent_at = clock_timestamp()
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::int[])
     AS f (id, status, error, message_id, tries)
WHERE o.id = f.id AND o.status = 'pending'
"""
SAVE_REFS = """
INSERT INTO message_refs (bot_id, ref, chat_id, message_id)
SELECT $1, r.ref, r.chat_id, r.message_id
FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS r (ref, chat_id, message_id)
ON CONFLICT (bot_id, ref) DO UPDATE
SET chat_id = excluded.chat_id, message_id = excluded.message_id, created_at = now()
"""
MARK_BLOCKED = """
INSERT INTO people (bot_id, user_id, blocked_at)
SELECT $1, u, now() FROM unnest($2::bigint[]) u
ON CONFLICT (bot_id, user_id) DO UPDATE SET blocked_at = now()
"""
COUNT_SENDS = """
INSERT INTO send_stats (bot_id, minute, sent, failed, throttled)
VALUES ($1, date_trunc('minute', now()), $2, $3, $4)
ON CONFLICT (bot_id, minute) DO UPDATE
SET sent = send_stats.sent + excluded.sent, failed = send_stats.failed + excluded.failed,
    throttled = send_stats.throttled + excluded.throttled
"""


@dataclass(slots=True)
class OutboxRow:
    """A queued Bot API call."""

    id: int
    chat_id: int
    method: str
    params: dict[str, Any]
    ref: str | None
    uses_ref: str | None
    attempts: int
    ref_message_id: int | None


@dataclass(slots=True)
class Outcome:
    """What happened to one row."""

    id: int
    status: str  # sent | failed
    error: str | None = None
    message_id: int | None = None
    tries: int = 1


@dataclass(slots=True)
class BatchRecord:
    """Completions gathered between two writes."""

    outcomes: list[Outcome]
    refs: list[tuple[str, int, int]]
    blocked: list[int]
    throttled: int = 0


async def fetch(
    pool: asyncpg.Pool, bot_id: int, limit: int, skip: list[int], lease: tuple[str, str]
) -> list[OutboxRow]:
    """Due rows of one bot, replies before broadcasts, skipping rows already in hand; nothing
    unless `lease` (name, owner) is still held."""
    rows = await pool.fetch(FETCH, bot_id, limit, skip, *lease)
    return [
        OutboxRow(
            r["id"],
            r["chat_id"],
            r["method"],
            r["params"],
            r["ref"],
            r["uses_ref"],
            r["attempts"],
            r["ref_message_id"],
        )
        for r in rows
    ]


async def record(pool: asyncpg.Pool, bot_id: int, batch: BatchRecord) -> None:
    """Write a batch of completions, remembered message ids and blocked people at once."""
    done = batch.outcomes
    sent = sum(1 for o in done if o.status == "sent")
    async with pool.acquire() as conn, conn.transaction():
        if done:
            await conn.execute(
                FINISH,
                [o.id for o in done],
                [o.status for o in done],
                [o.error for o in done],
                [o.message_id for o in done],
                [o.tries for o in done],
            )
        if batch.refs:
            await conn.execute(
                SAVE_REFS,
                bot_id,
                [r[0] for r in batch.refs],
                [r[1] for r in batch.refs],
                [r[2] for r in batch.refs],
            )
        if batch.blocked:
            await conn.execute(MARK_BLOCKED, bot_id, sorted(set(batch.blocked)))
        if done or batch.throttled:
            await conn.execute(COUNT_SENDS, bot_id, sent, len(done) - sent, batch.throttled)
