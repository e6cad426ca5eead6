"""Hours and days in the workspace's time zone, with the boundaries PostgreSQL uses.

An hour of Asia/Tehran (+03:30) starts at :30 UTC, one of Asia/Kathmandu (+05:45) at :15;
a page that builds its buckets from UTC hours never meets the database's. These functions
are the Python side of `date_trunc('hour', at, zone)` and `(day::timestamp AT TIME ZONE
zone)`, and the tests check them against the database across daylight-saving changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from zoneinfo import ZoneInfo

HOUR = timedelta(hours=1)


@cache
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def hour_start(moment: datetime, zone: str) -> datetime:
    """The start of the hour holding `moment` in `zone`, as PostgreSQL's
    `date_trunc('hour', moment, zone)`: the local clock cut to the hour, read with the offset
    `moment` itself had (PostgreSQL keeps that offset for hours, even across a change)."""
    local = moment.astimezone(_zone(zone))
    offset = local.utcoffset() or timedelta(0)
    cut = local.replace(minute=0, second=0, microsecond=0, tzinfo=None)
    return (cut - offset).replace(tzinfo=UTC)


def day_start(day: date, zone: str) -> datetime:
    """The moment `day` begins in `zone`, as `day::timestamp AT TIME ZONE zone`.

    Where midnight does not exist (a clock moved forward at 00:00) PostgreSQL reads it with
    the offset before the change, so the day starts at what the clock shows as 01:00; where
    it exists twice, with the offset after the change.
    """
    tz = _zone(zone)
    first = datetime.combine(day, time(), tzinfo=tz)
    before = first.replace(fold=0).utcoffset() or timedelta(0)
    after = first.replace(fold=1).utcoffset() or timedelta(0)
    naive = datetime.combine(day, time())
    if before == after:
        return (naive - before).replace(tzinfo=UTC)
    # Offsets differ around midnight: a gap (clock forward) or a fold (clock back).
    if after > before:
        return (naive - before).replace(tzinfo=UTC)
    return (naive - after).replace(tzinfo=UTC)


def local_day(moment: datetime, zone: str) -> date:
    """The date the clock on the wall in `zone` shows at `moment`."""
    return moment.astimezone(_zone(zone)).date()


def last_hours(now: datetime, zone: str, count: int) -> list[datetime]:
    """The starts of the `count` hours up to and including the one holding `now`, oldest
    first (a day with a clock change has 23 or 25 of them, each a real hour)."""
    hours = [hour_start(now, zone)]
    while len(hours) < count:
        hours.append(hour_start(hours[-1] - HOUR, zone))
    return hours[::-1]


def hours_between(start: datetime, end: datetime, zone: str) -> list[datetime]:
    """The starts of the hours from `start` (an hour start) up to `end`, in `zone`."""
    hours = [start]
    while (nxt := hour_start(hours[-1] + HOUR, zone)) < end:
        hours.append(nxt)
    return hours


@dataclass(frozen=True, slots=True)
class Span:
    """Whole days in the workspace's zone, `first` to `last` inclusive."""

    first: date
    last: date

    @property
    def days(self) -> int:
        """How many days the span covers."""
        return (self.last - self.first).days + 1

    def previous(self) -> Span:
        """The span of the same length just before this one (for comparisons)."""
        return Span(self.first - timedelta(days=self.days), self.first - timedelta(days=1))

    def dates(self) -> list[date]:
        """Every day of the span, in order."""
        return [self.first + timedelta(days=i) for i in range(self.days)]

    def bounds(self, zone: str) -> tuple[datetime, datetime]:
        """The span as moments: its first day's start and the start of the day after it."""
        return day_start(self.first, zone), day_start(self.last + timedelta(days=1), zone)


RANGES = ("today", "7d", "30d")
MAX_DAYS = 400


def span_of(name: str, today: date, first: date | None = None, last: date | None = None) -> Span:
    """The span a page asks for: today, the last 7 or 30 days (today included), or custom
    dates (swapped when given backwards, cut to MAX_DAYS). Raises ValueError for anything
    else, so a page can say what is wrong."""
    if name == "today":
        return Span(today, today)
    if name in ("7d", "30d"):
        return Span(today - timedelta(days=int(name[:-1]) - 1), today)
    if name == "custom" and first is not None and last is not None:
        first, last = min(first, last), max(first, last)
        if (last - first).days + 1 > MAX_DAYS:
            raise ValueError("range too long")
        return Span(first, last)
    raise ValueError("unknown range")
