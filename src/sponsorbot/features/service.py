"""What the owner's services (channels, content, gate settings) are built from."""

from __future__ import annotations

import asyncpg

from sponsorbot.engine.bots import BotService
from sponsorbot.features.botconfig import ConfigCache
from sponsorbot.telegram import Bot, BotApi


class OwnerService:
    """The database, the Bot API, the bots and the gate configuration cache, shared."""

    def __init__(
        self, pool: asyncpg.Pool, api: BotApi, bots: BotService, config: ConfigCache
    ) -> None:
        self.pool = pool
        self.api = api
        self.bots = bots
        self.config = config

    async def _telegram(self, bot_id: int) -> Bot:
        """The Bot API as this bot (its token read and decrypted from the database)."""
        return self.api.bot(await self.bots.token(bot_id))
