"""Hour and day boundaries: Python's (features/stats/hours.py) and PostgreSQL's agree.

The roll-up buckets in SQL and the pages build their keys in Python; with a half-hour zone
or a clock change, one disagreeing boundary empties or shifts every bar (ADR 0015).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import asyncpg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsorbot.features.stats.hours import day_start, hour_start
from tests.examples import DEV_DATABASE, examples

ZONES = (
    "UTC",
    "Asia/Tehran",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",
    "America/Santiago",
)
HOUR_SQL = "SELECT date_trunc('hour', m, z) FROM unnest($1::timestamptz[], $2::text[]) AS t (m, z)"
DAY_SQL = "SELECT d::timestamp AT TIME ZONE z FROM unnest($1::date[], $2::text[]) AS t (d, z)"

moments = st.datetimes(
    min_value=datetime(2015, 1, 1), max_value=datetime(2030, 12, 31), timezones=st.just(UTC)
)
days = st.dates(min_value=date(2015, 1, 1), max_value=date(2030, 12, 31))


async def agree(
    pool: asyncpg.Pool, sql: str, python: Callable[[Any, str], datetime], cases: list[Any]
) -> None:
    """Python's answer for every (value, zone) is the database's."""
    got = await pool.fetch(sql, [v for v, _ in cases], [z for _, z in cases])
    for (value, zone), row in zip(cases, got, strict=True):
        assert python(value, zone) == row[0], (value, zone)


def _around_changes() -> list[tuple[datetime, str]]:
    """Every quarter hour of the days around known clock changes, in their zones."""
    starts = [
        (datetime(2024, 3, 10, 0, tzinfo=UTC), "America/New_York"),
        (datetime(2024, 11, 3, 0, tzinfo=UTC), "America/New_York"),
        (datetime(2024, 10, 27, 0, tzinfo=UTC), "Europe/London"),
        (datetime(2024, 4, 6, 0, tzinfo=UTC), "Australia/Lord_Howe"),
        (datetime(2024, 9, 7, 0, tzinfo=UTC), "America/Santiago"),
        (datetime(2022, 3, 21, 0, tzinfo=UTC), "Asia/Tehran"),  # Tehran still changed then
        (datetime(2022, 9, 21, 0, tzinfo=UTC), "Asia/Tehran"),
    ]
    return [(start + timedelta(minutes=15 * i), zone) for start, zone in starts for i in range(288)]


async def test_hours_agree_around_clock_changes(pool: asyncpg.Pool) -> None:
    cases = _around_changes()
    await agree(pool, HOUR_SQL, hour_start, cases)


async def test_a_tehran_hour_starts_at_half_past_utc(pool: asyncpg.Pool) -> None:
    moment = datetime(2026, 11, 30, 10, 10, tzinfo=UTC)  # 13:40 in Tehran
    assert hour_start(moment, "Asia/Tehran") == datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
    assert hour_start(moment, "Asia/Kolkata") == datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
    assert hour_start(moment, "UTC") == datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    sql = await pool.fetchval("SELECT date_trunc('hour', $1::timestamptz, 'Asia/Tehran')", moment)
    assert sql == datetime(2026, 11, 30, 9, 30, tzinfo=UTC)


@settings(
    max_examples=examples(300, dev=DEV_DATABASE),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.tuples(moments, st.sampled_from(ZONES)), min_size=1, max_size=50))
async def test_hours_agree_anywhere(pool: asyncpg.Pool, cases: list[tuple[datetime, str]]) -> None:
    await agree(pool, HOUR_SQL, hour_start, cases)


async def test_days_agree_around_clock_changes(pool: asyncpg.Pool) -> None:
    cases = [(date(2024, 1, 1) + timedelta(days=i), zone) for zone in ZONES for i in range(366)]
    await agree(pool, DAY_SQL, day_start, cases)


@settings(
    max_examples=examples(200, dev=DEV_DATABASE),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.tuples(days, st.sampled_from(ZONES)), min_size=1, max_size=50))
async def test_days_agree_anywhere(pool: asyncpg.Pool, cases: list[tuple[date, str]]) -> None:
    await agree(pool, DAY_SQL, day_start, cases)
