"""The joins-and-leaves chart of a campaign, drawn on the server as SVG geometry.

Joins rise above a middle line and leaves fall below it. Leaves are a fraction of joins, so
on the joins' scale they would be slivers: they get the lower third of the plot and a scale of
their own, and each scale is written at its end (the lower one negative, as it points down).
No script and no CDN: the template turns this geometry into an <svg>, the same markup on the
owner's detail page and the sponsor's report. Time runs left to right in both languages (as
Persian finance charts do); only the digits and dates follow the language.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from zoneinfo import ZoneInfo

from sponsorbot.features.campaigns.queries import Hour
from sponsorbot.web.panel import i18n

WIDTH = 720
HEIGHT = 220
LEFT = 44  # room for the scale's numbers
RIGHT = 8
TOP = 12
BOTTOM = 28  # room for the time labels
MAX_HOURLY = 24 * 7  # longer than a week: one bar a day, or the bars get thinner than a pixel
TICKS = 6
PLOT = HEIGHT - TOP - BOTTOM
# The share of the plot above the middle line: joins; leaves take the rest.
JOINS_SHARE = 2 / 3


@dataclass(frozen=True, slots=True)
class Bar:
    """One hour (or day): its place, the heights of its two bars and what a hover says."""

    x: float
    width: float
    join_y: float
    join_height: float
    leave_height: float
    joins: int
    leaves: int
    label: str


@dataclass(frozen=True, slots=True)
class Tick:
    """A time label under the chart."""

    x: float
    label: str


@dataclass
class Chart:
    """Everything the chart template draws."""

    per_day: bool
    top: int
    bottom: int = 1  # the largest leaves, at the lower edge
    bars: list[Bar] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right_edge: int = WIDTH - RIGHT
    top_edge: int = TOP
    middle: float = round(TOP + PLOT * JOINS_SHARE, 2)
    bottom_edge: int = HEIGHT - BOTTOM
    label_y: int = HEIGHT - 8
    zero: int = 0  # a field, not a literal: Jinja would fold `0|num` in the first language

    @property
    def joins(self) -> int:
        """All joins the chart shows."""
        return sum(b.joins for b in self.bars)

    @property
    def leaves(self) -> int:
        """All leaves the chart shows."""
        return sum(b.leaves for b in self.bars)


def _by_day(hours: Sequence[Hour], zone: ZoneInfo) -> list[Hour]:
    days: dict[date, Hour] = {}
    for h in hours:
        local = h.hour.astimezone(zone)
        start = local.replace(hour=0, minute=0, second=0, microsecond=0)
        day = days.get(start.date(), Hour(start, 0, 0))
        days[start.date()] = Hour(start, day.joins + h.joins, day.leaves + h.leaves)
    return list(days.values())


def _when(moment: datetime, zone: str, per_day: bool, short: bool) -> str:
    """A bar's time: the date for days, else the hour (with its date unless `short`)."""
    if per_day:
        return i18n.format_datetime(moment, zone, with_time=False)
    if short:
        return i18n.localize_digits(moment.astimezone(ZoneInfo(zone)).strftime("%H:%M"))
    return i18n.format_datetime(moment, zone)


def build(hours: Sequence[Hour], zone: str) -> Chart:
    """The chart of `hours` (oldest first) in the zone `zone`."""
    per_day = len(hours) > MAX_HOURLY
    points = _by_day(hours, ZoneInfo(zone)) if per_day else hours
    top = max([1, *(p.joins for p in points)])
    bottom = max([1, *(p.leaves for p in points)])
    chart = Chart(per_day=per_day, top=top, bottom=bottom)
    if not points:
        return chart
    above, below = PLOT * JOINS_SHARE, PLOT * (1 - JOINS_SHARE)
    step = (WIDTH - LEFT - RIGHT) / len(points)
    width = max(step * 0.7, 0.6)
    # Spans within two days label hours alone; longer ones need the date to be read.
    short = len(points) <= 48
    for i, point in enumerate(points):
        joins, leaves = point.joins, point.leaves
        up = above * joins / top
        chart.bars.append(
            Bar(
                x=round(LEFT + i * step + (step - width) / 2, 2),
                width=round(width, 2),
                join_y=round(chart.middle - up, 2),
                join_height=round(up, 2),
                leave_height=round(below * leaves / bottom, 2),
                joins=joins,
                leaves=leaves,
                label=_when(point.hour, zone, per_day, short=False),
            )
        )
    every = max(1, -(-len(points) // TICKS))
    for i in range(0, len(points), every):
        chart.ticks.append(
            Tick(
                x=round(LEFT + i * step + step / 2, 2),
                label=_when(points[i].hour, zone, per_day, short=short),
            )
        )
    return chart
