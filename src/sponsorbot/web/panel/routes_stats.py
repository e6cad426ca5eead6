"""The statistics page: one bot or all, a range of whole days on the workspace's clock,
compared with the range before it; charts drawn on the server; every table as CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.stats.hours import RANGES, Span, day_start, local_day, span_of
from sponsorbot.features.stats.overview import FIGURES, FUNNEL, METRICS, Overview, overview
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel import i18n, stats_chart
from sponsorbot.web.panel.deps import View
from sponsorbot.web.panel.fields import bot_filter, day_of
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.web import Viewer, panel_of, render

router = APIRouter(include_in_schema=False, tags=["panel"])

NAMES = {
    "visitors": N_("Visitors"),
    "visitor_new": N_("New visitors"),
    "returning": N_("Returning visitors"),
    "started": N_("Links opened"),
    "gate_shown": N_("Gate shown"),
    "gate_joined": N_("Joined at the gate"),
    "gate_cleared": N_("Passed the gate"),
    "joined": N_("Channel joins"),
    "gate_passed": N_("Gate passed"),
    "content_sent": N_("Content delivered"),
    "blocked": N_("Blocked the bot"),
    "sent": N_("Messages sent"),
    "throttled": N_("429 answers"),
}
RANGE_NAMES = {"today": N_("Today"), "7d": N_("7 days"), "30d": N_("30 days")}
# What an item without a caption or text is called: its kind, then its code.
CONTENT_KIND_NAMES = {
    "video": N_("Video"),
    "photo": N_("Photo"),
    "document": N_("Document"),
    "text": N_("Text"),
    "batch": N_("Batch"),
}
TABLES = ("summary", "series", "heatmap", "content", "channels", "campaigns")
# What makes a spreadsheet read a cell as a formula (CSV injection): such text gets a leading '.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


async def _gather(request: Request, viewer: Viewer) -> tuple[Overview, dict[str, Any]]:
    """The page's choices from its query string, and the figures they ask for."""
    services = services_of(request)
    bots = await services.bots.all()
    q = request.query_params
    bot = bot_filter(q.get("bot", ""), bots)
    zone = str(viewer.workspace.get("time_zone") or "UTC")
    today = local_day(panel_of(request).config.clock(), zone)
    name = q.get("range", "7d")
    if name not in RANGES:
        name = "custom"
    # ISO, or Jalali from a Persian page.
    first, last = day_of(q.get("from")), day_of(q.get("to"))
    # Dates typed in the form win over a named range they no longer match.
    if name != "custom" and (first or last):
        named = span_of(name, today)
        if (first or named.first, last or named.last) != (named.first, named.last):
            name = "custom"
            first, last = first or named.first, last or named.last
    error = None
    try:
        span = span_of(name, today, first, last)
    except ValueError:
        error = _("Choose both dates of the range, at most 400 days apart.")
        name, span = "7d", span_of("7d", today)
    metric = q.get("metric", "started")
    report = await overview(services.report, [bot] if bot else None, span, metric)
    choices = {
        "bot": bot,
        "bots": bots,
        "bot_names": {b.id: b.username for b in bots},
        "range": name,
        "span": span,
        "error": error,
    }
    return report, choices


@router.get("/stats")
async def stats_page(request: Request, viewer: View) -> Response:
    """Figures, charts and funnels for the chosen bots and days."""
    report, choices = await _gather(request, viewer)
    span: Span = choices["span"]
    base = {"range": choices["range"], "metric": report.metric}
    if choices["bot"]:
        base["bot"] = choices["bot"]
    if choices["range"] == "custom":
        base.update({"from": span.first.isoformat(), "to": span.last.isoformat()})

    def url(path: str = "/stats", **more: Any) -> str:
        return f"{path}?{urlencode({**base, **more})}"

    for item in report.contents:
        item["label"] = content_title(item, _)
    label = _(NAMES[report.metric])
    series = stats_chart.series(
        [
            (w if isinstance(w, datetime) else day_start(w, report.zone), n)
            for w, n in report.series
        ],
        report.series_before,
        report.zone,
        "hour" if report.per == "hour" else "day",
        label,
    )
    context = {
        **choices,
        "report": report,
        "changes": {k: _change(report.change(k)) for k in FIGURES},
        "names": NAMES,
        "figures": FIGURES,
        "ranges": RANGES,
        "range_names": RANGE_NAMES,
        "metrics": METRICS,
        "range_urls": {r: url(range=r) for r in RANGES},
        "metric_urls": {m: url(metric=m) for m in METRICS},
        "csv_urls": {t: url("/stats.csv", table=t) for t in TABLES},
        "chart": series,
        "heat": stats_chart.heatmap(report.heat, i18n.current_language()),
        "funnel": stats_chart.funnel([(_(NAMES[k]), n) for k, n in report.funnel]),
        "direct": max(0, report.figures["gate_passed"] - dict(report.funnel)["gate_cleared"]),
        "top": report.top_content(),
        "first_day": i18n.format_datetime(day_start(span.first, report.zone), report.zone, False),
        "last_day": i18n.format_datetime(day_start(span.last, report.zone), report.zone, False),
    }
    return render(request, viewer, "stats.html", context)


@router.get("/stats.csv")
async def stats_csv(request: Request, viewer: View) -> Response:
    """One of the page's tables as CSV (UTF-8 with a byte-order mark, so spreadsheet
    programs read Persian names right)."""
    report, choices = await _gather(request, viewer)
    table = request.query_params.get("table", "summary")
    if table not in TABLES:
        table = "summary"
    buffer = io.StringIO()
    out = csv.writer(buffer)
    for row in csv_rows(report, table):
        out.writerow([csv_cell(value) for value in row])
    span: Span = choices["span"]
    filename = f"stats-{table}-{span.first.isoformat()}-{span.last.isoformat()}.csv"
    return Response(
        "\ufeff" + buffer.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


def csv_rows(report: Overview, table: str) -> list[list[Any]]:
    """The rows of one table (English headers, plain digits, ISO dates: for machines)."""
    if table == "summary":
        return [["figure", "value", "previous"]] + [
            [k, report.figures[k], report.before[k]] for k in FIGURES
        ]
    if table == "series":
        rows: list[list[Any]] = [[report.per, report.metric, "previous"]]
        for (when, n), before in zip(report.series, report.series_before, strict=False):
            rows.append([when.isoformat(), n, before])
        return rows
    if table == "heatmap":
        return [["weekday", "hour", "links_opened"]] + [
            [w, h, n] for (w, h), n in sorted(report.heat.items())
        ]
    if table == "content":
        steps = (*FUNNEL, "gate_passed", "content_sent")
        return [["content_id", "bot_id", "code", "title", *steps]] + [
            [
                c["id"],
                c.get("bot_id", ""),
                c.get("code", ""),
                content_title(c, str),
                *(c[k] for k in steps),
            ]
            for c in report.contents
        ]
    if table == "channels":
        keys = ("gate_listed", "joined", "join_request", "left")
        return [["bot_id", "chat_id", "title", *keys]] + [
            [c["bot_id"], c["chat_id"], c["title"], *(c[k] for k in keys)] for c in report.channels
        ]
    figures = ("gate_listed", "campaign_joined", "left")
    return [["campaign_id", "name", "channel", "status", *figures]] + [
        [c["id"], c["name"], c["chat_title"], c["status"], *(c[k] for k in figures)]
        for c in report.campaigns
    ]


def content_title(item: dict[str, Any], translate: Callable[[str], str]) -> str:
    """An item's readable title: its caption or text, else its kind (put through
    `translate`) and its code."""
    if item.get("title"):
        return str(item["title"])
    kind = CONTENT_KIND_NAMES.get(str(item.get("content_kind")), N_("Content"))
    return f"{translate(kind)} · {item.get('code') or item['id']}"


def csv_cell(value: Any) -> Any:
    """A cell as written: text a spreadsheet would run as a formula (a channel's title or a
    campaign's name, chosen by others) gets a leading ' so it stays text; numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _change(change: float | None) -> dict[str, str | None]:
    """A figure's change against the span before: its text and which way it went."""
    if change is None:
        return {"text": None, "way": "flat"}
    way = "up" if change > 0 else "down" if change < 0 else "flat"
    return {"text": i18n.format_percent(change * 100, signed=True), "way": way}
