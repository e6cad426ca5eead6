"""The campaigns' clock: start what is due, finish what reached its goal or its end date.

Run every second or so, once in the cluster. A finished campaign leaves every gate at once:
its bots' configuration is dropped in every process by a wake-up, not left to expire.
"""

from __future__ import annotations

import logging
from typing import Any

import asyncpg

from sponsorbot.features.campaigns.rules import Status
from sponsorbot.features.campaigns.service import CampaignService

log = logging.getLogger(__name__)


# The move that brings a campaign to each status the job sets.
MOVE_TO = {Status.RUNNING: "start", Status.REACHED: "reach", Status.ENDED: "end"}


def next_status(campaign: dict[str, Any], now: Any) -> Status | None:
    """The status the campaign should move to now, if any."""
    status = campaign["status"]
    ends_at = campaign["ends_at"]
    goal = campaign["goal_joins"]
    ongoing = status in (Status.RUNNING, Status.PAUSED)
    if goal is not None and ongoing and campaign["progress"] >= goal:
        return Status.REACHED
    if ends_at is not None and ends_at <= now:
        return Status.ENDED
    if status == Status.SCHEDULED and campaign["starts_at"] <= now:
        return Status.RUNNING
    return None


class CampaignWatch:
    """The periodic job over live campaigns."""

    def __init__(self, campaigns: CampaignService) -> None:
        self.campaigns = campaigns

    async def tick(self, _pool: asyncpg.Pool) -> None:
        """One round: move every live campaign whose time has come; retry failed revokes."""
        now = self.campaigns.clock()
        for campaign in await self.campaigns.live():
            to = next_status(campaign, now)
            if to is None:
                continue
            if to is Status.RUNNING:
                await self.campaigns.start(campaign["id"])
            elif await self.campaigns.finish(campaign["id"], MOVE_TO[to], now):
                log.info("campaign %s %s", campaign["id"], to)
        for campaign_id in await self.campaigns.unrevoked():
            await self.campaigns.revoke_links(campaign_id)
