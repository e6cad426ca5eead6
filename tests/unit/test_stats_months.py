"""A span as whole months less the days outside it, or plus the days inside: always exactly the
span's days, and never more than half a month of days at either end."""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta

from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.features.stats.hours import MAX_DAYS, Span
from sponsorbot.features.stats.months import cover, month_of

spans = st.builds(
    lambda first, days: Span(first, first + timedelta(days=days - 1)),
    st.dates(date(2023, 1, 1), date(2027, 12, 31)),
    st.integers(1, MAX_DAYS),
)


@given(spans)
def test_the_months_and_days_read_add_up_to_the_span(span: Span) -> None:
    got = cover(span)
    counted: Counter[date] = Counter()
    for first in got.months:
        assert first.day == 1
        counted.update(month_of(first).dates())
    counted.update(d for run in got.plus for d in run.dates())
    counted.subtract(d for run in got.minus for d in run.dates())
    assert +counted == Counter(span.dates())
    assert -counted == Counter()  # nothing taken away that was not in a month read


@given(spans)
def test_no_more_than_half_a_month_of_days_is_read_at_either_end(span: Span) -> None:
    got = cover(span)
    if not got.months:  # a short span: read as it is
        assert (got.plus, got.minus) == ([span], [])
        assert span.days <= 31
        return
    for run in got.plus + got.minus:
        assert run.days * 2 <= month_of(run.first).days
        assert month_of(run.first) == month_of(run.last)
    assert len(got.plus) + len(got.minus) <= 2


def test_a_year_to_the_fifth_is_twelve_months_and_ten_days() -> None:
    got = cover(Span(date(2025, 12, 6), date(2026, 12, 5)))
    assert got.months == [date(2025, 12, 1)] + [date(2026, m, 1) for m in range(1, 12)]
    assert got.minus == [Span(date(2025, 12, 1), date(2025, 12, 5))]
    assert got.plus == [Span(date(2026, 12, 1), date(2026, 12, 5))]


def test_the_runs_as_moments_carry_their_sign() -> None:
    got = cover(Span(date(2026, 3, 10), date(2026, 4, 12)))
    # 12 days of April added; 1-9 March taken from March.
    assert got.runs("Asia/Tehran") == (
        *Span(date(2026, 4, 1), date(2026, 4, 12)).bounds("Asia/Tehran"),
        1,
        *Span(date(2026, 3, 1), date(2026, 3, 9)).bounds("Asia/Tehran"),
        -1,
    )
    whole = cover(Span(date(2026, 3, 1), date(2026, 4, 30)))
    assert whole.runs("UTC") == whole.day_runs() == (None, None, 0, None, None, 0)
    week = cover(Span(date(2026, 3, 29), date(2026, 4, 4)))
    assert week.day_runs() == (date(2026, 3, 29), date(2026, 4, 4), 1, None, None, 0)
