"""The roll-up job: fold each finished hour's facts into the statistics tables.

Runs every minute under the `job:stats_rollup` lease. Each step folds up to a day of hours
in one transaction that also moves `stats_rollup.done_until`, with the state row locked, so
an hour is folded exactly once even if two workers ever run the job at the same time.

Hours are folded once they ended SETTLE ago: an event's time is its transaction's start,
and a handler's transaction may commit a moment after the hour it began in.

Facts written for hours already folded (a history imported, or made up by the demo) reach the
roll-ups through `rewind`, which their writer calls in its own transaction before writing
them: the roll-ups from the first day they touch are forgotten and folded again, and pages
read the raw facts of those days meanwhile.

When the workspace's zone changes, the roll-ups are rebuilt in the background from the raw
facts still kept; pages read the raw facts meanwhile (slower, still exact). Older roll-ups,
whose raw events are gone, stay in the buckets of the zone they were made in.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta

import asyncpg

from sponsorbot.db.pool import on_citus
from sponsorbot.features.stats.facts import facts
from sponsorbot.features.stats.hours import day_start, local_day

log = logging.getLogger(__name__)

SETTLE = timedelta(minutes=2)
NEVER = datetime(1970, 1, 1, tzinfo=UTC)
STEP = timedelta(hours=24)
BUDGET_S = 20.0  # per run; a rebuild goes on at the next run

STATE = "SELECT zone, done_until, totals_until FROM stats_rollup WHERE id = 1 FOR UPDATE"
ZONE = "SELECT time_zone FROM workspace WHERE id = 1"
NOW = "SELECT now()"
# The oldest fact still kept: where a first roll-up, or a rebuild, starts. On one server each
# bot's oldest event is one look in its index; Citus takes no aggregate over a lateral subquery
# of a reference table, and finds each shard's oldest event on that shard (OLDEST_CITUS).
OLDEST_REST = """,
    (SELECT min(first_seen) FROM people),
    (SELECT min(blocked_at) FROM people WHERE blocked_at IS NOT NULL),
    (SELECT min(minute) FROM send_stats))
"""
OLDEST = f"""
SELECT least(
    (SELECT min(x.m) FROM bots b, LATERAL (SELECT min(e.at) AS m FROM events e
                                           WHERE e.bot_id = b.id) x){OLDEST_REST}"""
OLDEST_CITUS = f"""
SELECT least(
    (SELECT min(at) FROM events){OLDEST_REST}"""
TRUNC = "SELECT date_trunc('hour', $1::timestamptz, $2)"
NEXT = "SELECT least(date_trunc('hour', $1::timestamptz + $2::interval, $3), $4::timestamptz)"

# The kinds that make someone a visitor of a day (a join or a leave is the channel's doing).
VISITOR_KINDS = (
    "started",
    "gate_shown",
    "gate_passed",
    "content_sent",
    "unknown_code",
    "visitor_new",
)

# $5: where stats_totals stands; a rebuild folds hours again, the all-time totals only once.
FOLD = f"""
WITH f AS MATERIALIZED (
    SELECT bot_id, at, date_trunc('hour', at, $3) AS hour, kind, dim, user_id, n
    FROM {facts("$1::timestamptz", "$2::timestamptz", None)}
), hourly AS (
    INSERT INTO stats_hourly AS s (bot_id, hour, kind, n)
    SELECT bot_id, hour, kind, sum(n) FROM f GROUP BY 1, 2, 3
    ON CONFLICT (bot_id, hour, kind) DO UPDATE SET n = s.n + excluded.n
), days AS (
    INSERT INTO stats_days AS s (bot_id, day, kind, n)
    SELECT bot_id, (hour AT TIME ZONE $3)::date, kind, sum(n) FROM f GROUP BY 1, 2, 3
    ON CONFLICT (bot_id, day, kind) DO UPDATE SET n = s.n + excluded.n
), totals AS (
    INSERT INTO stats_totals AS s (bot_id, kind, dim, n)
    SELECT bot_id, kind, dim, sum(n) FROM f
    WHERE at >= coalesce($5::timestamptz, '-infinity') GROUP BY 1, 2, 3
    ON CONFLICT (bot_id, kind, dim) DO UPDATE SET n = s.n + excluded.n
), daily AS (
    INSERT INTO stats_daily AS s (bot_id, day, kind, dim, n)
    SELECT bot_id, (hour AT TIME ZONE $3)::date, kind, dim, sum(n) FROM f GROUP BY 1, 2, 3, 4
    ON CONFLICT (bot_id, day, kind, dim) DO UPDATE SET n = s.n + excluded.n
), monthly AS (
    INSERT INTO stats_monthly AS s (bot_id, month, kind, dim, n)
    SELECT bot_id, date_trunc('month', hour AT TIME ZONE $3)::date, kind, dim, sum(n)
    FROM f GROUP BY 1, 2, 3, 4
    ON CONFLICT (bot_id, month, kind, dim) DO UPDATE SET n = s.n + excluded.n
), week_hours AS (
    INSERT INTO stats_week_hours AS s (bot_id, month, kind, weekday, hour, n)
    SELECT bot_id, date_trunc('month', hour AT TIME ZONE $3)::date, kind,
           extract(isodow FROM hour AT TIME ZONE $3)::int - 1,
           extract(hour FROM hour AT TIME ZONE $3)::int, sum(n)
    FROM f GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (bot_id, month, kind, weekday, hour) DO UPDATE SET n = s.n + excluded.n
)
INSERT INTO stats_visits (bot_id, day, user_id)
SELECT DISTINCT bot_id, (hour AT TIME ZONE $3)::date, user_id FROM f
WHERE user_id IS NOT NULL AND kind = ANY ($4::text[])
ON CONFLICT DO NOTHING
"""
# The days a step touched ($1 to $2) hold new visits: how many of each day's visits came back
# from which day (the person's visit before, found by (bot, person, day)) is counted again.
# Folds go forward in time, so no visit is ever added before a day counted here.
FORGET_RETURNS_OF = "DELETE FROM stats_returns WHERE day >= $1 AND day <= $2"
RETURNS = """
INSERT INTO stats_returns (bot_id, day, prev_day, n)
SELECT v.bot_id, v.day, coalesce(p.day, '-infinity'::date), count(*)
FROM stats_visits v
CROSS JOIN LATERAL (
    SELECT max(w.day) AS day FROM stats_visits w
    WHERE w.bot_id = v.bot_id AND w.user_id = v.user_id AND w.day < v.day
) p
WHERE v.day >= $1 AND v.day <= $2
GROUP BY 1, 2, 3
"""
DONE = """
UPDATE stats_rollup
SET done_until = $1, totals_until = greatest(totals_until, $1)
WHERE id = 1
"""

# A new zone: forget the roll-ups the kept facts can remake, start again from the oldest fact.
FORGET_HOURS = "DELETE FROM stats_hourly WHERE hour >= $1"
FORGET_DAYS = "DELETE FROM stats_days WHERE day >= ($1 AT TIME ZONE $2)::date"
FORGET_DAILY = "DELETE FROM stats_daily WHERE day >= ($1 AT TIME ZONE $2)::date"
FORGET_VISITS = "DELETE FROM stats_visits WHERE day >= ($1 AT TIME ZONE $2)::date"
FORGET_RETURNS = "DELETE FROM stats_returns WHERE day >= ($1 AT TIME ZONE $2)::date"
# The months from the one holding $1 (in the zone $2; NULL: every month) are summed again from
# what is left of their days and hours, so that the monthly roll-ups stay those sums.
FORGET_MONTHLY = """
DELETE FROM stats_monthly
WHERE $1::timestamptz IS NULL OR month >= date_trunc('month', $1 AT TIME ZONE $2)::date
"""
FORGET_WEEK_HOURS = """
DELETE FROM stats_week_hours
WHERE $1::timestamptz IS NULL OR month >= date_trunc('month', $1 AT TIME ZONE $2)::date
"""
REMONTH = """
INSERT INTO stats_monthly (bot_id, month, kind, dim, n)
SELECT bot_id, date_trunc('month', day)::date, kind, dim, sum(n) FROM stats_daily
WHERE $1::timestamptz IS NULL OR day >= date_trunc('month', $1 AT TIME ZONE $2)::date
GROUP BY 1, 2, 3, 4
"""
REWEEK = """
INSERT INTO stats_week_hours (bot_id, month, kind, weekday, hour, n)
SELECT bot_id, date_trunc('month', hour AT TIME ZONE $2)::date, kind,
       extract(isodow FROM hour AT TIME ZONE $2)::int - 1,
       extract(hour FROM hour AT TIME ZONE $2)::int, sum(n)
FROM stats_hourly
WHERE $1::timestamptz IS NULL OR hour >= date_trunc('month', $1 AT TIME ZONE $2) AT TIME ZONE $2
GROUP BY 1, 2, 3, 4, 5
"""
REZONED = """
UPDATE stats_rollup SET zone = $1, done_until = NULL, campaigns_until = NULL, rebuilt_at = now()
WHERE id = 1
"""

# Rewinding to $1 (a day's start in the zone $2): take out of the all-time totals what they
# hold of the facts from $1 on (read before the late facts are written, so exactly what was
# folded), then let the job fold those facts, and the late ones, again.
UNCOUNT = f"""
WITH f AS (
    SELECT bot_id, kind, dim, sum(n) AS n
    FROM {facts("$1::timestamptz", "$2::timestamptz", None)} GROUP BY 1, 2, 3
)
UPDATE stats_totals s SET n = s.n - f.n
FROM f WHERE s.bot_id = f.bot_id AND s.kind = f.kind AND s.dim = f.dim
"""
REWOUND = """
UPDATE stats_rollup
SET done_until = CASE WHEN done_until IS NULL THEN NULL ELSE least(done_until, $1) END,
    totals_until = CASE WHEN totals_until IS NULL THEN NULL ELSE least(totals_until, $1) END,
    campaigns_until = CASE WHEN campaigns_until IS NULL THEN NULL
                           ELSE least(campaigns_until, ($1 AT TIME ZONE zone)::date) END,
    rebuilt_at = now()
WHERE id = 1
"""


# Campaign funnels. campaign_members holds each person's credited join and first leave at the
# dates of Telegram's updates, which can come a while after (Telegram keeps an update for 24
# hours), so a day is counted once it ended CAMPAIGN_LATE ago; pages count the later days, and
# a campaign whose retention changed since its days were counted, from campaign_members. The
# job counts each day once (a day's counts never change after CAMPAIGN_LATE), and a campaign's
# days again when its retention changed. $1 start, $2 end, $3 zone, $4 campaigns (NULL: all).
CAMPAIGN_LATE = timedelta(days=3)
CAMPAIGN_STATE = "SELECT zone, campaigns_until FROM stats_rollup WHERE id = 1 FOR UPDATE"
COUNT_CAMPAIGN_DAYS = """
INSERT INTO stats_campaign_days AS s (campaign_id, bot_id, day, retention, joined, "left")
SELECT campaign_id, bot_id, day, retention, sum(j), sum(l) FROM (
    SELECT m.campaign_id, m.bot_id, (m.gate_joined_at AT TIME ZONE $3)::date AS day,
           c.retention, 1 AS j, 0 AS l
    FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id
    WHERE m.gate_joined_at >= $1 AND m.gate_joined_at < $2
      AND ($4::bigint[] IS NULL OR m.campaign_id = ANY ($4))
  UNION ALL
    SELECT m.campaign_id, m.bot_id, (m.left_at AT TIME ZONE $3)::date, c.retention, 0, 1
    FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id
    WHERE m.left_at >= $1 AND m.left_at < $2 AND m.gate_joined_at IS NOT NULL
      AND m.left_at < m.gate_joined_at + c.retention
      AND ($4::bigint[] IS NULL OR m.campaign_id = ANY ($4))
) x GROUP BY 1, 2, 3, 4
ON CONFLICT (bot_id, campaign_id, day) DO UPDATE
SET joined = s.joined + excluded.joined, "left" = s."left" + excluded."left"
"""
# The campaigns whose retention changed since their days were counted: forgotten, counted again.
FORGET_RETAINED = """
DELETE FROM stats_campaign_days d USING campaigns c
WHERE c.id = d.campaign_id AND d.retention <> c.retention
RETURNING d.campaign_id
"""
FORGET_ALL_CAMPAIGN_DAYS = "DELETE FROM stats_campaign_days"
FORGET_CAMPAIGN_DAYS = "DELETE FROM stats_campaign_days WHERE day >= ($1 AT TIME ZONE $2)::date"
CAMPAIGNS_DONE = "UPDATE stats_rollup SET campaigns_until = $1 WHERE id = 1"


async def roll_up(
    pool: asyncpg.Pool, now: datetime | None = None, budget_s: float = BUDGET_S
) -> int:
    """Fold every finished hour not folded yet (within `budget_s`); returns how many steps
    were taken. `now` is the database's clock unless a test gives one."""
    steps = 0
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        async with pool.acquire() as conn, conn.transaction():
            if not await _step(conn, now):
                if await _count_campaigns(conn, now):
                    steps += 1
                break
        steps += 1
    return steps


async def _step(conn: asyncpg.Connection, now: datetime | None) -> bool:
    """One transaction of work: a rezoning or up to a day of hours. False when caught up."""
    state = await conn.fetchrow(STATE)
    zone = str(await conn.fetchval(ZONE))
    if state["zone"] != zone:
        await _rezone(conn, str(state["zone"]), zone)
        return True
    clock = now or await conn.fetchval(NOW)
    target = await conn.fetchval(TRUNC, clock - SETTLE, zone)
    done = state["done_until"]
    if done is None:
        oldest = await _oldest(conn)
        done = await conn.fetchval(TRUNC, oldest, zone) if oldest is not None else target
        done = min(done, target)
    if done >= target:
        if state["done_until"] is None:
            await conn.execute(DONE, done)
        return False
    until = await conn.fetchval(NEXT, done, STEP, zone, target)
    await conn.execute(FOLD, done, until, zone, list(VISITOR_KINDS), state["totals_until"])
    days = (local_day(done, zone), local_day(until, zone))
    await conn.execute(FORGET_RETURNS_OF, *days)
    await conn.execute(RETURNS, *days)
    await conn.execute(DONE, until)
    return True


async def _count_campaigns(conn: asyncpg.Connection, now: datetime | None) -> bool:
    """Count the campaign days that ended CAMPAIGN_LATE ago and are not counted yet, and a
    campaign's days again if its retention changed; False when there was nothing to do."""
    state = await conn.fetchrow(CAMPAIGN_STATE)
    zone = str(state["zone"])
    if zone != str(await conn.fetchval(ZONE)):
        return False  # a rezoning comes first, and forgets these counts
    clock = now or await conn.fetchval(NOW)
    target = local_day(clock - CAMPAIGN_LATE, zone)
    counted = state["campaigns_until"]
    if counted is None:
        await conn.execute(FORGET_ALL_CAMPAIGN_DAYS)
    retained = sorted({int(r["campaign_id"]) for r in await conn.fetch(FORGET_RETAINED)})
    if retained and counted is not None:
        await conn.execute(COUNT_CAMPAIGN_DAYS, NEVER, day_start(counted, zone), zone, retained)
    if counted is not None and counted >= target:
        return bool(retained)
    start = NEVER if counted is None else day_start(counted, zone)
    await conn.execute(COUNT_CAMPAIGN_DAYS, start, day_start(target, zone), zone, None)
    await conn.execute(CAMPAIGNS_DONE, target)
    return True


async def _oldest(conn: asyncpg.Connection) -> datetime | None:
    """The oldest fact kept (asked only when a roll-up starts from nothing, so on_citus is asked
    here rather than kept)."""
    oldest: datetime | None = await conn.fetchval(OLDEST_CITUS if await on_citus(conn) else OLDEST)
    return oldest


async def _rezone(conn: asyncpg.Connection, old: str, new: str) -> None:
    oldest = await _oldest(conn)
    if oldest is not None:
        # Bucket edges of the old zone: cut at the old zone's hour holding the oldest fact.
        cut = await conn.fetchval(TRUNC, oldest, old)
        await conn.execute(FORGET_HOURS, cut)
        await conn.execute(FORGET_DAYS, cut, old)
        await conn.execute(FORGET_DAILY, cut, old)
        await conn.execute(FORGET_VISITS, cut, old)
        await conn.execute(FORGET_RETURNS, cut, old)
        await conn.execute(FORGET_MONTHLY, cut, old)
        await conn.execute(REMONTH, cut, old)
    # Every hour kept goes by weekday and hour of the new clock, as the pages read them.
    await conn.execute(FORGET_WEEK_HOURS, None, new)
    await conn.execute(REWEEK, None, new)
    await conn.execute(REZONED, new)
    log.info("statistics: the zone changed from %s to %s; rebuilding the roll-ups", old, new)


async def rewind(conn: asyncpg.Connection, since: datetime) -> None:
    """Make room for facts dated from `since` on that are about to be written in the caller's
    transaction (call it first): the roll-ups from the start of that day (in their zone) are
    forgotten and the job folds that time again, late facts included; pages count the raw
    facts there until it has. Holds the roll-up's state row until the caller commits, so no
    fold runs in between."""
    state = await conn.fetchrow(STATE)
    zone = str(state["zone"])
    cut = day_start(local_day(since, zone), zone)
    totals_until = state["totals_until"]
    if totals_until is not None and cut < totals_until:
        await conn.execute(UNCOUNT, cut, totals_until)
    done = state["done_until"]
    if done is not None and cut < done:
        await conn.execute(FORGET_HOURS, cut)
        await conn.execute(FORGET_DAYS, cut, zone)
        await conn.execute(FORGET_DAILY, cut, zone)
        await conn.execute(FORGET_VISITS, cut, zone)
        await conn.execute(FORGET_RETURNS, cut, zone)
        for statement in (FORGET_MONTHLY, REMONTH, FORGET_WEEK_HOURS, REWEEK):
            await conn.execute(statement, cut, zone)
    await conn.execute(FORGET_CAMPAIGN_DAYS, cut, zone)
    await conn.execute(REWOUND, cut)


# Whole UTC months of events (and the sender's minutes) older than the kept months go, once
# the roll-up has folded them; the roll-ups themselves are kept for good.
OLD_MONTHS = """
SELECT c.relname AS name FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'events'::regclass AND c.relname ~ '^events_[0-9]{6}$'
  AND (to_date(substr(c.relname, 8), 'YYYYMM') + interval '1 month') AT TIME ZONE 'UTC'
      <= least((date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => $1))
                   AT TIME ZONE 'UTC',
               (SELECT coalesce(done_until, '-infinity') FROM stats_rollup WHERE id = 1))
ORDER BY 1
"""
DROP_MONTH = "DROP TABLE {name}"
# $2: where the roll-up stands, read first (on Citus a statement over the bots' shards cannot
# read a coordinator table).
OLD_MINUTES = """
DELETE FROM send_stats
WHERE minute < least(now() - make_interval(months => $1), coalesce($2::timestamptz, '-infinity'))
"""
DONE_UNTIL = "SELECT done_until FROM stats_rollup WHERE id = 1"


async def drop_old(pool: asyncpg.Pool, months: int) -> list[str]:
    """Drop the event months older than `months` that are rolled up; returns their names."""
    dropped: list[str] = []
    for row in await pool.fetch(OLD_MONTHS, months):
        name = str(row["name"])
        # The name comes from the catalogue and matched ^events_[0-9]{6}$ above.
        await pool.execute(DROP_MONTH.format(name=name))
        dropped.append(name)
    await pool.execute(OLD_MINUTES, months, await pool.fetchval(DONE_UNTIL))
    if dropped:
        log.info("statistics: dropped the event months %s (rolled up)", ", ".join(dropped))
    return dropped
