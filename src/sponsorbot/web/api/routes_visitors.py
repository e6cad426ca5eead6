"""Visitors: search the people the bots know, one visitor's profile and timeline.

Read-only for every role: nothing here changes a visitor."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from sponsorbot.features.stats import visitors
from sponsorbot.web.api.deps import Reader, Service
from sponsorbot.web.api.models_visitors import TimelineOut, VisitorDetailOut, VisitorPage

router = APIRouter()
TIMELINE_PAGE = 50
# Ids a bigint holds: a longer number is a 422, not a database error.
BotId = Annotated[int, Path(ge=1, lt=2**63, description="the bot's Telegram id")]
UserId = Annotated[int, Path(ge=1, lt=2**63, description="the person's Telegram id")]
Before = Annotated[
    int | None, Query(ge=1, lt=2**63, description="the `next_before` of the page before")
]
TimelineLimit = Annotated[int, Query(ge=1, le=100)]


@router.get(
    "/visitors",
    response_model=VisitorPage,
    summary="Search visitors by Telegram id, @username prefix or part of the name",
    description=(
        "All digits: that Telegram id. `@name`: usernames starting with it. Other text: "
        "usernames starting with it, or first and last names containing it (names are "
        f"searched among the {visitors.MAX_NAME_SCAN:,} visitors seen first most recently, "
        f"up to {visitors.MAX_NAME_MATCHES:,} matches). Empty: the newest visitors first. "
        "A visitor is a person of one bot."
    ),
)
async def search_visitors(
    who: Reader,
    features: Service,
    q: Annotated[str, Query(max_length=visitors.MAX_QUERY)] = "",
    bot_id: Annotated[int | None, Query(ge=1, lt=2**63)] = None,
    page: Annotated[int, Query(ge=1, le=visitors.MAX_PAGE)] = 1,
    per_page: Annotated[int, Query(ge=1, le=100)] = 50,
) -> dict[str, Any]:
    bots = [bot_id] if bot_id is not None else None
    items, more = await features.visitors.search(q, bots, page, per_page)
    return {"items": items, "page": page, "per_page": per_page, "has_more": more}


@router.get(
    "/bots/{bot_id}/visitors/{user_id}",
    response_model=VisitorDetailOut,
    summary="One visitor: profile, gate state, campaigns, content received, newest events",
)
async def get_visitor(
    bot_id: BotId, user_id: UserId, who: Reader, features: Service
) -> dict[str, Any]:
    return await features.visitors.visitor(bot_id, user_id, TIMELINE_PAGE)


@router.get(
    "/bots/{bot_id}/visitors/{user_id}/timeline",
    response_model=TimelineOut,
    summary="A visitor's events, newest first, a page at a time",
)
async def get_timeline(
    bot_id: BotId,
    user_id: UserId,
    who: Reader,
    features: Service,
    before: Before = None,
    limit: TimelineLimit = TIMELINE_PAGE,
) -> dict[str, Any]:
    items, next_before = await features.visitors.timeline(bot_id, user_id, before, limit)
    return {"items": items, "next_before": next_before}
