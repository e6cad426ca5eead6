"""The inbox: one row per update, claimed in order per person, in parallel across people."""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass
from typing import Any

import asyncpg

from sponsorbot.db.pool import on_citus
from sponsorbot.engine.outbox import BACKGROUND, ENQUEUE_IF_DONE, VALUES_MOST, values_rows
from sponsorbot.engine.updates import Classified, classify

# Dedupe is (bot_id, update_id), and a redelivery is never older than a day (Telegram keeps an
# undelivered update 24 hours). A finished row two days old with the same id is another update
# (ids restart at random after a week without updates, ADR 0002; dead rows are kept
# for a month): the new one takes its place instead of being dropped as a duplicate, with a
# new id, so that it queues behind whatever that person sent before it. Its times come from
# the row proposed (`excluded`, the columns' defaults), which Citus accepts as well: it refuses
# any function but an immutable one in DO UPDATE and its WHERE (timestamptz - interval is only
# stable; timestamptz - timestamptz is immutable).
_REUSE = """
ON CONFLICT (bot_id, update_id) DO UPDATE
SET {new_id}kind = excluded.kind, chat_key = excluded.chat_key, payload = excluded.payload,
    status = 'pending', attempts = 0, failures = 0, next_attempt_at = excluded.next_attempt_at,
    locked_until = NULL, received_at = excluded.received_at, handled_at = NULL, error = NULL,
    retry_since = NULL, claimed_by = NULL
WHERE inbox.status IN ('done', 'dead')
  AND excluded.received_at - inbox.received_at > interval '2 days'
"""
REUSE = _REUSE.format(new_id="id = DEFAULT, ")
# On Citus the reused row keeps its id: DEFAULT is a nextval() there, which Citus refuses in
# DO UPDATE, and an identity column takes no other value. It may then be claimed before
# updates of the same person stored after the old row (docs/scaling.md).
REUSE_CITUS = _REUSE.format(new_id="")


@dataclass(frozen=True, slots=True)
class Inserts:
    """The intake's statements with one REUSE: one update, one as JSON text, one bot's batch."""

    one: str
    text: str
    many: str
    many_text: str


_ONE = """
INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload)
VALUES ($1, $2, $3, $4, $5)"""
# The payload as the JSON text that arrived (the webhook intake parsed it once, to check it).
_TEXT = """
INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload)
VALUES ($1, $2, $3, $4, $5::text::jsonb)"""
_MANY = """
INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload)
SELECT $1, u.update_id, u.kind, u.chat_key, u.payload
FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::jsonb[])
     AS u (update_id, kind, chat_key, payload)"""
# One bot's webhook updates as JSON text, in arrival order (the webhook intake on Citus).
_MANY_TEXT = """
INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload)
SELECT $1, u.update_id, u.kind, u.chat_key, u.payload::jsonb
FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::text[]) WITH ORDINALITY
     AS u (update_id, kind, chat_key, payload, n)
ORDER BY u.n"""
INSERT = f"{_ONE}{REUSE}"
INSERT_TEXT = f"{_TEXT}{REUSE}"
INSERT_MANY = f"{_MANY}{REUSE}"
INSERT_MANY_TEXT = f"{_MANY_TEXT}{REUSE}"
INSERT_CITUS = f"{_ONE}{REUSE_CITUS}"
INSERT_TEXT_CITUS = f"{_TEXT}{REUSE_CITUS}"
INSERT_MANY_CITUS = f"{_MANY}{REUSE_CITUS}"
INSERT_MANY_TEXT_CITUS = f"{_MANY_TEXT}{REUSE_CITUS}"
# By whether the database is a Citus coordinator (db/pool.on_citus, asked once at start).
INSERTS = {
    False: Inserts(INSERT, INSERT_TEXT, INSERT_MANY, INSERT_MANY_TEXT),
    True: Inserts(INSERT_CITUS, INSERT_TEXT_CITUS, INSERT_MANY_CITUS, INSERT_MANY_TEXT_CITUS),
}

_INBOX_COLUMNS = "bot_id, update_id, kind, chat_key, payload"
_TEXT_ROW = "($1, {}::bigint, {}::text, {}::bigint, {}::text::jsonb)"


@functools.lru_cache(maxsize=VALUES_MOST)
def insert_text_values(n: int) -> str:
    """One bot's `n` webhook updates as rows of VALUES, in arrival order (the webhook intake on
    Citus): $1 bot, then per update its id, kind, chat key and JSON text. From arrays
    (`Inserts.many_text`) Citus runs an INSERT ... SELECT through the coordinator; rows of
    VALUES are a router statement on the bot's shard."""
    if not 1 <= n <= VALUES_MOST:
        raise ValueError(f"between 1 and {VALUES_MOST} updates, not {n}")
    rows = values_rows(n, _TEXT_ROW, 2)
    return f"INSERT INTO inbox ({_INBOX_COLUMNS}) VALUES {rows}{REUSE_CITUS}"


# Three steps, and each claimed row's person's open conversation (conversation.READ, `talk`:
# `{}` when none is open), which a filter of nearly every message asks for: read here, it
# costs no round trip of its own. `due`: the oldest waiting rows, plus rows whose worker died
# with them in hand; each branch an ordered, limited scan of its own partial index.
# `candidates`: per person the earliest, only if nothing of theirs is in hand and nothing
# earlier still waits (a row waiting out a retry delay holds its person's queue); OFFSET 0
# keeps those checks index probes per candidate instead of a hash anti-join over the whole
# queue. `locked`: repeats the status conditions, because after skipping or waiting for a lock
# PostgreSQL rechecks only the conditions of that step.
CLAIM = """
WITH due AS (
    (SELECT i.id, i.bot_id, i.chat_key FROM inbox i
     WHERE i.status = 'pending' AND i.next_attempt_at <= now() AND i.bot_id = ANY ($3::bigint[])
     ORDER BY i.id LIMIT $1)
    UNION ALL
    (SELECT i.id, i.bot_id, i.chat_key FROM inbox i
     WHERE i.status = 'processing' AND i.locked_until < now() AND i.bot_id = ANY ($3::bigint[])
     ORDER BY i.locked_until LIMIT $1)
), candidates AS (
    SELECT c.id FROM (
        SELECT DISTINCT ON (d.bot_id, d.chat_key) d.id
        FROM due d
        WHERE NOT EXISTS (
              SELECT 1 FROM inbox p
              WHERE p.status = 'processing' AND p.bot_id = d.bot_id
                AND p.chat_key = d.chat_key AND p.id <> d.id OFFSET 0)
          AND NOT EXISTS (
              SELECT 1 FROM inbox e
              WHERE e.status = 'pending' AND e.bot_id = d.bot_id
                AND e.chat_key = d.chat_key AND e.id < d.id OFFSET 0)
        ORDER BY d.bot_id, d.chat_key, d.id
    ) c
    ORDER BY c.id
    LIMIT $2
), locked AS (
    SELECT i.id FROM inbox i
    WHERE i.id = ANY (ARRAY (SELECT id FROM candidates))
      AND ((i.status = 'pending' AND i.next_attempt_at <= now())
           OR (i.status = 'processing' AND i.locked_until < now()))
    FOR UPDATE SKIP LOCKED
)
UPDATE inbox SET status = 'processing',
                 locked_until = now() + make_interval(secs => $4),
                 attempts = inbox.attempts + 1, claimed_by = $5
WHERE inbox.id = ANY (ARRAY (SELECT id FROM locked))
RETURNING inbox.id, inbox.bot_id, inbox.update_id, inbox.kind, inbox.chat_key,
          inbox.payload, inbox.attempts, inbox.received_at,
          COALESCE((SELECT jsonb_build_object('state', v.state, 'data', v.data,
                                              'expires_at', extract(epoch FROM v.expires_at))
                    FROM conversations v
                    WHERE v.bot_id = inbox.bot_id AND v.user_id = inbox.chat_key
                      AND v.expires_at > now()), '{}') AS talk
"""


@functools.lru_cache(maxsize=16)
def claim_with(read_aheads: tuple[tuple[str, str], ...]) -> str:
    """CLAIM with each claimed row's read-ahead (Router.read_ahead) as an `ahead` column.

    The kinds and subqueries are our own constants, so the set of statements stays small.
    """
    if not read_aheads:
        return CLAIM
    head, _, update = CLAIM.partition("UPDATE inbox SET status = 'processing'")
    cases = " ".join(f"WHEN {_quoted(kind)} THEN ({sql})" for kind, sql in read_aheads)
    return (
        f"{head.rstrip()}, claimed AS (UPDATE inbox SET status = 'processing'{update})\n"
        f"SELECT c.*, CASE c.kind {cases} END AS ahead FROM claimed c"
    )


# Under Citus, FOR UPDATE SKIP LOCKED works only in a statement that stays on one shard: the
# claim goes one bot at a time ($3 one id), with every inbox row and read-ahead it touches tied
# to that id, so Citus sends the statement whole to the bot's shard. On one server the claim
# over all of a worker's bots stays one statement (one round trip).
_ONE_BOT = (
    ("= ANY ($3::bigint[])", "= $3::bigint", 2),
    ("p.bot_id = d.bot_id", "p.bot_id = $3::bigint", 1),
    ("v.bot_id = inbox.bot_id", "v.bot_id = $3::bigint", 1),
    ("e.bot_id = d.bot_id", "e.bot_id = $3::bigint", 1),
    (
        "WHERE i.id = ANY (ARRAY (SELECT",
        "WHERE i.bot_id = $3::bigint AND i.id = ANY (ARRAY (SELECT",
        1,
    ),
    (
        "WHERE inbox.id = ANY (ARRAY (SELECT",
        "WHERE inbox.bot_id = $3::bigint AND inbox.id = ANY (ARRAY (SELECT",
        1,
    ),
)


@functools.lru_cache(maxsize=16)
def one_bot(sql: str) -> str:
    """CLAIM or claim_with(...) for one bot's id as $3 (a Citus cluster; see _ONE_BOT)."""
    for old, new, count in _ONE_BOT:
        if sql.count(old) != count:
            raise ValueError(f"not a claim: {old!r} appears {sql.count(old)} times")
        sql = sql.replace(old, new)
    # The read-aheads name the claimed row's bot as c.bot_id.
    return sql.replace("c.bot_id", "$3::bigint")


def _quoted(kind: str) -> str:
    if not kind.replace("_", "").isalnum():
        raise ValueError(f"not an update kind: {kind!r}")
    return f"'{kind}'"


# Marking done (DONE_AND_ENQUEUE) and failed are both guarded by attempts: if our lock expired
# and another worker took the row, nothing matches, and our writes roll back.

# Mark the update done and queue its calls in one statement (one round trip, and atomic on its
# own when the handler wrote nothing else); the calls are queued only if the mark took. It also
# returns the new outbox ids, in call order, and the ids of older due rows of the same chats
# (the statement does not see its own inserts), for the hand-off to a local sender; and whether
# the same person has another update due (`next`), which was passed over while this one was in
# hand: the worker claims again at once instead of at its next poll.
# The mark ({attempts}: the parameter holding the attempt we claimed) and the older due rows of
# the chats in {chats}: pieces of DONE_AND_ENQUEUE and of the steps on Citus (MARK_DONE).
_MARK = """UPDATE inbox
    SET status = 'done', handled_at = statement_timestamp(), locked_until = NULL, error = NULL
    WHERE id = $2 AND bot_id = $1 AND status = 'processing' AND attempts = {attempts}"""
_OLDER = f"""SELECT o.id FROM outbox o
             WHERE o.bot_id = $1 AND o.status = 'pending' AND o.chat_id = ANY ({{chats}}::bigint[])
               AND o.not_before <= now() AND o.priority < {BACKGROUND}
             ORDER BY o.id"""
_DONE = f"""
done AS (
    {_MARK.format(attempts="$10")}
    RETURNING id, chat_key
), queued AS ({ENQUEUE_IF_DONE} RETURNING id)
"""
_RESULT = f""", ARRAY(SELECT q.id FROM queued q ORDER BY q.id) AS ids,
       ARRAY({_OLDER.format(chats="$3")}) AS before,
       EXISTS (SELECT 1 FROM inbox n JOIN done d ON n.chat_key = d.chat_key
               WHERE n.bot_id = $1 AND n.status = 'pending' AND n.next_attempt_at <= now())
           AS next
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
    own constants (UnitOfWork.write_alone), so the set of combinations, and this cache, stays
    small.
    """
    parts = []
    offset = DONE_ARGS
    for i, sql in enumerate(statements):
        parts.append(f"w{i} AS ({_shifted(sql, offset)})")
        offset += max((int(n) for n in _PARAM.findall(sql)), default=0)
    return "WITH " + ", ".join(parts) + ", " + _DONE + _LOST_CHECK


# On Citus the commit goes in steps, in one transaction: each step names one bot and is a
# single-shard (router) statement, where Citus plans the one statement of data-modifying CTEs
# above as a distributed subplan per CTE, passing results through the coordinator (64 ms a call
# under load against well under one for the steps; docs/scaling.md). The mark comes first: a
# lost claim stops the transaction before any write. $1 bot, $2 row, $3 attempts.
MARK_DONE = f"{_MARK.format(attempts='$3')}\nRETURNING chat_key"
# Older due rows of the chats written to ($1 bot, $2 chats), as DONE_AND_ENQUEUE's `before`;
# this step sees the calls just queued, which the hand-over leaves out.
BEFORE_STEP = _OLDER.format(chats="$2")
# Whether the person has another update due ($1 bot, $2 chat key), as DONE_AND_ENQUEUE's `next`.
NEXT_STEP = """
SELECT 1 FROM inbox n
WHERE n.bot_id = $1 AND n.chat_key = $2 AND n.status = 'pending' AND n.next_attempt_at <= now()
LIMIT 1
"""


# A failure, decided in the database: a real error ($6 false) counts towards $3 failures; a
# transient one ($6 true) only ends the update once it has been retried for $7 seconds.
# The end time is chosen in the CTE, not in the UPDATE: Citus refuses a volatile function in an
# UPDATE's CASE.
MARK_FAILED = """
WITH verdict AS (
    SELECT id, CASE WHEN d.dead THEN 'dead' ELSE 'pending' END AS status,
           CASE WHEN d.dead THEN statement_timestamp() END AS handled_at
    FROM inbox
    CROSS JOIN LATERAL (
        SELECT (NOT $6 AND failures + 1 >= $3)
               OR ($6 AND COALESCE(retry_since, received_at) < now() - make_interval(secs => $7))
               AS dead
    ) d
    WHERE id = $1 AND bot_id = $8 AND status = 'processing' AND attempts = $2
)
UPDATE inbox i SET status = v.status,
                   failures = i.failures + (NOT $6)::int,
                   next_attempt_at = now() + make_interval(secs => $4),
                   locked_until = NULL, error = $5, handled_at = v.handled_at
FROM verdict v
WHERE i.id = v.id AND i.bot_id = $8 AND i.status = 'processing' AND i.attempts = $2
RETURNING i.status
"""
# Telegram answers a bot again after failing it: its updates waiting out the delay of a
# transient failure (failures = 0: no counted, real error) come due now, oldest first, $2 a
# second (the bot's limit), so their calls and replies go out at the bot's pace, not at once.
# At most $3 of them (the rest wait out their own delays); none is made due later than it was.
WAKE_WAITING = """
WITH waiting AS (
    SELECT id, (row_number() OVER (ORDER BY id) - 1) / $2::float8 AS after_s
    FROM inbox
    WHERE bot_id = $1 AND status = 'pending' AND failures = 0 AND error IS NOT NULL
      AND next_attempt_at > now()
    ORDER BY id
    LIMIT $3
)
UPDATE inbox i SET next_attempt_at = now() + make_interval(secs => w.after_s)
FROM waiting w
WHERE i.bot_id = $1 AND i.id = w.id AND i.status = 'pending'
  AND i.next_attempt_at > now() + make_interval(secs => w.after_s)
"""
# A minute's worth at the bot's limit is woken at most.
WAKE_WAITING_S = 60
# A claim whose answer was lost (the connection dropped as it committed): rows this worker
# holds in the database but not in memory go back to the queue at once.
RELEASE_LOST = """
UPDATE inbox SET status = 'pending', locked_until = NULL, next_attempt_at = now()
WHERE status = 'processing' AND claimed_by = $1 AND id <> ALL ($2::bigint[])
"""
# Shutdown: give back rows not started, without counting an attempt.
RELEASE = """
UPDATE inbox SET status = 'pending', locked_until = NULL, attempts = attempts - 1
WHERE id = ANY ($1::bigint[]) AND status = 'processing'
"""


@dataclass(frozen=True, slots=True)
class InboxRow:
    """A claimed update."""

    id: int
    bot_id: int
    update_id: int
    kind: str
    chat_key: int
    payload: dict[str, Any]
    attempts: int
    # What the update kind's read-ahead found (Router.read_ahead), or None.
    ahead: Any = None
    # The person's open conversation as the claim read it ({} for none); None: not read.
    talk: dict[str, Any] | None = None


async def store_update(conn: asyncpg.Connection | asyncpg.Pool, bot_id: int, update: Any) -> bool:
    """Store one update (MalformedUpdate if it is none); False if it was already stored.

    For tools and tests: it asks each time whether the database is a Citus coordinator.
    """
    c = classify(update)
    sql = INSERTS[await on_citus(conn)].one
    status: str = await conn.execute(sql, bot_id, c.update_id, c.kind, c.chat_key, update)
    return status.endswith(" 1")


async def store_updates(
    conn: asyncpg.Connection, bot_id: int, updates: list[Any], citus: bool = False
) -> int:
    """Store a polled batch in one statement; returns how many were new. `citus`: the
    database is a Citus coordinator (db/pool.on_citus)."""
    # One row per id: an update may not be inserted twice by one statement.
    unique: dict[int, tuple[Classified, Any]] = {}
    for update in updates:
        c = classify(update)
        unique.setdefault(c.update_id, (c, update))
    rows = list(unique.values())
    status: str = await conn.execute(
        INSERTS[citus].many,
        bot_id,
        [c.update_id for c, _ in rows],
        [c.kind for c, _ in rows],
        [c.chat_key for c, _ in rows],
        [u for _, u in rows],
    )
    return int(status.rsplit(" ", 1)[-1])


async def claim(
    pool: asyncpg.Pool,
    bot_ids: list[int],
    limit: int,
    lock_s: float,
    claimer: int | None = None,
    sql: str = CLAIM,
    each_bot: bool | None = None,
) -> list[InboxRow]:
    """Claim up to `limit` updates of these bots, at most one per person, marked as held by
    `claimer` (the worker's lock key, engine/liveness.py); `sql` may be `claim_with(...)`.

    With `each_bot` (on Citus), `sql` is one_bot(...), run once per bot until `limit` is
    reached; the caller rotates `bot_ids` so that no bot is always last. None (tools and
    tests): the database is asked, and `sql` made one_bot(...) on Citus.
    """
    if not bot_ids or limit <= 0:
        return []
    if each_bot is None:
        each_bot = await on_citus(pool)
        sql = one_bot(sql) if each_bot else sql
    if not each_bot:
        rows = await _claim_rows(pool, sql, limit, bot_ids, lock_s, claimer)
    else:
        rows = []
        for bot_id in bot_ids:
            rows += await _claim_rows(pool, sql, limit - len(rows), bot_id, lock_s, claimer)
            if len(rows) >= limit:
                break
    return [
        InboxRow(
            r["id"],
            r["bot_id"],
            r["update_id"],
            r["kind"],
            r["chat_key"],
            r["payload"],
            r["attempts"],
            r.get("ahead"),
            r["talk"],
        )
        for r in rows
    ]


async def _claim_rows(
    pool: asyncpg.Pool,
    sql: str,
    limit: int,
    bots: list[int] | int,
    lock_s: float,
    claimer: int | None,
) -> list[asyncpg.Record]:
    try:
        rows: list[asyncpg.Record] = await pool.fetch(
            sql, max(limit * 2, 64), limit, bots, lock_s, claimer
        )
    except asyncpg.UniqueViolationError:
        # Another worker's claim for the same person committed between our steps: the unique
        # index refused the second hand. Nothing was taken; the next claim will see it.
        return []
    return rows


def retry_delay(attempts: int, base_s: float, cap_s: float) -> float:
    """Exponential delay with full-range jitter: base * 2^(n-1), between half and the whole."""
    # The exponent is bounded so that a row retried for days cannot overflow a float.
    ceiling: float = min(cap_s, base_s * 2.0 ** min(60, max(0, attempts - 1)))
    return ceiling * (0.5 + random.random() / 2)


async def wake_waiting(pool: asyncpg.Pool, bot_id: int, per_s: float) -> int:
    """Telegram answers the bot again: its updates waiting out a transient failure come due
    now, oldest first, `per_s` a second. Returns how many were brought forward."""
    status: str = await pool.execute(
        WAKE_WAITING, bot_id, per_s, max(1, int(per_s * WAKE_WAITING_S))
    )
    return int(status.rsplit(" ", 1)[-1])
