"""Every statistics query: per-bot health, the dashboard's figures, the content funnel.

The read side of the statistics feature; pages and commands call these instead of keeping SQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from sponsorbot.db.pool import on_citus
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

# On Citus a correlated subquery over a bot's shard cannot hang off the bots reference table:
# the same figures as STATUS, each table's counted per bot in one statement, put together here.
BOT_ROWS = "SELECT id, username, mode, status, token_tail FROM bots ORDER BY id"
INBOX_CITUS = """
SELECT bot_id,
       count(*) FILTER (WHERE status = 'pending') AS waiting,
       coalesce(extract(epoch FROM now() - min(received_at) FILTER (WHERE status = 'pending')),
                0) AS oldest_s,
       count(*) FILTER (WHERE status = 'processing') AS in_hand,
       count(*) FILTER (WHERE status = 'dead') AS dead
FROM inbox WHERE status IN ('pending', 'processing', 'dead') GROUP BY bot_id
"""
OUTBOX_CITUS = """
SELECT bot_id, count(*) FILTER (WHERE status = 'pending') AS outbox,
       count(*) FILTER (WHERE status = 'failed' AND error = $1) AS given_up
FROM outbox WHERE status IN ('pending', 'failed') GROUP BY bot_id
"""
SENDS_CITUS = """
SELECT bot_id, coalesce(sum(sent), 0) AS sent_1m, coalesce(sum(throttled), 0) AS throttled_1m
FROM send_stats WHERE minute >= date_trunc('minute', now()) - interval '1 minute'
GROUP BY bot_id
"""
ZERO = {
    "waiting": 0,
    "oldest_s": 0,
    "in_hand": 0,
    "dead": 0,
    "outbox": 0,
    "given_up": 0,
    "sent_1m": 0,
    "throttled_1m": 0,
}

RECENT_SENDS = """
SELECT bot_id, coalesce(sum(sent), 0) AS sent_1h, coalesce(sum(throttled), 0) AS throttled_1h
FROM send_stats WHERE minute >= $1 GROUP BY bot_id
"""


async def bot_status(
    pool: asyncpg.Pool | asyncpg.Connection, citus: bool | None = None
) -> list[dict[str, Any]]:
    """One row of health figures per bot. `citus`: whether the database is a Citus coordinator
    (asked when not given)."""
    if citus is None:
        citus = await on_citus(pool)
    if not citus:
        return [dict(r) for r in await pool.fetch(STATUS, GAVE_UP)]
    counted: dict[int, dict[str, Any]] = {}
    for sql, args in ((INBOX_CITUS, ()), (OUTBOX_CITUS, (GAVE_UP,)), (SENDS_CITUS, ())):
        for r in await pool.fetch(sql, *args):
            counted.setdefault(int(r["bot_id"]), {}).update(
                {k: v for k, v in r.items() if k != "bot_id"}
            )
    return [
        {**dict(b), **ZERO, **counted.get(int(b["id"]), {})} for b in await pool.fetch(BOT_ROWS)
    ]


class Statistics:
    """The statistics a page or a command shows."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._citus: bool | None = None

    async def health(self) -> list[dict[str, Any]]:
        """Per bot: queue depth, oldest waiting, in hand, dead, outbox, sends, 429s."""
        if self._citus is None:
            self._citus = await on_citus(self.pool)
        return await bot_status(self.pool, self._citus)

    async def recent_sends(self, since: datetime) -> dict[int, dict[str, Any]]:
        """Per bot: messages sent and 429s since `since` (the sender's per-minute counts)."""
        return {r["bot_id"]: dict(r) for r in await self.pool.fetch(RECENT_SENDS, since)}
