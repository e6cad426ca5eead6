"""Long polling for bots without a webhook, under the bot's `poll:` lease."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from typing import Any

import asyncpg

from sponsorbot.db.pool import on_citus
from sponsorbot.engine.bots import CLEAR_PROBLEM, SET_PROBLEM, BotJob, BotLink
from sponsorbot.engine.inbox import store_updates
from sponsorbot.engine.updates import MalformedUpdate, classify
from sponsorbot.telegram import Conflict, TelegramError, Unauthorized

log = logging.getLogger(__name__)

POLL_TIMEOUT_S = 30
# A failing getUpdates is tried again at least this often (the engine passes its
# recovery_probe_s), so updates sent during an outage arrive seconds after it, not a minute.
MAX_BACKOFF_S = 5.0
MAX_CONFLICT_BACKOFF_S = 300.0
# deleteWebhook at most this often per bot: a webhook that comes back was set by someone else
# (another installation with the same token), and deleting it in a loop fights them.
DELETE_WEBHOOK_EVERY_S = 600.0
# The bot's `conflict` mark goes after this long without a 409.
CONFLICT_CLEAR_S = 600.0
# Telegram restarts update ids at random after a week without updates, possibly below our
# offset; after six idle days a poll goes without one and its ids are taken as they come.
IDLE_RESTART_S = 6 * 86400.0
PROBLEM = "conflict"

START = """
SELECT poll_offset, extract(epoch FROM now() - last_update_at)::float8 AS idle_s
FROM bots WHERE id = $1
"""
# $3: the ids restarted, so the offset may go down.
ADVANCE = """
UPDATE bots SET poll_offset = $2, last_update_at = now()
WHERE id = $1 AND (poll_offset < $2 OR $3)
"""
QUARANTINE = """
INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, status, error, handled_at)
VALUES ($1, $2, $3, $4, $5, 'dead', $6, clock_timestamp())
ON CONFLICT (bot_id, update_id) DO NOTHING
"""

# Per process, so a poller restarted by its manager keeps the limit: bot id → monotonic time.
_webhook_deleted_at: dict[int, float] = {}


def _update_id(update: Any) -> int | None:
    value = update.get("update_id") if isinstance(update, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _well_formed(update: Any) -> bool:
    try:
        classify(update)
    except MalformedUpdate:
        return False
    return True


def _without_nul(value: Any) -> Any:
    """`value` with every NUL character removed (jsonb cannot hold one)."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    return value


class Poller(BotJob):
    """getUpdates in a loop; each batch is stored and the offset advanced in one transaction."""

    def __init__(
        self,
        link: BotLink,
        poll_timeout_s: int = POLL_TIMEOUT_S,
        *,
        allowed_updates: Callable[[], list[str]] = list,
        conflict_clear_s: float = CONFLICT_CLEAR_S,
        max_backoff_s: float = MAX_BACKOFF_S,
    ) -> None:
        super().__init__(link)
        self.max_backoff_s = max_backoff_s
        self.poll_timeout_s = poll_timeout_s
        self.allowed_updates = allowed_updates
        self.conflict_clear_s = conflict_clear_s
        self._conflict_backoff = 1.0
        # A mark left by an earlier run is cleared like one of ours.
        self._conflict_at: float | None = time.monotonic()
        # Whether the database is a Citus coordinator (asked when the poll starts).
        self._citus = False

    async def run(self, lost: asyncio.Event) -> None:
        """Poll until the lease is lost (the caller cancels a poll in progress)."""
        bot_id = self.bot.info.id
        self._citus = await on_citus(self.pool)
        start = await self.pool.fetchrow(START, bot_id)
        offset: int = start["poll_offset"] if start else 0
        idle_s = start["idle_s"] if start and start["idle_s"] is not None else IDLE_RESTART_S
        last_update = time.monotonic() - idle_s
        backoff = 1.0
        while not lost.is_set():
            restarted = time.monotonic() - last_update >= IDLE_RESTART_S
            try:
                updates = await self.telegram.get_updates(
                    offset=None if restarted else offset or None,
                    timeout=self.poll_timeout_s,
                    allowed_updates=self.allowed_updates(),
                )
            except Unauthorized:
                await self.on_refused(bot_id)
                return
            except Conflict as exc:
                await self._on_conflict(exc)
                continue
            except TelegramError as exc:
                wait = random.uniform(backoff / 2, backoff)
                log.warning("bot %s: getUpdates failed (%s); retry in %.1fs", bot_id, exc, wait)
                await asyncio.sleep(wait)
                backoff = min(self.max_backoff_s, backoff * 2)
                continue
            backoff = 1.0
            await self._settle_conflict()
            if not updates:
                continue
            ids = [i for i in map(_update_id, updates) if i is not None]
            if not ids:
                # Nothing to confirm them by: wait rather than fetch them again at once.
                log.warning("bot %s: getUpdates gave updates without an update_id", bot_id)
                await asyncio.sleep(backoff)
                continue
            await self._store(updates, max(ids) + 1, restarted)
            offset = max(ids) + 1
            last_update = time.monotonic()

    async def _store(self, updates: list[Any], offset: int, restarted: bool) -> None:
        """Store the batch and move the offset; a batch PostgreSQL refuses goes one by one."""
        bot_id = self.bot.info.id
        good = [u for u in updates if _well_formed(u)]
        if len(good) < len(updates):
            dropped = len(updates) - len(good)
            log.warning("bot %s: %d updates without an update_id dropped", bot_id, dropped)
        async with self.pool.acquire() as conn, conn.transaction():
            try:
                async with conn.transaction():
                    if good:
                        await store_updates(conn, bot_id, good, self._citus)
            except asyncpg.DataError:
                await self._one_by_one(conn, good)
            await conn.execute(ADVANCE, bot_id, offset, restarted)
        if good:
            self.notifier.wake("inbox")

    async def _one_by_one(self, conn: asyncpg.Connection, updates: list[Any]) -> None:
        """Store each update alone; one that cannot be stored is kept dead, with the reason."""
        bot_id = self.bot.info.id
        for update in updates:
            try:
                async with conn.transaction():
                    await store_updates(conn, bot_id, [update], self._citus)
                continue
            except asyncpg.DataError as exc:
                reason = f"quarantined: PostgreSQL cannot store it as it came ({exc})"[:300]
            c = classify(update)
            log.warning("bot %s: update %s %s", bot_id, c.update_id, reason)
            try:
                async with conn.transaction():
                    await conn.execute(
                        QUARANTINE,
                        bot_id,
                        c.update_id,
                        c.kind,
                        c.chat_key,
                        _without_nul(update),
                        reason,
                    )
            except asyncpg.DataError:
                log.warning(
                    "bot %s: update %s dropped: not even its quarantine", bot_id, c.update_id
                )

    async def _on_conflict(self, exc: Conflict) -> None:
        """409: a webhook is set, or another program polls the same token."""
        bot_id = self.bot.info.id
        if "webhook" in exc.description.lower():
            now = time.monotonic()
            if (
                now - _webhook_deleted_at.get(bot_id, -DELETE_WEBHOOK_EVERY_S)
                >= DELETE_WEBHOOK_EVERY_S
            ):
                _webhook_deleted_at[bot_id] = now
                log.info("bot %s: a webhook was set; deleting it to poll", bot_id)
                try:
                    await self.telegram.delete_webhook()
                    return
                except TelegramError as error:
                    log.warning("bot %s: deleteWebhook failed: %s", bot_id, error)
            else:
                log.warning(
                    "bot %s: a webhook was set again, by another program with this token?"
                    " Not deleted again within %d minutes",
                    bot_id,
                    DELETE_WEBHOOK_EVERY_S // 60,
                )
        else:
            log.warning("bot %s: another program polls with this bot's token (%s)", bot_id, exc)
        self._conflict_at = time.monotonic()
        await self.pool.execute(SET_PROBLEM, bot_id, PROBLEM)
        wait = random.uniform(self._conflict_backoff / 2, self._conflict_backoff)
        self._conflict_backoff = min(MAX_CONFLICT_BACKOFF_S, self._conflict_backoff * 2)
        await asyncio.sleep(wait)

    async def _settle_conflict(self) -> None:
        """After a calm spell, the `conflict` mark goes and the backoff starts small again."""
        if (
            self._conflict_at is None
            or time.monotonic() - self._conflict_at < self.conflict_clear_s
        ):
            return
        self._conflict_at = None
        self._conflict_backoff = 1.0
        if await self.pool.fetchval(CLEAR_PROBLEM, self.bot.info.id, PROBLEM):
            log.info(
                "bot %s: no conflict for %d minutes", self.bot.info.id, self.conflict_clear_s // 60
            )
