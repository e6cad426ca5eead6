"""The team's Telegram: members link their own chat through one of the workspace's bots and are
told there what needs them (an order to review, with buttons that act; a payment to decide; a
bot, channel or key in trouble; a campaign or broadcast finished; a daily digest).

The feature reads what the others record (collect.py) and never asks them to call it, so it
stands above the shop, the campaigns and the broadcasts in the feature graph.
"""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from sponsorbot.features.alerts.chat import TeamChat
from sponsorbot.features.alerts.collect import collect
from sponsorbot.features.alerts.deliver import fan_out, send_due
from sponsorbot.features.alerts.digest import send_digests
from sponsorbot.features.alerts.links import TeamLinks
from sponsorbot.features.base import Feature, Job, Parts, Shared
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.shop.service import ShopService

# Kept for 30 days: long enough to see what the team was told, short enough to stay small.
CLEANUP = """
WITH old AS (
    DELETE FROM alerts WHERE created_at < now() - interval '30 days' AND fanned_at IS NOT NULL
)
DELETE FROM team_link_codes WHERE expires_at < now()
"""
# Links through bots that were removed, found first and then dropped: Citus refuses a write to
# a coordinator table that reads a reference table (bots) in the same statement.
GONE_BOTS = """
SELECT l.user_id, l.linked_at FROM team_links l
WHERE NOT EXISTS (SELECT 1 FROM bots b WHERE b.id = l.via_bot)
"""
# Only links as they were read: a bot added again (its Telegram id) may have a new one since.
DROP_LINKS = """
DELETE FROM team_links l
USING unnest($1::bigint[], $2::timestamptz[]) AS g (user_id, linked_at)
WHERE l.user_id = g.user_id AND l.linked_at = g.linked_at
"""
CLEANUP_EVERY_S = 3600.0


def setup(shared: Shared) -> Parts:
    """The team's chat handlers, the links service and the jobs that tell."""
    engine = shared.engine
    options = shared.options
    panel_url = engine.settings.public_url

    def wake(bots: set[int]) -> None:
        for bot_id in bots:
            engine.notifier.wake(f"outbox:{bot_id}")

    async def tell(pool: asyncpg.Pool) -> None:
        now = datetime.now(UTC)
        async with pool.acquire() as conn, conn.transaction():
            await collect(conn, now, options.alerts_gather_s)
        async with pool.acquire() as conn, conn.transaction():
            await fan_out(conn, now)
            woken = await send_due(conn, now, panel_url)
        wake(woken)

    async def digest(pool: asyncpg.Pool) -> None:
        async with pool.acquire() as conn, conn.transaction():
            woken = await send_digests(conn, datetime.now(UTC))
        wake(woken)

    async def cleanup(pool: asyncpg.Pool) -> None:
        await pool.execute(CLEANUP)
        gone = await pool.fetch(GONE_BOTS)
        if gone:
            await pool.execute(
                DROP_LINKS, [r["user_id"] for r in gone], [r["linked_at"] for r in gone]
            )

    # The team's buttons act through the shop's own service, the one its runner uses.
    chat = TeamChat(engine.pool, shared.required.get(ShopService), shared.required.get(BotsService))
    return Parts(
        router=chat.router(),
        services=[TeamLinks(engine.pool)],
        jobs=[
            Job("alerts_tell", options.alerts_every_s, tell),
            Job("alerts_digest", options.digest_every_s, digest),
            Job("alerts_cleanup", CLEANUP_EVERY_S, cleanup),
        ],
    )


FEATURE = Feature("alerts", setup, requires=("bots", "shop"))
