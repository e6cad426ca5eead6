"""What the owner's services (channels, content, gate settings) are built from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import asyncpg

from sponsorbot.features.botconfig import ConfigCache
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.errors import NotFound
from sponsorbot.telegram import Bot, BotApi


# A dataclass so that a service needing more (the broadcasts', the shop's) declares only its
# own fields, not the four shared ones again. eq=False keeps services compared by identity;
# repr=False keeps object's repr, so no pool, key box or settings is ever spelled out.
@dataclass(eq=False, repr=False)
class OwnerService:
    """The database, the Bot API, the bots and the gate configuration cache, shared."""

    pool: asyncpg.Pool
    api: BotApi
    bots: BotsService
    config: ConfigCache

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


class Record:
    """A base for the owner services' typed results (frozen dataclasses): their fields read by
    name as well, `campaign["status"]` and `{**campaign}`, for the callers written when the
    results were dicts (the gate's page, the shop's fulfilment, the tests)."""

    __slots__ = ()

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def keys(self) -> list[str]:
        """The field names, in order."""
        return [f.name for f in fields(self)]  # type: ignore[arg-type]

    @classmethod
    def values_of(cls, row: Mapping[str, Any]) -> dict[str, Any]:
        """The row's values of this result's fields (a field the row lacks keeps its default)."""
        return {f.name: row[f.name] for f in fields(cls) if f.name in row}  # type: ignore[arg-type]
