"""A paid order becomes the ad it bought, and a finished ad becomes a short report.

A gate slot becomes a sponsor campaign with the order's joins as its goal, a broadcast post a
broadcast to the whole audience, a banner a run of N days after delivered content. Starting is
idempotent: the campaign or broadcast is named after the order, so a start retried after a crash
finds the one it made instead of making a second, and a broadcast found unsent is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from sponsorbot.features.broadcasts.post import Post
from sponsorbot.features.broadcasts.service import BroadcastService
from sponsorbot.features.broadcasts.service import Draft as BroadcastDraft
from sponsorbot.features.campaigns.service import CampaignService
from sponsorbot.features.campaigns.service import Draft as CampaignDraft
from sponsorbot.features.shop import queries
from sponsorbot.features.shop.orders import Order

CAMPAIGN_OF = "SELECT id FROM campaigns WHERE created_by = $1 ORDER BY id LIMIT 1"
BROADCAST_OF = "SELECT id FROM broadcasts WHERE created_by = $1 ORDER BY id LIMIT 1"
BROADCAST_STATUS = "SELECT status FROM broadcasts WHERE bot_id = $1 AND id = $2"
FINISHED_CAMPAIGN = ("reached", "ended")
FINISHED_BROADCAST = ("done", "cancelled")


@dataclass(frozen=True, slots=True)
class Started:
    """What a start made."""

    campaign_id: int | None = None
    broadcast_id: int | None = None
    ends_at: datetime | None = None


def maker(order_id: int) -> str:
    """The `created_by` of what an order starts."""
    return f"shop:order:{order_id}"


class Fulfilment:
    """Starts and finishes the ads of paid orders."""

    def __init__(
        self, pool: asyncpg.Pool, campaigns: CampaignService, broadcasts: BroadcastService
    ) -> None:
        self.pool = pool
        self.campaigns = campaigns
        self.broadcasts = broadcasts

    async def start(self, order: Mapping[str, Any], now: datetime) -> Started:
        """Make the order's ad; FeatureError or a transient TelegramError when it cannot yet."""
        kind = order["kind"]
        material = order["material"]
        name = f"Ad #{order['id']}: {order['title']}"[:200]
        if kind == "gate_slot":
            made = await self.pool.fetchval(CAMPAIGN_OF, maker(order["id"]))
            if made is None:
                draft = CampaignDraft(
                    name=name,
                    channel=str(material["chat_id"]),
                    bot_ids=(int(order["bot_id"]),),
                    goal_joins=int(order["joins"]),
                )
                made = (await self.campaigns.create(draft, maker(order["id"])))["id"]
            return Started(campaign_id=int(made))
        if kind == "broadcast":
            made = await self.pool.fetchval(BROADCAST_OF, maker(order["id"]))
            if made is None:
                post = Post.of_json(material["post"])
                wanted = BroadcastDraft(title=name, post=post)
                created = await self.broadcasts.create(order["bot_id"], wanted, maker(order["id"]))
                made = created["id"]
            # Sent whether just made or found: a start retried after a crash between the two
            # steps finds a draft, which must still go out.
            await self.resume(order["bot_id"], int(made))
            return Started(broadcast_id=int(made))
        return Started(ends_at=now + timedelta(days=int(order["days"])))

    async def resume(self, bot_id: int, broadcast_id: int) -> None:
        """Send an order's broadcast if it is still a draft (sending it twice is refused)."""
        status = await self.pool.fetchval(BROADCAST_STATUS, bot_id, broadcast_id)
        if status == "draft":
            await self.broadcasts.send(bot_id, broadcast_id)

    async def finished(self, row: Mapping[str, Any], now: datetime) -> bool:
        """Whether a running order's ad is over (a RUNNING row)."""
        if row["kind"] == "gate_slot":
            return row["campaign_status"] in FINISHED_CAMPAIGN or row["campaign_status"] is None
        if row["kind"] == "broadcast":
            return row["broadcast_status"] in FINISHED_BROADCAST or row["broadcast_status"] is None
        return row["ends_at"] is not None and row["ends_at"] <= now

    async def report(self, order: Mapping[str, Any], now: datetime) -> dict[str, Any]:
        """The figures the advertiser gets at the end."""
        return await delivered(self.pool, order, now)


async def delivered(
    pool: asyncpg.Pool, order: Order | Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    """What a started order's ad has delivered by `now`: a gate slot's credited joins, a
    broadcast's people reached, a banner's showings (the end report's figures, and the order
    page's while it runs)."""
    if order["kind"] == "gate_slot":
        joins = 0
        if order["campaign_id"] is not None:
            joins = await pool.fetchval(queries.CAMPAIGN_JOINS, order["campaign_id"])
        return {"joins": int(joins)}
    if order["kind"] == "broadcast":
        reached = 0
        if order["broadcast_id"] is not None:
            reached = await pool.fetchval(queries.BROADCAST_REACHED, order["broadcast_id"]) or 0
        return {"reached": int(reached)}
    until = min(order["ends_at"] or now, now)
    shown = await pool.fetchval(
        queries.BANNER_SHOWN, order["bot_id"], order["started_at"] or until, until
    )
    return {"shown": int(shown)}
