"""The sponsor's report, `/r/{token}`: one campaign, read-only, for whoever holds the link.

Nothing of the panel's session is read here: a signed-in owner opening the link sees exactly
what the sponsor sees, and the page shows no navigation, no workspace name and no other
campaign. The language is the link's `?lang=`, else the browser's Accept-Language.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from sponsorbot.features.campaigns.queries import Campaign
from sponsorbot.features.campaigns.rules import FINISHED
from sponsorbot.features.errors import NotFound
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel import chart, i18n
from sponsorbot.web.panel.routes_campaigns import names
from sponsorbot.web.panel.web import panel_of

router = APIRouter(include_in_schema=False, tags=["panel"])

# A report is a secret link: not cached, not indexed, not framed, and not passed on in the
# Referer of anything the page loads or links to.
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex, nofollow",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
}


def report_language(request: Request) -> str:
    """`?lang=` when it names a panel language, else the best of Accept-Language, else en."""
    asked = request.query_params.get("lang", "")
    if asked in i18n.LANGUAGES:
        return asked
    ranked: list[tuple[float, int, str]] = []
    header = request.headers.get("accept-language", "")[:500]
    for order, part in enumerate(header.split(",")):
        tag, _sep, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        base = tag.strip().lower().split("-")[0]
        if base in i18n.LANGUAGES and quality > 0:
            ranked.append((-quality, order, base))
    return min(ranked)[2] if ranked else "en"


def _page(request: Request, template: str, context: dict[str, Any], status: int) -> Response:
    language = request.state.report_language
    values = {
        "lang": language,
        "dir": "rtl" if language in i18n.RTL else "ltr",
        **context,
    }
    html = panel_of(request).env.get_template(template).render(values)
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def _public(campaign: Campaign) -> dict[str, Any]:
    """Only what the sponsor may see: no invite links, no report token, no author."""
    keep = (
        "name",
        "chat_title",
        "chat_username",
        "goal_joins",
        "goal_kind",
        "starts_at",
        "ends_at",
        "status",
        "status_at",
        "retention_hours",
        "joins",
        "kept",
        "left",
        "waiting",
        "outside_gate",
        "joins_today",
        "progress",
        "percent",
    )
    out = {k: campaign[k] for k in keep}
    out["bots"] = [
        {k: b[k] for k in ("username", "joins", "kept", "left")} for b in campaign["by_bot"]
    ]
    return out


@router.get("/r/{token}")
async def report_page(request: Request, token: str) -> Response:
    """The sponsor's page: progress, joins and leaves per hour, kept vs left, per bot."""
    language = report_language(request)
    i18n.use_language(language)
    request.state.report_language = language
    try:
        found = await services_of(request).campaigns.report(token)
    except NotFound:
        return _page(request, "report_gone.html", {}, 404)
    zone = found.time_zone
    campaign = _public(found.campaign)
    ended = campaign["status_at"] if campaign["status"] in FINISHED else None
    context = {
        "campaign": campaign,
        "chart": chart.build(found.hours, zone),
        "ended_at": ended,
        "zone": zone,
        "when": lambda moment, with_time=True: i18n.format_datetime(moment, zone, with_time),
        "now": services_of(request).campaigns.clock(),
        **names(),
    }
    return _page(request, "report.html", context, 200)
