"""The roll-up: whatever the job's progress, roll-ups plus the live tail equal the raw facts.

Events, people and per-minute send counts are written at random moments around a clock
change and a half-hour zone; the job folds up to a random moment; every figure a page reads
for any span of days must equal counting the raw rows of that span, whether it is read from
days and hours or from whole months less the days outside the span; the monthly roll-ups
always equal the sums of the daily and hourly ones, and the returns (each visit's visit before,
which the distinct visitors are summed from) what the visits hold.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsorbot.features.stats.facts import body, facts
from sponsorbot.features.stats.hours import Span, day_start, hour_start
from sponsorbot.features.stats.report import (
    BY_DIM,
    CHANNEL_KINDS,
    CONTENT_KINDS,
    TOTALS,
    Report,
    Scope,
)
from sponsorbot.features.stats.rollup import FOLD, UNCOUNT, drop_old, roll_up
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
         stats_totals, stats_monthly, stats_week_hours, stats_returns, stats_campaign_days;
UPDATE stats_rollup
SET zone = 'UTC', done_until = NULL, totals_until = NULL, campaigns_until = NULL;
"""
ZONE = "UPDATE workspace SET time_zone = $1 WHERE id = 1"
# The raw facts of [$1, $2), as the product's statements read them (facts.py; on Citus the
# function cannot be called with parameters).
RAW_FACTS = facts("$1::timestamptz", "$2::timestamptz", None)
RAW = f"""
SELECT kind, sum(n)::bigint FROM {RAW_FACTS} GROUP BY kind
"""
RAW_VISITORS = f"""
SELECT count(DISTINCT (bot_id, user_id)) FROM {RAW_FACTS}
WHERE user_id IS NOT NULL AND kind IN
      ('started', 'gate_shown', 'gate_passed', 'content_sent', 'unknown_code', 'visitor_new')
"""
# What a funnel reads, and the heat map, counted from the raw facts of [$1, $2).
RAW_BY_DIM = f"""
SELECT bot_id, kind, dim, sum(n)::bigint AS n FROM {RAW_FACTS}
WHERE kind = ANY ($3::text[]) AND dim <> '' GROUP BY 1, 2, 3
"""
RAW_HEAT = f"""
SELECT extract(isodow FROM h AT TIME ZONE $3)::int - 1 AS weekday,
       extract(hour FROM h AT TIME ZONE $3)::int AS hour, sum(n)::bigint AS n
FROM (SELECT date_trunc('hour', at, $3) AS h, n FROM {RAW_FACTS}
      WHERE kind = 'started') f
GROUP BY 1, 2
"""
ALL_TIME_OF_BOT_1 = f"""
SELECT dim, kind, sum(n) AS n FROM {facts("'-infinity'", "'infinity'", "ARRAY[1::bigint]")}
WHERE kind IN ('started', 'gate_shown', 'gate_passed', 'content_sent') AND dim <> ''
GROUP BY 1, 2
"""
# Rows where a monthly roll-up differs from the sum of the days or hours it stands for.
MONTHS_DIFFER = """
SELECT count(*) FROM (
    SELECT bot_id, date_trunc('month', day)::date AS month, kind, dim, sum(n) AS n
    FROM stats_daily GROUP BY 1, 2, 3, 4
) d FULL JOIN stats_monthly m USING (bot_id, month, kind, dim)
WHERE d.n IS DISTINCT FROM m.n
"""
WEEK_HOURS_DIFFER = """
SELECT count(*) FROM (
    SELECT h.bot_id, date_trunc('month', h.hour AT TIME ZONE r.zone)::date AS month, h.kind,
           extract(isodow FROM h.hour AT TIME ZONE r.zone)::int - 1 AS weekday,
           extract(hour FROM h.hour AT TIME ZONE r.zone)::int AS hour, sum(h.n) AS n
    FROM stats_hourly h, stats_rollup r GROUP BY 1, 2, 3, 4, 5
) d FULL JOIN stats_week_hours w USING (bot_id, month, kind, weekday, hour)
WHERE d.n IS DISTINCT FROM w.n
"""
# Rows where the returns differ from each visit's visit before, as stats_visits holds them.
RETURNS_DIFFER = """
SELECT count(*) FROM (
    SELECT bot_id, day, prev_day, count(*) AS n FROM (
        SELECT bot_id, day,
               lag(day, 1, '-infinity'::date) OVER (PARTITION BY bot_id, user_id ORDER BY day)
                   AS prev_day
        FROM stats_visits
    ) v GROUP BY 1, 2, 3
) d FULL JOIN stats_returns r USING (bot_id, day, prev_day)
WHERE d.n IS DISTINCT FROM r.n
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


async def _fold_and_check(
    pool: asyncpg.Pool,
    rows: list[tuple[int, int, str, int, int]],
    zone: str,
    origin: datetime,
    folded_to: int,
    span: Span,
) -> None:
    """The events written from `origin`, folded `folded_to` hours past it in `zone`: the
    figures over `span` equal the raw facts."""
    await pool.execute(RESET)
    await pool.execute(ZONE, zone)
    await _write(pool, rows, origin)
    await roll_up(pool, now=origin + timedelta(hours=folded_to))
    await _check(pool, zone, span)


async def _write(
    pool: asyncpg.Pool, rows: list[tuple[int, int, str, int, int]], origin: datetime = ORIGIN
) -> None:
    await pool.execute(BOTS)
    last = max((m for _, m, *_ in rows), default=0)
    for days in range(0, last // (24 * 60) + 32, 28):
        await pool.execute("SELECT sponsorbot_events_month($1)", origin + timedelta(days=days))
    at = [origin + timedelta(minutes=m, seconds=7) for _, m, *_ in rows]
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
    first = {(b, u): origin + timedelta(minutes=m) for b, m, _, u, _ in reversed(rows)}
    await pool.execute(
        PEOPLE,
        [b for b, _ in first],
        [u for _, u in first],
        list(first.values()),
        ["fa" if u % 2 else "en" for _, u in first],
    )
    minutes = {(b, origin + timedelta(minutes=m)): m % 7 for b, m, *_ in rows}
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
    assert heat == {
        (r["weekday"], r["hour"]): r["n"] for r in await pool.fetch(RAW_HEAT, start, end, zone)
    }
    await _funnels_agree(pool, report, scope)
    assert await pool.fetchval(MONTHS_DIFFER) == 0
    assert await pool.fetchval(WEEK_HOURS_DIFFER) == 0
    assert await pool.fetchval(RETURNS_DIFFER) == 0


async def _funnels_agree(pool: asyncpg.Pool, report: Report, scope: Scope) -> None:
    """The content and channel funnels equal the raw facts of the scope, by dimension."""
    start, end = scope.span.bounds(scope.zone)
    content: dict[int, dict[str, int]] = {}
    for r in await pool.fetch(RAW_BY_DIM, start, end, CONTENT_KINDS):
        per = content.setdefault(int(r["dim"]), dict.fromkeys(CONTENT_KINDS, 0))
        per[r["kind"]] += r["n"]
    got = {c["id"]: {k: c[k] for k in CONTENT_KINDS} for c in await report.content_funnel(scope)}
    assert got == content
    channels: dict[tuple[int, int], dict[str, int]] = {}
    for r in await pool.fetch(RAW_BY_DIM, start, end, CHANNEL_KINDS):
        key = (int(r["bot_id"]), int(r["dim"]))
        channels.setdefault(key, dict.fromkeys(CHANNEL_KINDS, 0))[r["kind"]] = r["n"]
    got_channels = {
        (c["bot_id"], c["chat_id"]): {k: c[k] for k in CHANNEL_KINDS}
        for c in await report.channel_funnel(scope)
    }
    assert got_channels == channels


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
    base = ORIGIN.astimezone().date() + timedelta(days=first)
    await _fold_and_check(
        pool, rows, zone, ORIGIN, folded_to, Span(base, base + timedelta(days=days - 1))
    )


# Over two and a half months: spans long enough to read whole months, less days at their ends.
LONG_START = datetime(2024, 9, 20, 9, tzinfo=UTC)
LONG_DAYS = 75
long_events = st.lists(
    st.tuples(
        st.integers(1, 2),
        st.integers(0, LONG_DAYS * 24 * 60),
        st.sampled_from(KINDS),
        st.integers(1, 6),
        st.integers(1, 3),
    ),
    max_size=120,
)


@settings(
    max_examples=examples(25, dev=DEV_DATABASE),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    rows=long_events,
    zone=st.sampled_from(["UTC", "Asia/Tehran", "America/New_York"]),
    folded_to=st.integers(0, (LONG_DAYS + 2) * 24),
    first=st.integers(-2, LONG_DAYS),
    days=st.integers(1, LONG_DAYS),
)
async def test_long_spans_read_from_months_equal_the_raw_facts(
    pool: asyncpg.Pool,
    rows: list[tuple[int, int, str, int, int]],
    zone: str,
    folded_to: int,
    first: int,
    days: int,
) -> None:
    base = LONG_START.date() + timedelta(days=first)
    span = Span(base, base + timedelta(days=days - 1))
    await _fold_and_check(pool, rows, zone, LONG_START, folded_to, span)


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
    raw = await pool.fetch(ALL_TIME_OF_BOT_1)
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
    # (On Citus the tests' databases are emptied, not made again: older months may be left.)
    assert month in await drop_old(pool, 13)
    assert await pool.fetchval("SELECT to_regclass($1)", month) is None
    assert await pool.fetchval("SELECT sum(n) FROM stats_daily WHERE kind = 'started'") == 1


@pytest.mark.parametrize("zone", ["Asia/Tehran", "UTC"])
async def test_day_bounds_are_the_databases(pool: asyncpg.Pool, zone: str) -> None:
    day = date(2024, 11, 3)
    assert day_start(day, zone) == await pool.fetchval(
        "SELECT $1::date::timestamp AT TIME ZONE $2", day, zone
    )


async def test_the_facts_text_is_the_functions_body(pool: asyncpg.Pool) -> None:
    """The statements read the facts as text (facts.py); the database function is their
    definition, read from its migration: a later migration that changed it would show here."""
    definition = await pool.fetchval(
        "SELECT prosrc FROM pg_proc WHERE proname = 'sponsorbot_stat_facts'"
    )
    assert definition == body()
    assert "sponsorbot_stat_facts" not in FOLD + UNCOUNT + BY_DIM + TOTALS


@pytest.mark.parametrize("folded_days", [2, 6])
async def test_distinct_visitors_of_every_span_equal_the_raw_count(
    pool: asyncpg.Pool, folded_days: int
) -> None:
    """Dense visits (people back after one day or several): every span's distinct visitors,
    summed from the returns of the rolled days plus the live tail, are the raw count."""
    await pool.execute(RESET)
    await pool.execute(ZONE, "Asia/Tehran")
    rows = [(m % 2 + 1, m * 53 % 7000, KINDS[m % 4], m * 7 % 9 + 1, 1) for m in range(300)]
    await _write(pool, rows)
    await roll_up(pool, now=ORIGIN + timedelta(days=folded_days))
    assert await pool.fetchval(RETURNS_DIFFER) == 0
    assert await pool.fetchval("SELECT count(*) FROM stats_returns WHERE prev_day > '-infinity'")
    report = Report(pool)
    first = ORIGIN.date() - timedelta(days=1)
    for a in range(7):
        for b in range(a, 7):
            span = Span(first + timedelta(days=a), first + timedelta(days=b))
            start, end = span.bounds("Asia/Tehran")
            got = await report.totals(await report.scope(None, span))
            assert got["visitors"] == await pool.fetchval(RAW_VISITORS, start, end), span
