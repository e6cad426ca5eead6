"""Statistics for machines: the figures of a range of whole days on the workspace's clock,
compared with the range before, with the series, the heat map and the funnels."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from sponsorbot.features.errors import Invalid
from sponsorbot.features.stats.hours import local_day, span_of
from sponsorbot.features.stats.overview import Metric, overview
from sponsorbot.web.api.deps import Reader, Service
from sponsorbot.web.api.models_stats import StatsOut

router = APIRouter()

BotId = Annotated[int | None, Query(ge=1, le=2**63 - 1)]


@router.get(
    "/stats",
    response_model=StatsOut,
    summary="Statistics of one bot or all, over today, 7 or 30 days, or dates you choose",
)
async def stats(
    who: Reader,
    features: Service,
    bot_id: BotId = None,
    span_name: Annotated[Literal["today", "7d", "30d", "custom"], Query(alias="range")] = "7d",
    first: Annotated[date | None, Query(alias="from")] = None,
    last: Annotated[date | None, Query(alias="to")] = None,
    metric: Metric = "started",
) -> dict[str, Any]:
    if bot_id is not None:
        await features.bots.get(bot_id)  # NotFound → 404
    report = features.report
    zone = await report.zone()
    today = local_day(datetime.now(UTC), zone)
    try:
        span = span_of(span_name, today, first, last)
    except ValueError:
        raise Invalid(
            "give both from and to (YYYY-MM-DD), at most 400 days apart", code="bad_range"
        ) from None
    o = await overview(report, [bot_id] if bot_id else None, span, metric)
    return {
        "zone": o.zone,
        "first": span.first,
        "last": span.last,
        "previous_first": o.previous.first,
        "previous_last": o.previous.last,
        "bots": o.bots,
        "figures": o.figures,
        "previous": o.before,
        "metric": o.metric,
        "per": o.per,
        "series": [
            {"at": when.isoformat(), "value": n, "previous": before}
            for (when, n), before in zip(o.series, o.series_before, strict=False)
        ],
        "heatmap": [{"weekday": w, "hour": h, "value": n} for (w, h), n in sorted(o.heat.items())],
        "funnel": dict(o.funnel),
        "content": o.contents,
        "channels": o.channels,
        "campaigns": o.campaigns,
    }
