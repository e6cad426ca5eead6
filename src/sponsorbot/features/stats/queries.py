"""Every statistics query: per-bot health, the dashboard's figures, the content funnel.

The read side of the statistics feature; pages and commands call these instead of keeping SQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from sponsorbot.engine.sender import GAVE_UP

STATUS = """
SELECT b.id, b.username, b.mode, b.status, b.token_tail,
       (SELECT count(*) FROM inbox i WHERE i.bot_id = b.id AND i.status = 'pending') AS waiting,
       (SELECT coalesce(extract(epoch FROM now() - min(i.received_at)), 0)
          FROM inbox i WHERE i.bot_id = b.id AND i.status = 'pending') AS oldest_s,
       (SELECT count(*) FROM inbox i WHERE i.bot_id = b.id AND i.status = 'processing') AS in_hand,
       (SELECT count(*) FROM inbox i WHERE i.bot_id = b.id AND i.status = 'dead') AS dead,
       (SELECT count(*) FROM outbox o WHERE o.bot_id = b.id AND o.status = 'pending') AS outbox,
       (SELECT count(*) FROM outbox o
         WHERE o.bot_id = b.id AND o.status = 'failed' AND o.error = $1) AS given_up,
       (SELECT coalesce(sum(s.sent), 0) FROM send_stats s
         WHERE s.bot_id = b.id AND s.minute >= date_trunc('minute', now()) - interval '1 minute')
         AS sent_1m,
       (SELECT coalesce(sum(s.throttled), 0) FROM send_stats s
         WHERE s.bot_id = b.id AND s.minute >= date_trunc('minute', now()) - interval '1 minute')
         AS throttled_1m
FROM bots b
ORDER BY b.id
"""

RECENT_SENDS = """
SELECT bot_id, coalesce(sum(sent), 0) AS sent_1h, coalesce(sum(throttled), 0) AS throttled_1h
FROM send_stats WHERE minute >= $1 GROUP BY bot_id
"""


async def bot_status(pool: asyncpg.Pool | asyncpg.Connection) -> list[dict[str, Any]]:
    """One row of health figures per bot."""
    return [dict(r) for r in await pool.fetch(STATUS, GAVE_UP)]


class Statistics:
    """The statistics a page or a command shows."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def health(self) -> list[dict[str, Any]]:
        """Per bot: queue depth, oldest waiting, in hand, dead, outbox, sends, 429s."""
        return await bot_status(self.pool)

    async def recent_sends(self, since: datetime) -> dict[int, dict[str, Any]]:
        """Per bot: messages sent and 429s since `since` (the sender's per-minute counts)."""
        return {r["bot_id"]: dict(r) for r in await self.pool.fetch(RECENT_SENDS, since)}
