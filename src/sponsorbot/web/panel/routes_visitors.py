"""Visitors in the panel: search the people the bots know by Telegram id, username or name, and
one visitor's page (profile, gate state, campaigns, content received, timeline). Every member
may read them; nothing here changes a visitor."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.stats import visitors
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import Id, View
from sponsorbot.web.panel.fields import bot_filter, is_id
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.paging import neighbours, page_number
from sponsorbot.web.panel.web import render

router = APIRouter(include_in_schema=False, tags=["panel"])
PAGE = 50
TIMELINE_PAGE = 50

GATE_NAMES = {
    "at_gate": N_("At the gate"),
    "passed": N_("Passed the gate"),
    "never": N_("Never gated"),
}
GATE_BADGES = {"at_gate": "paused", "passed": "active", "never": "plain"}
VIA_NAMES = {
    "gate": N_("Through this bot's gate"),
    "other_bot": N_("Through another bot's link"),
    "outside": N_("Outside the gate"),
}


def _names() -> dict[str, Any]:
    return {"gate_names": GATE_NAMES, "gate_badges": GATE_BADGES, "via_names": VIA_NAMES}


@router.get("/visitors")
async def visitors_page(request: Request, viewer: View) -> Response:
    """The people the bots know, newest first (matches of a search: most recently seen
    first), filtered by bot."""
    bots = await services_of(request).bots.all()
    q = request.query_params
    query = q.get("q", "").strip()[: visitors.MAX_QUERY]
    bot = bot_filter(q.get("bot", ""), bots)
    number = page_number(request, visitors.MAX_PAGE)
    rows, more = await services_of(request).visitors.search(
        query, [bot] if bot else None, number, PAGE
    )
    filters = {k: v for k, v in (("q", query), ("bot", bot)) if v}

    def url(page: int) -> str:
        return "/visitors?" + urlencode({**filters, "page": page} if page > 1 else filters)

    context = {
        "visitors": rows,
        "bots": bots,
        "bot": bot,
        "query": query,
        **neighbours(number, more, url),
        "name_scan": visitors.MAX_NAME_SCAN,
        **_names(),
    }
    return render(request, viewer, "visitors.html", context)


@router.get("/visitors/{bot_id}/{user_id}")
async def visitor_page(request: Request, bot_id: Id, user_id: Id, viewer: View) -> Response:
    """One visitor of one bot: the profile, where they stand at the gate, the campaigns they
    joined, the content they received, and their events newest first ("older" pages on)."""
    raw = request.query_params.get("before", "")
    before = int(raw) if is_id(raw) and int(raw) > 0 else None
    person = await services_of(request).visitors.visitor(bot_id, user_id, TIMELINE_PAGE, before)
    next_before = person["timeline"]["next_before"]
    path = f"/visitors/{bot_id}/{user_id}"
    context = {
        "person": person,
        "events": person["timeline"]["items"],
        "older": f"{path}?before={next_before}#timeline" if next_before else None,
        "newest": f"{path}#timeline" if before else None,
        **_names(),
    }
    return render(request, viewer, "visitor.html", context)
