"""The roll-up: whatever the job's progress, roll-ups plus the live tail equal the raw facts.

Events, people and per-minute send counts are written at random moments around a clock
change and a half-hour zone; the job folds up to a random moment; every figure a page reads
for any span of days must equal counting the raw rows of that span.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsorbot.features.stats.hours import Span, day_start, hour_start
from sponsorbot.features.stats.report import Report
from sponsorbot.features.stats.rollup import drop_old, roll_up
from tests.examples import DEV_DATABASE, examples

BOTS = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
SELECT i, 'stats_bot_' || i, '', 'xxxx', 'polling', 'p' || i, '' FROM generate_series(1, 2) i
ON CONFLICT DO NOTHING
"""
EVENTS = """
INSERT INTO events (bot_id, at, kind, user_id, content_id, chat_id, data)
SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::bigint[], $5::bigint[],
                     $6::bigint[], $7::jsonb[])
"""
PEOPLE = """
INSERT INTO people (bot_id, user_id, first_seen, last_seen, language)
SELECT b, u, f, f, l FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[], $4::text[])
    AS p (b, u, f, l)
ON CONFLICT DO NOTHING
"""
SENDS = """
INSERT INTO send_stats (bot_id, minute, sent, throttled)
SELECT b, m, s, t FROM unnest($1::bigint[], $2::timestamptz[], $3::int[], $4::int[])
    AS x (b, m, s, t)
ON CONFLICT DO NOTHING
"""
RESET = """
TRUNCATE events, people, send_stats, stats_hourly, stats_days, stats_daily, stats_visits,
         stats_totals;
UPDATE stats_rollup SET zone = 'UTC', done_until = NULL, totals_until = NULL;
"""
ZONE = "UPDATE workspace SET time_zone = $1 WHERE id = 1"
RAW = """
SELECT kind, sum(n)::bigint FROM sponsorbot_stat_facts($1, $2, NULL) GROUP BY kind
"""
RAW_VISITORS = """
SELECT count(DISTINCT (bot_id, user_id)) FROM sponsorbot_stat_facts($1, $2, NULL)
WHERE user_id IS NOT NULL AND kind IN
      ('started', 'gate_shown', 'gate_passed', 'content_sent', 'unknown_code', 'visitor_new')
"""

ORIGIN = datetime(2024, 11, 1, 12, tzinfo=UTC)  # New York's clock goes back on 3 November
KINDS = ("started", "gate_shown", "gate_passed", "content_sent", "joined", "left")

events = st.lists(
    st.tuples(
        st.integers(1, 2),  # bot
        st.integers(0, 5 * 24 * 60),  # minute after ORIGIN
        st.sampled_from(KINDS),
        st.integers(1, 6),  # user
        st.integers(1, 3),  # content or chat
    ),
    max_size=60,
)


async def _write(pool: asyncpg.Pool, rows: list[tuple[int, int, str, int, int]]) -> None:
    await pool.execute(BOTS)
    for month in (ORIGIN, ORIGIN + timedelta(days=31)):
        await pool.execute("SELECT sponsorbot_events_month($1)", month)
    at = [ORIGIN + timedelta(minutes=m, seconds=7) for _, m, *_ in rows]
    channel = [k in ("joined", "left") for _, _, k, *_ in rows]
    await pool.execute(
        EVENTS,
        [b for b, *_ in rows],
        at,
        [k for _, _, k, *_ in rows],
        [u for *_, u, _ in rows],
        [None if c else d for c, (*_, d) in zip(channel, rows, strict=True)],
        [-100 - d if c else None for c, (*_, d) in zip(channel, rows, strict=True)],
        ['{"missing": [-101, -102]}' if k == "gate_shown" else None for _, _, k, *_ in rows],
    )
    first = {(b, u): ORIGIN + timedelta(minutes=m) for b, m, _, u, _ in reversed(rows)}
    await pool.execute(
        PEOPLE,
        [b for b, _ in first],
        [u for _, u in first],
        list(first.values()),
        ["fa" if u % 2 else "en" for _, u in first],
    )
    minutes = {(b, ORIGIN + timedelta(minutes=m)): m % 7 for b, m, *_ in rows}
    await pool.execute(
        SENDS,
        [b for b, _ in minutes],
        [m for _, m in minutes],
        [n + 1 for n in minutes.values()],
        [n % 2 for n in minutes.values()],
    )


async def _check(pool: asyncpg.Pool, zone: str, span: Span) -> None:
    report = Report(pool)
    scope = await report.scope(None, span)
    start, end = span.bounds(zone)
    raw = {str(k): int(n) for k, n in await pool.fetch(RAW, start, end)}
    got = await report.totals(scope)
    visitors = got.pop("visitors")
    got.pop("returning")
    assert {k: v for k, v in got.items() if v} == raw
    assert visitors == await pool.fetchval(RAW_VISITORS, start, end)
    daily = await report.daily(scope, list(raw))
    assert {k: sum(v.values()) for k, v in daily.items()} == raw
    hourly = await report.hourly(scope, start, end, list(raw))
    assert {k: sum(v.values()) for k, v in hourly.items()} == raw
    for hours in hourly.values():
        assert all(h == hour_start(h, zone) for h in hours)
    heat = await report.heat(scope, "started")
    assert sum(heat.values()) == raw.get("started", 0)


@settings(
    max_examples=examples(40, dev=DEV_DATABASE),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    rows=events,
    zone=st.sampled_from(["UTC", "Asia/Tehran", "Asia/Kolkata", "America/New_York"]),
    folded_to=st.integers(0, 6 * 24),
    first=st.integers(-1, 5),
    days=st.integers(1, 4),
)
async def test_rollups_plus_the_live_tail_equal_the_raw_facts(
    pool: asyncpg.Pool,
    rows: list[tuple[int, int, str, int, int]],
    zone: str,
    folded_to: int,
    first: int,
    days: int,
) -> None:
    await pool.execute(RESET)
    await pool.execute(ZONE, zone)
    await _write(pool, rows)
    await roll_up(pool, now=ORIGIN + timedelta(hours=folded_to))
    base = ORIGIN.astimezone().date() + timedelta(days=first)
    await _check(pool, zone, Span(base, base + timedelta(days=days - 1)))


async def test_a_changed_zone_rebuilds_and_figures_stay_exact(pool: asyncpg.Pool) -> None:
    await pool.execute(RESET)
    rows = [(1, m * 37 % 7000, KINDS[m % 6], m % 5 + 1, m % 3 + 1) for m in range(200)]
    await _write(pool, rows)
    await pool.execute(ZONE, "UTC")
    later = ORIGIN + timedelta(days=6)
    await roll_up(pool, now=later)
    span = Span(date(2024, 11, 1), date(2024, 11, 5))
    await _check(pool, "UTC", span)
    await pool.execute(ZONE, "Asia/Tehran")
    await _check(pool, "Asia/Tehran", span)  # before the job: counted from the facts
    await roll_up(pool, now=later)
    assert await pool.fetchval("SELECT zone FROM stats_rollup") == "Asia/Tehran"
    hours = await pool.fetch("SELECT DISTINCT extract(minute FROM hour) FROM stats_hourly")
    assert [int(r[0]) for r in hours] == [30]
    await _check(pool, "Asia/Tehran", span)
    # The all-time counts of the content list were folded once, not again by the rebuild.
    raw = await pool.fetch(
        "SELECT dim, kind, sum(n) AS n FROM sponsorbot_stat_facts('-infinity', 'infinity',"
        " ARRAY[1::bigint]) WHERE kind IN ('started', 'gate_shown', 'gate_passed',"
        " 'content_sent') AND dim <> '' GROUP BY 1, 2"
    )
    expected: dict[int, dict[str, int]] = {}
    for r in raw:
        expected.setdefault(int(r["dim"]), {})[r["kind"]] = int(r["n"])
    assert await Report(pool).content_totals(1, [1, 2, 3]) == expected


async def test_folding_twice_at_once_counts_each_hour_once(pool: asyncpg.Pool) -> None:
    import asyncio

    await pool.execute(RESET)
    await _write(pool, [(1, m * 11, "started", m % 4 + 1, 1) for m in range(300)])
    later = ORIGIN + timedelta(days=3)
    await asyncio.gather(*(roll_up(pool, now=later) for _ in range(3)))
    assert await pool.fetchval(
        "SELECT sum(n) FROM stats_hourly WHERE kind = 'started'"
    ) == await pool.fetchval(
        "SELECT count(*) FROM events WHERE kind = 'started' AND at < $1",
        hour_start(later - timedelta(minutes=2), "UTC"),
    )


async def test_old_months_go_once_rolled_up_and_their_rollups_stay(pool: asyncpg.Pool) -> None:
    await pool.execute(RESET)
    await pool.execute(BOTS)
    now = await pool.fetchval("SELECT now()")
    old = now - timedelta(days=500)
    await pool.execute("SELECT sponsorbot_events_month($1)", old)
    await pool.execute(
        "INSERT INTO events (bot_id, at, kind, user_id) VALUES (1, $1, 'started', 9)", old
    )
    month = f"events_{old.astimezone(UTC):%Y%m}"
    assert await drop_old(pool, 13) == []  # not rolled up yet: kept
    await roll_up(pool)
    assert await drop_old(pool, 13) == [month]
    assert await pool.fetchval("SELECT to_regclass($1)", month) is None
    assert await pool.fetchval("SELECT sum(n) FROM stats_daily WHERE kind = 'started'") == 1


@pytest.mark.parametrize("zone", ["Asia/Tehran", "UTC"])
async def test_day_bounds_are_the_databases(pool: asyncpg.Pool, zone: str) -> None:
    day = date(2024, 11, 3)
    assert day_start(day, zone) == await pool.fetchval(
        "SELECT $1::date::timestamp AT TIME ZONE $2", day, zone
    )
