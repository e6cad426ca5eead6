"""Long polling for bots without a webhook, under the bot's `poll:` lease."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

from sponsorbot.engine.bots import BotJob, BotLink
from sponsorbot.engine.inbox import store_updates
from sponsorbot.engine.updates import MalformedUpdate, classify
from sponsorbot.telegram import Conflict, TelegramError, Unauthorized

log = logging.getLogger(__name__)

POLL_TIMEOUT_S = 30
MAX_BACKOFF_S = 60.0
OFFSET = "SELECT poll_offset FROM bots WHERE id = $1"
ADVANCE = "UPDATE bots SET poll_offset = $2 WHERE id = $1 AND poll_offset < $2"


def _well_formed(update: Any) -> bool:
    try:
        classify(update)
    except MalformedUpdate:
        return False
    return True


class Poller(BotJob):
    """getUpdates in a loop; each batch is stored and the offset advanced in one transaction."""

    def __init__(
        self,
        link: BotLink,
        poll_timeout_s: int = POLL_TIMEOUT_S,
        *,
        allowed_updates: Callable[[], list[str]] = list,
    ) -> None:
        super().__init__(link)
        self.poll_timeout_s = poll_timeout_s
        self.allowed_updates = allowed_updates

    async def run(self, lost: asyncio.Event) -> None:
        """Poll until the lease is lost (the caller cancels a poll in progress)."""
        bot_id = self.bot.info.id
        offset: int = await self.pool.fetchval(OFFSET, bot_id) or 0
        backoff = 1.0
        while not lost.is_set():
            try:
                updates = await self.telegram.get_updates(
                    offset=offset or None,
                    timeout=self.poll_timeout_s,
                    allowed_updates=self.allowed_updates(),
                )
            except Unauthorized:
                await self.on_refused(bot_id)
                return
            except Conflict:
                # A webhook is still set; this bot is in polling mode, so it goes.
                log.info("bot %s: a webhook was set; deleting it to poll", bot_id)
                await self._quietly(self.telegram.delete_webhook())
                continue
            except TelegramError as exc:
                wait = random.uniform(backoff / 2, backoff)
                log.warning("bot %s: getUpdates failed (%s); retry in %.1fs", bot_id, exc, wait)
                await asyncio.sleep(wait)
                backoff = min(MAX_BACKOFF_S, backoff * 2)
                continue
            backoff = 1.0
            if not updates:
                continue
            last = max(u["update_id"] for u in updates if isinstance(u.get("update_id"), int))
            good = [u for u in updates if _well_formed(u)]
            async with self.pool.acquire() as conn, conn.transaction():
                if good:
                    await store_updates(conn, bot_id, good)
                await conn.execute(ADVANCE, bot_id, last + 1)
            offset = last + 1
            if good:
                self.notifier.wake("inbox")

    async def _quietly(self, call: Awaitable[Any]) -> None:
        try:
            await call
        except TelegramError as exc:
            log.warning("bot %s: %s", self.bot.info.id, exc)
            await asyncio.sleep(1)
