"""Outbox SQL: what a bot's sender reads and how it records what happened."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import asyncpg

from sponsorbot.engine.commits import GroupCommit

_CALL_COLUMNS = "bot_id, chat_id, method, params, priority, not_before, ref, uses_ref, inbox_id"
_QUEUED = f"""
INSERT INTO outbox ({_CALL_COLUMNS})
SELECT $1, s.chat_id, s.method, s.params, s.priority, COALESCE(s.not_before, now()), s.ref,
       s.uses_ref, $2
FROM {{source}} unnest($3::bigint[], $4::text[], $5::jsonb[], $6::int[], $7::timestamptz[],
                     $8::text[], $9::text[]) WITH ORDINALITY
     AS s (chat_id, method, params, priority, not_before, ref, uses_ref, n)
ORDER BY s.n
"""
# Queue the calls of one unit of work in one statement, in the order they were asked for.
ENQUEUE = _QUEUED.format(source="")
# The same, after a CTE named `done` (inbox.DONE_AND_ENQUEUE): queued only if the mark took.
ENQUEUE_IF_DONE = _QUEUED.format(source="done,")

# Rows of this priority and above are background work (broadcasts): sent only with what the
# bot's limit leaves free, claimed just before they are sent, and withdrawable until then.
BACKGROUND = 10
# What a sender records for a row it finds claimed by a predecessor that stopped without an
# outcome: the message may have gone, so it is not sent again (at most once).
UNKNOWN = "unknown: the sender stopped while sending it; not sent again"
# A feature may withdraw (delete) a background row while it is pending and taken_at is NULL.


def background_key(bot_id: int) -> str:
    """The wake-up key of a bot's background sending (new background rows are queued)."""
    return f"outbox-bg:{bot_id}"


FETCH = f"""
SELECT o.id, o.chat_id, o.method, o.params, o.ref, o.uses_ref, o.attempts,
       r.message_id AS ref_message_id
FROM outbox o
LEFT JOIN message_refs r ON r.bot_id = o.bot_id AND r.ref = o.uses_ref
WHERE o.bot_id = $1 AND o.status = 'pending' AND o.not_before <= now()
  AND o.priority < {BACKGROUND} AND o.id <> ALL ($3::bigint[])
  AND EXISTS (SELECT 1 FROM leases l WHERE l.name = $4 AND l.owner = $5 AND l.expires_at > now())
ORDER BY o.priority, o.id
LIMIT $2
"""
# Claim the next background rows, at most $2, while the lease ($3, $4) is ours. Rows a
# withdrawal holds are skipped; a claimed row is never withdrawn (the DELETE rechecks
# taken_at after waiting for our lock).
CLAIM_BACKGROUND = f"""
WITH taken AS (
    UPDATE outbox o SET taken_at = statement_timestamp()
    WHERE o.id IN (
        SELECT id FROM outbox
        WHERE bot_id = $1 AND status = 'pending' AND priority >= {BACKGROUND}
          AND taken_at IS NULL AND not_before <= now()
          AND EXISTS (SELECT 1 FROM leases l
                      WHERE l.name = $3 AND l.owner = $4 AND l.expires_at > now())
        ORDER BY priority, id
        LIMIT $2
        FOR UPDATE SKIP LOCKED)
    RETURNING o.id, o.chat_id, o.method, o.params, o.ref, o.uses_ref, o.attempts
)
SELECT *, NULL::bigint AS ref_message_id FROM taken ORDER BY id
"""
# On one server the row is found by id alone (naming the bot as well made a broadcast go on
# sending after its pause in some runs of test_broadcasts.py, not understood); on Citus the
# bot's id makes it a single-shard statement (db/pool.on_citus, asked when the sender starts).
CLAIM_BACKGROUND_CITUS = CLAIM_BACKGROUND.replace(
    "WHERE o.id IN (", "WHERE o.bot_id = $1 AND o.id IN ("
)
# Background rows claimed before and never finished: their sender stopped (or lost its lease)
# between the claim and the record. Run by a new holder of the lease before it claims anything.
ABANDONED = f"""
UPDATE outbox SET status = 'failed', error = '{UNKNOWN}', sent_at = statement_timestamp()
WHERE bot_id = $1 AND status = 'pending' AND taken_at IS NOT NULL AND priority >= {BACKGROUND}
  AND EXISTS (SELECT 1 FROM leases l WHERE l.name = $2 AND l.owner = $3 AND l.expires_at > now())
"""
# Claimed rows this sender never tried (it is stopping): back to the queue for the next one.
RELEASE = "UPDATE outbox SET taken_at = NULL WHERE id = ANY ($1::bigint[]) AND status = 'pending'"
FIND_REF = "SELECT message_id FROM message_refs WHERE bot_id = $1 AND ref = $2"

# A batch of completions in one statement (atomic on its own): the rows' outcomes, the message
# ids later rows refer to, the people who blocked the bot, and the minute's counters. The rows
# are named as an array the primary key can look up, and the status as a subquery's value, so
# that no partial index on status can be matched: under load those hold every row that went
# through that status since the last vacuum, and the plan PostgreSQL chose read one whole
# (auto_explain: 416-438 buffer hits, 0.7-1.0 ms per batch of 3-4 rows; 58-84 and 0.2 ms now).
RECORD = """
WITH finished AS (
    UPDATE outbox o SET status = f.status, error = f.error, result_message_id = f.message_id,
                        attempts = o.attempts + f.tries, sent_at = statement_timestamp()
    FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::int[])
         AS f (id, status, error, message_id, tries)
    WHERE o.id = f.id AND o.id = ANY ($2::bigint[])
      AND o.status = (SELECT 'pending'::text)
    RETURNING 1
), refs AS (
    INSERT INTO message_refs (bot_id, ref, chat_id, message_id)
    SELECT $1, r.ref, r.chat_id, r.message_id
    FROM unnest($7::text[], $8::bigint[], $9::bigint[]) AS r (ref, chat_id, message_id)
    ON CONFLICT (bot_id, ref) DO UPDATE
    SET chat_id = excluded.chat_id, message_id = excluded.message_id,
        created_at = excluded.created_at
    RETURNING 1
), blocked AS (
    INSERT INTO people (bot_id, user_id, blocked_at)
    SELECT $1, u, now() FROM unnest($10::bigint[]) u
    ON CONFLICT (bot_id, user_id) DO UPDATE SET blocked_at = excluded.blocked_at
    RETURNING 1
), counted AS (
    INSERT INTO send_stats (bot_id, minute, sent, failed, throttled)
    SELECT $1, date_trunc('minute', now()), $11::int, $12::int, $13::int
    WHERE $11::int + $12::int + $13::int > 0
    ON CONFLICT (bot_id, minute) DO UPDATE
    SET sent = send_stats.sent + excluded.sent, failed = send_stats.failed + excluded.failed,
        throttled = send_stats.throttled + excluded.throttled
    RETURNING 1
)
SELECT count(*) FROM finished
"""
# By id alone on one server, and by the bot too on Citus (as CLAIM_BACKGROUND).
RECORD_CITUS = RECORD.replace("WHERE o.id = f.id AND", "WHERE o.bot_id = $1 AND o.id = f.id AND")
# On Citus the record goes in steps, in one transaction, each a single-shard (router) statement:
# Citus plans RECORD's data-modifying CTEs as a distributed subplan each, through the coordinator
# (29 ms a call under load), and an INSERT ... SELECT from arrays by pulling the rows to the
# coordinator, so the inserts of up to VALUES_MOST rows go as rows of VALUES.
FINISH_STEP = RECORD_CITUS[RECORD_CITUS.index("UPDATE") : RECORD_CITUS.index("RETURNING 1")]
COUNT_STEP = """
INSERT INTO send_stats (bot_id, minute, sent, failed, throttled)
VALUES ($1, date_trunc('minute', now()), $2::int, $3::int, $4::int)
ON CONFLICT (bot_id, minute) DO UPDATE
SET sent = send_stats.sent + excluded.sent, failed = send_stats.failed + excluded.failed,
    throttled = send_stats.throttled + excluded.throttled
"""
# The calls of one unit of work after the mark took, on Citus ($1 bot, $2 inbox row, $3-$9
# unit.call_arrays; `enqueue_values` up to VALUES_MOST calls).
ENQUEUE_STEP = f"{ENQUEUE} RETURNING id"
_CALL_ROW = (
    "($1, {}::bigint, {}::text, {}::jsonb, {}::int, COALESCE({}::timestamptz, now()), {}::text,"
    " {}::text, $2)"
)
_REF_ROW = "($1, {}::text, {}::bigint, {}::bigint)"
_BLOCKED_ROW = "($1, {}::bigint, now())"
VALUES_MOST = 16


def values_rows(n: int, row: str, first: int) -> str:
    """`n` rows of VALUES from the template `row`, whose {0}, {1}, ... are one row's parameters,
    numbered from `first` on (for statements whose rows vary in number; never user input)."""
    width = row.count("{")
    return ", ".join(
        row.format(*(f"${first + width * i + k}" for k in range(width))) for i in range(n)
    )


@functools.lru_cache(maxsize=VALUES_MOST)
def enqueue_values(n: int) -> str:
    """ENQUEUE_STEP for `n` calls as rows of VALUES, in call order, which their ids follow: $1
    bot, $2 inbox row, then per call its chat, method, params, priority, not_before, ref and
    uses_ref (unit.call_values)."""
    if not 1 <= n <= VALUES_MOST:
        raise ValueError(f"between 1 and {VALUES_MOST} calls, not {n}")
    rows = values_rows(n, _CALL_ROW, 3)
    return f"INSERT INTO outbox ({_CALL_COLUMNS}) VALUES {rows} RETURNING id"


@functools.lru_cache(maxsize=VALUES_MOST)
def refs_values(n: int) -> str:
    """Remember `n` message ids as rows of VALUES: $1 bot, then per reference its key, chat
    and message id (RECORD's `refs` on Citus)."""
    rows = values_rows(n, _REF_ROW, 2)
    return f"""
INSERT INTO message_refs (bot_id, ref, chat_id, message_id) VALUES {rows}
ON CONFLICT (bot_id, ref) DO UPDATE
SET chat_id = excluded.chat_id, message_id = excluded.message_id, created_at = excluded.created_at
"""


@functools.lru_cache(maxsize=VALUES_MOST)
def blocked_values(n: int) -> str:
    """Mark `n` people who blocked the bot, as rows of VALUES: $1 bot, then their ids
    (RECORD's `blocked` on Citus)."""
    rows = values_rows(n, _BLOCKED_ROW, 2)
    return f"""
INSERT INTO people (bot_id, user_id, blocked_at) VALUES {rows}
ON CONFLICT (bot_id, user_id) DO UPDATE SET blocked_at = excluded.blocked_at
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


def _rows(records: list[asyncpg.Record]) -> list[OutboxRow]:
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
        for r in records
    ]


async def fetch(
    pool: asyncpg.Pool, bot_id: int, limit: int, skip: list[int], lease: tuple[str, str]
) -> list[OutboxRow]:
    """Due rows of one bot, replies before broadcasts, skipping rows already in hand; nothing
    unless `lease` (name, owner) is still held."""
    return _rows(await pool.fetch(FETCH, bot_id, limit, skip, *lease))


async def claim_background(
    pool: asyncpg.Pool, bot_id: int, limit: int, lease: tuple[str, str], citus: bool = False
) -> list[OutboxRow]:
    """Claim up to `limit` due background rows of one bot, oldest first (nothing unless the
    lease is ours). Background rows never refer to earlier messages. `citus`: the database is
    a Citus coordinator."""
    sql = CLAIM_BACKGROUND_CITUS if citus else CLAIM_BACKGROUND
    return _rows(await pool.fetch(sql, bot_id, limit, *lease))


async def record(
    pool: asyncpg.Pool,
    bot_id: int,
    batch: BatchRecord,
    citus: bool = False,
    commits: GroupCommit | None = None,
) -> None:
    """Write a batch of completions, remembered message ids and blocked people at once
    (`citus`: the database is a Citus coordinator), in `commits`' next batch if given."""
    done = batch.outcomes
    sent = sum(1 for o in done if o.status == "sent")
    # One row per key: ON CONFLICT cannot touch a row twice in one statement, and a batch that
    # fails for it would be retried, and fail, for ever. The latest message id wins.
    refs = list({ref: (ref, chat, message) for ref, chat, message in batch.refs}.values())
    blocked = sorted(set(batch.blocked))
    outcomes = (
        [o.id for o in done],
        [o.status for o in done],
        [o.error for o in done],
        [o.message_id for o in done],
        [o.tries for o in done],
    )
    counts = (sent, len(done) - sent, batch.throttled)
    if citus:
        await _record_in_steps(pool, bot_id, outcomes, refs, blocked, counts)
        return
    args = (
        bot_id,
        *outcomes,
        [r[0] for r in refs],
        [r[1] for r in refs],
        [r[2] for r in refs],
        blocked,
        *counts,
    )
    if commits is None:
        await pool.execute(RECORD, *args)
    else:
        await commits.run(RECORD, args, bot_id)


async def _record_in_steps(
    pool: asyncpg.Pool,
    bot_id: int,
    outcomes: tuple[list[Any], ...],
    refs: list[tuple[str, int, int]],
    blocked: list[int],
    counts: tuple[int, int, int],
) -> None:
    """RECORD on Citus: its parts as single-shard statements in one transaction (FINISH_STEP)."""
    async with pool.acquire() as conn, conn.transaction():
        if outcomes[0]:
            await conn.execute(FINISH_STEP, bot_id, *outcomes)
        for start in range(0, len(refs), VALUES_MOST):
            part = refs[start : start + VALUES_MOST]
            await conn.execute(refs_values(len(part)), bot_id, *(v for ref in part for v in ref))
        for start in range(0, len(blocked), VALUES_MOST):
            people = blocked[start : start + VALUES_MOST]
            await conn.execute(blocked_values(len(people)), bot_id, *people)
        if any(counts):
            await conn.execute(COUNT_STEP, bot_id, *counts)
