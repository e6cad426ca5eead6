"""A span of days as whole months of roll-ups, corrected by a few days at its edges.

A year's content funnel summed a million rows of `stats_daily` and its heat map 90,000 hours
of `stats_hourly`; the monthly roll-ups (`stats_monthly`, `stats_week_hours`) hold the same
sums a month at a time. A month the span covers wholly is read as its month row. A month it
covers partly is read either as its days in the span, or as the month less its days outside
the span, whichever reads fewer days: no span reads more than half a month of days at either
end, and the figures are the same sums.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sponsorbot.features.stats.hours import Span


@dataclass(frozen=True, slots=True)
class Cover:
    """Months to read whole, days to add, days to take away: together, the span's days."""

    months: list[date]  # each the first day of a month
    plus: list[Span]  # runs of days of the span, in months not read whole
    minus: list[Span]  # runs of days outside the span, in months read whole

    def _signed(self) -> list[tuple[Span | None, int]]:
        """The runs with +1 to add or -1 to take away, always two of them (a span has at most
        one partly read month at either end); a missing run is (None, 0), which reads nothing."""
        runs: list[tuple[Span | None, int]] = [(r, 1) for r in self.plus]
        runs += [(r, -1) for r in self.minus]
        return runs + [(None, 0)] * (2 - len(runs))

    def day_runs(self) -> tuple[date | int | None, ...]:
        """The two runs as (first day, last day, sign), one after the other."""
        return tuple(
            x
            for run, sign in self._signed()
            for x in ((run.first, run.last) if run else (None, None)) + (sign,)
        )

    def runs(self, zone: str) -> tuple[datetime | int | None, ...]:
        """The two runs as moments in `zone`: (start, end, sign) each, [start, end)."""
        return tuple(
            x
            for run, sign in self._signed()
            for x in (run.bounds(zone) if run else (None, None)) + (sign,)
        )


def month_of(day: date) -> Span:
    """The whole month holding `day`."""
    last = calendar.monthrange(day.year, day.month)[1]
    return Span(day.replace(day=1), day.replace(day=last))


def cover(span: Span) -> Cover:
    """How to read `span` from monthly roll-ups and the days at its edges."""
    months: list[date] = []
    plus: list[Span] = []
    minus: list[Span] = []
    month = month_of(span.first)
    while month.first <= span.last:
        inside = Span(max(month.first, span.first), min(month.last, span.last))
        if inside.days * 2 > month.days:
            months.append(month.first)
            if month.first < inside.first:
                minus.append(Span(month.first, inside.first - timedelta(days=1)))
            if inside.last < month.last:
                minus.append(Span(inside.last + timedelta(days=1), month.last))
        else:
            plus.append(inside)
        month = month_of(month.last + timedelta(days=1))
    if not months:
        # No month read whole: the span is one run of days (a range, as it was before months).
        return Cover([], [span], [])
    return Cover(months, plus, minus)
