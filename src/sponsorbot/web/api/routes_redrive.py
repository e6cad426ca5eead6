"""Re-drive: dead updates and messages given up after network errors, queued again; without
`since`, only what gave up in the last 24 hours (ADR 0005), and never the messages of a
cancelled broadcast."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from sponsorbot.web.api.deps import Admin, BotFilter, Reader, Service
from sponsorbot.web.api.models import REDRIVE_SINCE, RedriveIn, RedriveOut

router = APIRouter()


@router.get(
    "/redrive",
    response_model=RedriveOut,
    summary="Count what a re-drive would queue again",
)
async def count_redrive(
    who: Reader,
    features: Service,
    bot_id: BotFilter = None,
    since: Annotated[datetime | None, Query(description=REDRIVE_SINCE)] = None,
) -> dict[str, Any]:
    found = await features.bots.redrive(bot_id, since, dry_run=True)
    return {"updates": found.updates, "messages": found.messages}


@router.post(
    "/redrive",
    response_model=RedriveOut,
    summary="Queue dead updates and messages given up after network errors again",
)
async def redrive(body: RedriveIn, who: Admin, features: Service) -> dict[str, Any]:
    done = await features.bots.redrive(body.bot_id, body.since)
    return {"updates": done.updates, "messages": done.messages}
