"""Hours and days on the workspace's clock, without a database (the integration test checks
the same functions against PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.features.stats.hours import Span, day_start, hour_start, last_hours, span_of


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone", "moment", "start"),
    [
        ("UTC", utc(2026, 11, 30, 10, 59, 59), utc(2026, 11, 30, 10)),
        ("Asia/Tehran", utc(2026, 11, 30, 10, 10), utc(2026, 11, 30, 9, 30)),
        ("Asia/Tehran", utc(2026, 11, 30, 10, 30), utc(2026, 11, 30, 10, 30)),
        ("Asia/Kolkata", utc(2026, 11, 30, 10, 29), utc(2026, 11, 30, 9, 30)),
        ("Asia/Kathmandu", utc(2026, 11, 30, 10, 14), utc(2026, 11, 30, 9, 15)),
        # New York's clock goes back at 06:00 UTC: 01:00-02:00 local happens twice.
        ("America/New_York", utc(2024, 11, 3, 5, 30), utc(2024, 11, 3, 5)),
        ("America/New_York", utc(2024, 11, 3, 6, 30), utc(2024, 11, 3, 6)),
    ],
)
def test_an_hour_starts_where_the_zones_clock_shows_a_whole_hour(
    zone: str, moment: datetime, start: datetime
) -> None:
    assert hour_start(moment, zone) == start


def test_a_day_with_a_clock_change_has_25_or_23_real_hours() -> None:
    autumn = day_start(date(2024, 11, 4), "America/New_York")
    hours = last_hours(autumn - timedelta(seconds=1), "America/New_York", 25)
    assert hours[0] == day_start(date(2024, 11, 3), "America/New_York")
    assert all(b - a == timedelta(hours=1) for a, b in pairwise(hours))
    spring = day_start(date(2024, 3, 11), "America/New_York")
    assert spring - day_start(date(2024, 3, 10), "America/New_York") == timedelta(hours=23)


def test_a_tehran_day_starts_at_half_past_eight_the_evening_before_in_utc() -> None:
    assert day_start(date(2026, 11, 30), "Asia/Tehran") == utc(2026, 11, 29, 20, 30)
    assert Span(date(2026, 11, 30), date(2026, 11, 30)).bounds("Asia/Tehran") == (
        utc(2026, 11, 29, 20, 30),
        utc(2026, 11, 30, 20, 30),
    )


@given(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1)),
    st.sampled_from(["UTC", "Asia/Tehran", "Asia/Kolkata", "Europe/London", "America/New_York"]),
)
def test_an_hour_start_is_at_most_an_hour_back_and_stable(naive: datetime, zone: str) -> None:
    moment = naive.replace(tzinfo=UTC)
    start = hour_start(moment, zone)
    assert timedelta(0) <= moment - start < timedelta(hours=1)
    assert hour_start(start, zone) == start


def test_ranges() -> None:
    today = date(2026, 11, 30)
    assert span_of("today", today) == Span(today, today)
    assert span_of("7d", today) == Span(date(2026, 11, 24), today)
    assert span_of("30d", today).days == 30
    assert span_of("7d", today).previous() == Span(date(2026, 11, 17), date(2026, 11, 23))
    assert span_of("custom", today, date(2026, 2, 1), date(2026, 1, 1)) == Span(
        date(2026, 1, 1), date(2026, 2, 1)
    )
    for wrong in (
        ("custom", None, None),
        ("custom", date(2020, 1, 1), today),
        ("year", None, None),
    ):
        with pytest.raises(ValueError):
            span_of(wrong[0], today, wrong[1], wrong[2])
