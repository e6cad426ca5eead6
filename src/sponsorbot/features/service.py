"""What the owner's services (channels, content, gate settings) are built from."""

from __future__ import annotations

import asyncpg

from sponsorbot.features.botconfig import ConfigCache
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.errors import NotFound
from sponsorbot.telegram import Bot, BotApi


class OwnerService:
    """The database, the Bot API, the bots and the gate configuration cache, shared."""

    def __init__(
        self, pool: asyncpg.Pool, api: BotApi, bots: BotsService, config: ConfigCache
    ) -> None:
        self.pool = pool
        self.api = api
        self.bots = bots
        self.config = config

    async def _telegram(self, bot_id: int) -> Bot:
        """The Bot API as this bot (its token read and decrypted from the database)."""
        return self.api.bot(await self.bots.token(bot_id))

    async def _change_one(self, sql: str, bot_id: int, key: int, missing: str) -> None:
        """Run an UPDATE or DELETE of one row of a bot; NotFound (of the bot, or `missing`)
        when it touched nothing. The bot's configuration cache is dropped after a change."""
        done: str = await self.pool.execute(sql, bot_id, key)
        if done.endswith(" 0"):
            await self.bots.get(bot_id)
            raise NotFound(missing)
        self.config.invalidate(bot_id)
