"""The broadcasts' producer: a periodic job, once in the cluster, that starts what is due,
chooses recipients page by page, keeps a window of them in the outbox, gathers outcomes, and
pauses a bot's broadcasts while Telegram refuses its token (resuming when it is fixed).

Everything it knows is in the database, so a successor picks up where a dead holder of its
lease stopped: the cursor over the audience, the waiting and the queued recipients.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import asyncpg

from sponsorbot.db.errors import DB_ERRORS
from sponsorbot.db.pool import on_citus
from sponsorbot.engine.sender import PAID_PER_S
from sponsorbot.features.broadcasts import queries
from sponsorbot.features.broadcasts.service import Audience, BroadcastService
from sponsorbot.features.errors import Conflict

log = logging.getLogger(__name__)

PAGE = 2000  # people looked at per statement while choosing
PAGES_PER_STEP = 10
# Queued at a time per broadcast: this many seconds of the bot's limit (a pause takes back
# whatever no sender has claimed, so a deep window costs nothing there), added at most a few
# seconds' worth per step, so that one round over many broadcasts stays short.
WINDOW_S = 10
STEP_S = 3
MAX_WINDOW = 5000
TOKEN_REFUSED = "token_refused"


class Producer:
    """One round per tick over every live broadcast."""

    def __init__(self, broadcasts: BroadcastService, per_bot_per_s: int) -> None:
        self.broadcasts = broadcasts
        self.per_bot_per_s = per_bot_per_s
        # Whether the database is a Citus coordinator, asked at the first tick.
        self.citus: bool | None = None

    async def tick(self, pool: asyncpg.Pool) -> None:
        """Move every live broadcast one step."""
        if self.citus is None:
            self.citus = await on_citus(pool)
        for row in await pool.fetch(queries.LIVE):
            try:
                await self._step(pool, dict(row))
            except Conflict:
                continue  # changed by the owner meanwhile; the next tick sees the new status
            except DB_ERRORS as exc:
                log.warning("broadcast %s: %s", row["id"], exc)

    async def _step(self, pool: asyncpg.Pool, b: dict[str, Any]) -> None:
        bot_id, broadcast_id, status = b["bot_id"], b["id"], b["status"]
        refused = b["bot_status"] == "token_refused"
        if status == "paused":
            if b["pause_reason"] == TOKEN_REFUSED and b["bot_status"] == "active":
                await self.broadcasts.resume(bot_id, broadcast_id)
                log.info("broadcast %s resumed: the bot's token is accepted again", broadcast_id)
            return
        if status == "scheduled":
            if b["scheduled_at"] > self.broadcasts.clock() or refused:
                return
            audience = Audience.of_json(b["audience"])
            start = queries.START_CITUS if self.citus else queries.START
            await pool.execute(start, bot_id, *audience.args(), broadcast_id)
            log.info("broadcast %s started", broadcast_id)
            b["chosen"] = False
            b["cursor"] = 0
        if refused:
            await self.broadcasts.pause(bot_id, broadcast_id, TOKEN_REFUSED)
            log.warning("broadcast %s paused: Telegram refuses the bot's token", broadcast_id)
            return
        async with pool.acquire() as conn, conn.transaction():
            # Plans made for the values at hand: a generic plan of QUEUE guessed 600 rows for
            # its LIMIT and hashed every waiting recipient (44 ms a call instead of 2).
            await conn.execute("SET LOCAL plan_cache_mode = force_custom_plan")
            if not await conn.fetchval(queries.STILL_SENDING, broadcast_id, bot_id):
                return
            harvest = await conn.fetchrow(queries.HARVEST, broadcast_id, PAGE, bot_id)
            queued, waiting = harvest["queued"], harvest["waiting"]
            chosen, cursor, pages = b["chosen"], b["cursor"] or 0, 0
            # Chosen as the sending needs them, not all at the start: choosing a large audience
            # at once would take the database from the visitors for a minute. A narrow filter
            # finds few per page, so a step may look at several.
            audience = Audience.of_json(b["audience"])
            choose = queries.CHOOSE_CITUS if self.citus else queries.CHOOSE
            while not chosen and waiting < PAGE // 2 and pages < PAGES_PER_STEP:
                page = await conn.fetchrow(
                    choose, bot_id, *audience.args(), broadcast_id, cursor, PAGE
                )
                chosen, cursor = page["chosen"], page["cursor"]
                waiting, pages = waiting + page["added"], pages + 1
            if chosen and not waiting and not queued:
                if await conn.fetchval(queries.FINISH, broadcast_id, bot_id):
                    log.info("broadcast %s done", broadcast_id)
                return
            rate = PAID_PER_S if b["paid"] else self.per_bot_per_s
            room = min(MAX_WINDOW, math.ceil(rate * WINDOW_S)) - queued
            room = min(room, math.ceil(rate * STEP_S))
            if room <= 0 or not waiting:
                return
            if not await self._queue(conn, broadcast_id, room, bot_id, b["method"], b["params"]):
                # Waiting rows, none after queued_to: look from the start next time.
                await conn.execute(queries.RESCAN, broadcast_id)
                return
        self.broadcasts.wake_sender(bot_id)

    async def _queue(
        self,
        conn: asyncpg.Connection,
        broadcast_id: int,
        room: int,
        bot_id: int,
        method: str,
        params: dict[str, Any],
    ) -> int:
        """Queue up to `room` waiting recipients as background outbox rows; how many."""
        if not self.citus:
            done: str = await conn.execute(
                queries.QUEUE, broadcast_id, room, bot_id, method, params
            )
            return int(done.rsplit(" ", 1)[1])
        users = [
            r["user_id"] for r in await conn.fetch(queries.QUEUE_PICK, broadcast_id, room, bot_id)
        ]
        if not users:
            return 0
        rows = await conn.fetch(queries.QUEUE_OUTBOX, bot_id, method, params, users)
        ids = {r["chat_id"]: r["id"] for r in rows}
        await conn.execute(queries.QUEUE_MARK, broadcast_id, bot_id, users, [ids[u] for u in users])
        return len(users)
