"""One statistics page's worth of figures: the span and the one before it, a series, the
heat map and the funnels, gathered for the panel, the owner API, CSV export and the
benchmark alike."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal, get_args

from sponsorbot.features.stats.hours import Span, hours_between
from sponsorbot.features.stats.report import Report

# The figures compared with the previous period, in the order a page shows them.
FIGURES = (
    "visitors",
    "visitor_new",
    "returning",
    "started",
    "gate_shown",
    "joined",
    "gate_passed",
    "content_sent",
    "blocked",
    "sent",
    "throttled",
)
# What the series chart can plot (the figures that are plain counts of facts).
Metric = Literal[
    "started", "gate_shown", "joined", "gate_passed", "content_sent", "visitor_new", "sent"
]
METRICS: tuple[str, ...] = get_args(Metric)
# A visit through the gate, step by step; deliveries also count visits that needed no gate,
# so they stand beside the funnel rather than in it (a funnel never widens).
FUNNEL = ("started", "gate_shown", "gate_joined", "gate_cleared")
TOP = 10


@dataclass(slots=True)
class Overview:
    """Everything a statistics page shows for one scope."""

    zone: str
    span: Span
    previous: Span
    bots: list[int]
    metric: str
    figures: dict[str, int]
    before: dict[str, int]
    # (moment, count) per hour for a one-day span, per day otherwise; the previous span's
    # counts in the same positions.
    series: list[tuple[datetime | date, int]]
    series_before: list[int]
    heat: dict[tuple[int, int], int]
    contents: list[dict[str, Any]]
    channels: list[dict[str, Any]]
    campaigns: list[dict[str, Any]]
    funnel: list[tuple[str, int]] = field(default_factory=list)

    @property
    def per(self) -> str:
        """ "hour" when the series is one day's hours, else "day"."""
        return "hour" if self.span.days == 1 else "day"

    def change(self, key: str) -> float | None:
        """The change against the previous span, as a fraction (None when it had none)."""
        now, then = self.figures.get(key, 0), self.before.get(key, 0)
        return None if then == 0 else (now - then) / then

    def top_content(self) -> list[dict[str, Any]]:
        """The items delivered most in the span."""
        ranked = sorted(self.contents, key=lambda c: (-c["content_sent"], c["id"]))
        return [c for c in ranked if c["content_sent"]][:TOP]


async def overview(report: Report, bots: list[int] | None, span: Span, metric: str) -> Overview:
    """Gather a page: its queries run on the pool's connections side by side."""
    metric = metric if metric in METRICS else "started"
    scope = await report.scope(bots, span)
    before = scope.previous()
    figures, previous, heat, contents, channels, campaigns = await asyncio.gather(
        report.totals(scope),
        report.totals(before),
        report.heat(scope),
        report.content_funnel(scope),
        report.channel_funnel(scope),
        report.campaign_funnel(scope),
    )
    if span.days == 1:
        start, end = span.bounds(scope.zone)
        p_start, p_end = span.previous().bounds(scope.zone)
        now_hours, then_hours = await asyncio.gather(
            report.hourly(scope, start, end, [metric]),
            report.hourly(before, p_start, p_end, [metric]),
        )
        hours = hours_between(start, end, scope.zone)
        counts = now_hours.get(metric, {})
        series: list[tuple[datetime | date, int]] = [(h, counts.get(h, 0)) for h in hours]
        then = then_hours.get(metric, {})
        series_before = [then.get(h, 0) for h in hours_between(p_start, p_end, scope.zone)]
    else:
        now_days, then_days = await asyncio.gather(
            report.daily(scope, [metric]), report.daily(before, [metric])
        )
        days = now_days.get(metric, {})
        series = [(d, days.get(d, 0)) for d in span.dates()]
        then_d = then_days.get(metric, {})
        series_before = [then_d.get(d, 0) for d in span.previous().dates()]
    funnel = [(k, sum(int(c[k]) for c in contents)) for k in FUNNEL]
    return Overview(
        zone=scope.zone,
        span=span,
        previous=span.previous(),
        bots=scope.bots,
        metric=metric,
        figures={k: figures.get(k, 0) for k in FIGURES},
        before={k: previous.get(k, 0) for k in FIGURES},
        series=series,
        series_before=series_before,
        heat=heat,
        contents=contents,
        channels=channels,
        campaigns=campaigns,
        funnel=funnel,
    )
