"""Every statistics query: per-bot health, the dashboard's figures, the content funnel.

The read side of the statistics feature; pages and commands call these instead of keeping SQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from sponsorbot.features.stats.events import EventKind
from sponsorbot.features.stats.health import prometheus_text

STATUS = """
SELECT b.id, b.username, b.mode, b.status, b.token_tail,
       (SELECT count(*) FROM inbox i WHERE i.bot_id = b.id AND i.status = 'pending') AS waiting,
       (SELECT coalesce(extract(epoch FROM now() - min(i.received_at)), 0)
          FROM inbox i WHERE i.bot_id = b.id AND i.status = 'pending') AS oldest_s,
       (SELECT count(*) FROM inbox i WHERE i.bot_id = b.id AND i.status = 'processing') AS in_hand,
       (SELECT count(*) FROM inbox i WHERE i.bot_id = b.id AND i.status = 'dead') AS dead,
       (SELECT count(*) FROM outbox o WHERE o.bot_id = b.id AND o.status = 'pending') AS outbox,
       (SELECT coalesce(sum(s.sent), 0) FROM send_stats s
         WHERE s.bot_id = b.id AND s.minute >= date_trunc('minute', now()) - interval '1 minute')
         AS sent_1m,
       (SELECT coalesce(sum(s.throttled), 0) FROM send_stats s
         WHERE s.bot_id = b.id AND s.minute >= date_trunc('minute', now()) - interval '1 minute')
         AS throttled_1m
FROM bots b
ORDER BY b.id
"""

TODAY = """
SELECT b.id,
       (SELECT count(*) FROM people p WHERE p.bot_id = b.id AND p.last_seen >= $1) AS visitors,
       (SELECT count(*) FROM events e
         WHERE e.bot_id = b.id AND e.at >= $1 AND e.kind = 'gate_passed') AS passes_today,
       (SELECT count(*) FROM events e
         WHERE e.bot_id = b.id AND e.at >= $1 AND e.kind = 'content_sent') AS contents_today,
       (SELECT coalesce(sum(s.sent), 0) FROM send_stats s
         WHERE s.bot_id = b.id AND s.minute >= $2) AS sent_1h,
       (SELECT coalesce(sum(s.throttled), 0) FROM send_stats s
         WHERE s.bot_id = b.id AND s.minute >= $2) AS throttled_1h
FROM bots b
"""
HOURLY_SENDS = """
SELECT bot_id, date_trunc('hour', minute) AS hour, sum(sent) AS sent
FROM send_stats WHERE minute >= $1 GROUP BY 1, 2
"""

# Per item: opened (the link was opened: "started" names the item), gated (shown the gate),
# passed (through it), sent (content delivered).
CONTENT_COUNTS = f"""
SELECT content_id, kind, count(*) AS n FROM events
WHERE bot_id = $1 AND content_id = ANY($2)
  AND kind IN ('{EventKind.STARTED}', '{EventKind.GATE_SHOWN}', '{EventKind.GATE_PASSED}',
               '{EventKind.CONTENT_SENT}')
GROUP BY 1, 2
"""


async def bot_status(pool: asyncpg.Pool) -> list[dict[str, Any]]:
    """One row of health figures per bot."""
    return [dict(r) for r in await pool.fetch(STATUS)]


class Statistics:
    """The statistics a page or a command shows."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def health(self) -> list[dict[str, Any]]:
        """Per bot: queue depth, oldest waiting, in hand, dead, outbox, sends, 429s."""
        return await bot_status(self.pool)

    async def prometheus(self) -> str:
        """The health figures in Prometheus' text format."""
        return prometheus_text(await bot_status(self.pool))

    async def today(self, day_start: datetime, hour_ago: datetime) -> dict[int, dict[str, Any]]:
        """Per bot: visitors, passes and deliveries since `day_start`; sends and 429s since
        `hour_ago`."""
        rows = await self.pool.fetch(TODAY, day_start, hour_ago)
        return {r["id"]: dict(r) for r in rows}

    async def hourly_sends(self, since: datetime) -> dict[int, dict[datetime, int]]:
        """Per bot, messages sent per hour since `since`."""
        hourly: dict[int, dict[datetime, int]] = {}
        for r in await self.pool.fetch(HOURLY_SENDS, since):
            hourly.setdefault(r["bot_id"], {})[r["hour"]] = int(r["sent"])
        return hourly

    async def content_counts(self, bot_id: int, ids: list[int]) -> dict[int, dict[str, int]]:
        """Per content item: how often it was opened, gated, passed and delivered."""
        counts: dict[int, dict[str, int]] = {}
        for row in await self.pool.fetch(CONTENT_COUNTS, bot_id, ids):
            counts.setdefault(row["content_id"], {})[row["kind"]] = int(row["n"])
        return counts
