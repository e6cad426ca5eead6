"""The broadcasts' SQL: the audience, choosing recipients, queueing, outcomes, the report.

The audience is chosen in pages over `people` by user id (keyset), so memory and statement
size stay flat whatever the audience; each chosen person gets one `broadcast_recipients` row
(unique), and only a window of them is in the outbox at a time.
"""

from __future__ import annotations

from sponsorbot.engine.outbox import BACKGROUND, UNKNOWN

COLUMNS = """b.id, b.bot_id, b.title, b.method, b.params, b.post, b.audience, b.paid, b.status,
    b.pause_reason, b.scheduled_at, b.started_at, b.finished_at, b.chosen, b.estimated,
    b.recipients, b.sent, b.blocked, b.failed, b.unknown, b.created_by, b.created_at,
    b.updated_at,
    (SELECT count(*) FROM broadcast_recipients r
     WHERE r.bot_id = b.bot_id AND r.broadcast_id = b.id AND r.status = 'queued')::int AS queued"""

# The audience filters, on `people p`: $2 active within N days (NULL: any), $3 language (NULL:
# any), $4 joined through this campaign (NULL: any), $5 passed the gate at least once.
_AUDIENCE = """
p.bot_id = $1 AND p.blocked_at IS NULL
AND ($2::int IS NULL OR p.last_seen >= now() - make_interval(days => $2))
AND ($3::text IS NULL OR p.language = $3 OR ($3 = 'en' AND p.language IS NULL))
AND ($4::bigint IS NULL OR {campaign})
AND (NOT $5::boolean OR {passed})
"""
AUDIENCE = _AUDIENCE.format(
    campaign="""EXISTS (
    SELECT 1 FROM campaign_members m
    WHERE m.campaign_id = $4 AND m.user_id = p.user_id AND m.gate_joined_at IS NOT NULL)""",
    passed="""EXISTS (
    SELECT 1 FROM events e
    WHERE e.bot_id = p.bot_id AND e.user_id = p.user_id AND e.kind = 'gate_passed')""",
)
# The same filters on Citus (db/pool.on_citus), which plans neither subquery above: it cannot
# join campaign_members (distributed by campaign) to people beside it, nor run a correlated
# subquery in CHOOSE, whose people come from a CTE. There each is an uncorrelated IN: Citus
# reads the campaign's members on the campaign's shard first and sends them to the bot's shard,
# where the rest runs, the bot's gate passes read there in one go. On one server the EXISTS
# stay, an index probe per person (an IN under OR would read every gate pass of the bot for
# each page of CHOOSE).
AUDIENCE_CITUS = _AUDIENCE.format(
    campaign="""p.user_id IN (
    SELECT m.user_id FROM campaign_members m
    WHERE m.campaign_id = $4 AND m.gate_joined_at IS NOT NULL)""",
    passed="""p.user_id IN (
    SELECT e.user_id FROM events e WHERE e.bot_id = $1 AND e.kind = 'gate_passed')""",
)
COUNT_AUDIENCE = f"SELECT count(*) FROM people p WHERE {AUDIENCE}"
COUNT_AUDIENCE_CITUS = COUNT_AUDIENCE.replace(AUDIENCE, AUDIENCE_CITUS)

# $2..$7: title, method, params, post, audience, paid (BroadcastService._fields).
INSERT = """
INSERT INTO broadcasts (bot_id, title, method, params, post, audience, paid, created_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING id
"""
UPDATE_DRAFT = """
UPDATE broadcasts SET title = $2, method = $3, params = $4, post = $5, audience = $6, paid = $7,
                      updated_at = now()
WHERE bot_id = $1 AND id = $8 AND status IN ('draft', 'scheduled')
RETURNING id
"""
ONE = f"SELECT {COLUMNS} FROM broadcasts b WHERE b.bot_id = $1 AND b.id = $2"
PAGE = f"""
SELECT {COLUMNS} FROM broadcasts b
WHERE b.bot_id = ANY ($1::bigint[]) AND ($2::text IS NULL OR b.status = $2)
ORDER BY b.id DESC LIMIT $3 OFFSET $4
"""
COUNT_PAGE = """
SELECT count(*) FROM broadcasts b
WHERE b.bot_id = ANY ($1::bigint[]) AND ($2::text IS NULL OR b.status = $2)
"""
# A status change only from the states it may come from: two hands cannot both do it. The time
# comes from a subquery because Citus refuses now() inside an UPDATE's CASE.
SET_STATUS = """
UPDATE broadcasts SET status = $3, pause_reason = $4, updated_at = t.at,
    scheduled_at = CASE WHEN $3 = 'scheduled' THEN $5 ELSE scheduled_at END,
    finished_at = CASE WHEN $3 IN ('cancelled', 'done') THEN t.at ELSE finished_at END
FROM (SELECT now() AS at) t
WHERE bot_id = $1 AND id = $2 AND status = ANY ($6::text[])
RETURNING id
"""
DELETE_DRAFT = "DELETE FROM broadcasts WHERE bot_id = $1 AND id = $2 AND status = 'draft'"

# What the producer looks at: broadcasts to start, to send, or paused by a refused token.
LIVE = """
SELECT b.id, b.bot_id, b.method, b.params, b.audience, b.paid, b.status, b.pause_reason,
       b.scheduled_at, b.cursor, b.chosen, bots.status AS bot_status
FROM broadcasts b JOIN bots ON bots.id = b.bot_id
WHERE b.status IN ('scheduled', 'sending', 'paused')
ORDER BY b.id
"""
START = f"""
UPDATE broadcasts b SET status = 'sending', started_at = now(), cursor = 0, updated_at = now(),
    estimated = (SELECT count(*) FROM people p WHERE {AUDIENCE})
WHERE b.bot_id = $1 AND b.id = $6 AND b.status = 'scheduled'
RETURNING b.id
"""
START_CITUS = START.replace(AUDIENCE, AUDIENCE_CITUS)
# The next page of people after the cursor, then the filters on that page only (each filter
# an index probe per person): recipients added (once each), the cursor moved.
CHOOSE = f"""
WITH p AS (
    SELECT bot_id, user_id, last_seen, language, blocked_at FROM people
    WHERE bot_id = $1 AND user_id > $7 ORDER BY user_id LIMIT $8
), chosen AS (
    INSERT INTO broadcast_recipients (bot_id, broadcast_id, user_id)
    SELECT $1, $6, p.user_id FROM p WHERE {AUDIENCE}
    ON CONFLICT DO NOTHING
    RETURNING 1
)
UPDATE broadcasts SET cursor = COALESCE((SELECT max(user_id) FROM p), cursor),
    chosen = (SELECT count(*) FROM p) < $8,
    recipients = recipients + (SELECT count(*) FROM chosen), updated_at = now()
WHERE bot_id = $1 AND id = $6 AND status = 'sending'
RETURNING chosen, cursor, (SELECT count(*) FROM chosen) AS added
"""
CHOOSE_CITUS = CHOOSE.replace(AUDIENCE, AUDIENCE_CITUS)
# Queue the next waiting recipients as background outbox rows; each gets its outbox id first
# (drawn for the chosen few only, after the LIMIT), so the two rows are written together. The
# scan starts after `queued_to` (every waiting row is after it; a withdrawal sets it back to 0),
# not at the start of the index, where the entries of rows that moved on lie until a vacuum.
QUEUE = f"""
WITH picked AS (
    SELECT r.user_id FROM broadcast_recipients r
    WHERE r.broadcast_id = $1 AND r.status = 'waiting'
      AND r.user_id > (SELECT queued_to FROM broadcasts WHERE id = $1)
    ORDER BY r.user_id LIMIT $2
), moved AS (
    UPDATE broadcasts SET queued_to = (SELECT max(user_id) FROM picked)
    WHERE id = $1 AND EXISTS (SELECT 1 FROM picked)
), next AS (
    SELECT user_id, nextval(pg_get_serial_sequence('outbox', 'id')) AS outbox_id FROM picked
), queued AS (
    INSERT INTO outbox (id, bot_id, chat_id, method, params, priority)
    OVERRIDING SYSTEM VALUE
    SELECT n.outbox_id, $3, n.user_id, $4, $5::jsonb || jsonb_build_object('chat_id', n.user_id),
           {BACKGROUND}
    FROM next n
    RETURNING 1
)
UPDATE broadcast_recipients r SET status = 'queued', outbox_id = n.outbox_id
FROM next n
WHERE r.broadcast_id = $1 AND r.user_id = n.user_id AND r.status = 'waiting'
"""
# The same in three steps on Citus (db/pool.on_citus), which refuses nextval() in a distributed
# statement: the recipients picked ($1 broadcast, $2 how many, $3 bot), their outbox rows
# (ids from the column's own identity), then the recipients and the broadcast's scan marked.
QUEUE_PICK = """
SELECT r.user_id FROM broadcast_recipients r
WHERE r.bot_id = $3 AND r.broadcast_id = $1 AND r.status = 'waiting'
  AND r.user_id > (SELECT queued_to FROM broadcasts WHERE bot_id = $3 AND id = $1)
ORDER BY r.user_id LIMIT $2
"""
QUEUE_OUTBOX = f"""
INSERT INTO outbox (bot_id, chat_id, method, params, priority)
SELECT $1, u, $2, $3::jsonb || jsonb_build_object('chat_id', u), {BACKGROUND}
FROM unnest($4::bigint[]) u
RETURNING id, chat_id
"""
QUEUE_MARK = """
WITH moved AS (
    UPDATE broadcasts SET queued_to = (SELECT max(u) FROM unnest($3::bigint[]) u)
    WHERE bot_id = $2 AND id = $1
)
UPDATE broadcast_recipients r SET status = 'queued', outbox_id = q.outbox_id
FROM unnest($3::bigint[], $4::bigint[]) AS q (user_id, outbox_id)
WHERE r.bot_id = $2 AND r.broadcast_id = $1 AND r.user_id = q.user_id AND r.status = 'waiting'
"""
RESCAN = "UPDATE broadcasts SET queued_to = 0 WHERE id = $1"
# Held (FOR SHARE) through the producer's step, so a pause (which updates the row first, then
# withdraws) either comes before the step and stops it, or after and withdraws what it queued.
STILL_SENDING = "SELECT status = 'sending' FROM broadcasts WHERE bot_id = $2 AND id = $1 FOR SHARE"
LOCK = "SELECT status FROM broadcasts WHERE bot_id = $1 AND id = $2 FOR UPDATE"
# Outcomes of finished outbox rows, onto their recipients and the broadcast's counters; how
# many are queued, and how many wait (counted up to $2); $3 the bot. The time comes from a
# subquery because Citus refuses now() inside an UPDATE's CASE.
HARVEST = f"""
WITH done AS (
    UPDATE broadcast_recipients r
    SET status = CASE WHEN o.status = 'sent' THEN 'sent'
                      WHEN o.error = '{UNKNOWN}' THEN 'unknown'
                      WHEN o.error LIKE 'Forbidden:%' THEN 'blocked'
                      ELSE 'failed' END,
        error = o.error, done_at = o.sent_at
    FROM outbox o
    WHERE r.bot_id = $3 AND r.broadcast_id = $1 AND r.status = 'queued' AND o.bot_id = r.bot_id
      AND o.id = r.outbox_id AND o.status <> 'pending'
    RETURNING r.status
)
UPDATE broadcasts SET
    sent = sent + (SELECT count(*) FROM done WHERE status = 'sent'),
    blocked = blocked + (SELECT count(*) FROM done WHERE status = 'blocked'),
    failed = failed + (SELECT count(*) FROM done WHERE status = 'failed'),
    unknown = unknown + (SELECT count(*) FROM done WHERE status = 'unknown'),
    updated_at = CASE WHEN EXISTS (SELECT 1 FROM done) THEN t.at ELSE updated_at END
FROM (SELECT now() AS at) t
WHERE bot_id = $3 AND id = $1
RETURNING (SELECT count(*) FROM broadcast_recipients q
           WHERE q.bot_id = $3 AND q.broadcast_id = $1 AND q.status = 'queued') AS queued,
          (SELECT count(*) FROM (SELECT 1 FROM broadcast_recipients w
                                 WHERE w.bot_id = $3 AND w.broadcast_id = $1
                                   AND w.status = 'waiting'
                                 LIMIT $2) x) AS waiting
"""
# Take back what no sender has claimed yet: those recipients wait again.
WITHDRAW = """
WITH gone AS (
    DELETE FROM outbox o USING broadcast_recipients r
    WHERE r.broadcast_id = $1 AND r.status = 'queued' AND o.bot_id = r.bot_id
      AND o.id = r.outbox_id AND o.status = 'pending' AND o.taken_at IS NULL
    RETURNING o.id
)
UPDATE broadcast_recipients r SET status = 'waiting', outbox_id = NULL
FROM gone WHERE r.broadcast_id = $1 AND r.outbox_id = gone.id
"""
# The messages of cancelled broadcasts, which a re-drive leaves failed (ADR 0005): cancelling
# withdraws only the rows no sender has claimed yet, and whoever cancelled wants none sent later.
# A recipient keeps the id of its outbox row whatever became of it (HARVEST keeps it; a
# cancelled broadcast is not harvested at all).
CANCELLED_MESSAGES = """
SELECT r.bot_id, r.outbox_id FROM broadcasts b
JOIN broadcast_recipients r ON r.bot_id = b.bot_id AND r.broadcast_id = b.id
WHERE b.status = 'cancelled' AND r.outbox_id IS NOT NULL
"""
FINISH = """
UPDATE broadcasts SET status = 'done', finished_at = now(), updated_at = now()
WHERE bot_id = $2 AND id = $1 AND status = 'sending'
RETURNING id
"""
FAILURES = """
SELECT status, COALESCE(error, '') AS error, count(*)::int AS n FROM broadcast_recipients
WHERE broadcast_id = $1 AND status IN ('failed', 'blocked', 'unknown')
GROUP BY status, error ORDER BY n DESC LIMIT 20
"""

# A finished broadcast keeps its counts for good; who exactly got it is kept 30 days (a row
# per recipient would otherwise grow with every broadcast to the whole audience).
DELETE_RECIPIENTS = """
DELETE FROM broadcast_recipients WHERE (broadcast_id, user_id) IN (
    SELECT r.broadcast_id, r.user_id
    FROM broadcasts b
    JOIN broadcast_recipients r ON r.bot_id = b.bot_id AND r.broadcast_id = b.id
    WHERE b.status IN ('done', 'cancelled') AND b.finished_at < now() - interval '30 days'
    LIMIT $1)
"""
