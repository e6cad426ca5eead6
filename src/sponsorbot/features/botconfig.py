"""A bot's gate configuration as handlers read it: gate channels, texts, uploaders.

Every /start needs it, so it is cached in memory for a few seconds per bot. A change made
through the services in this process drops the entry at once; other processes see it when
their entry expires.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import asyncpg

GATE = """
SELECT g.chat_id, g.request_counts, c.title, c.username, c.invite_link, c.invite_requests
FROM gate_channels g
JOIN channels c ON c.bot_id = g.bot_id AND c.chat_id = g.chat_id
WHERE g.bot_id = $1
ORDER BY g.position
"""
SETTINGS = "SELECT storage_chat_id, texts FROM bot_settings WHERE bot_id = $1"
UPLOADERS = "SELECT user_id FROM uploaders WHERE bot_id = $1"


@dataclass(frozen=True, slots=True)
class GateChannel:
    """One channel of a bot's gate."""

    chat_id: int
    title: str
    username: str | None
    invite_link: str | None
    invite_requests: bool
    request_counts: bool

    @property
    def url(self) -> str | None:
        """Where the visitor joins: the public address, or the bot's invite link."""
        if self.username:
            return f"https://t.me/{self.username}"
        return self.invite_link


@dataclass(frozen=True, slots=True)
class BotConfig:
    """What a handler needs to know about its bot's gate."""

    gate: tuple[GateChannel, ...] = ()
    texts: dict[str, dict[str, str]] = field(default_factory=dict)
    uploaders: frozenset[int] = frozenset()
    storage_chat_id: int | None = None


async def load(pool: asyncpg.Pool, bot_id: int) -> BotConfig:
    """Read a bot's configuration (three cheap indexed reads)."""
    async with pool.acquire() as conn:
        gate = await conn.fetch(GATE, bot_id)
        settings = await conn.fetchrow(SETTINGS, bot_id)
        uploaders = await conn.fetch(UPLOADERS, bot_id)
    texts: dict[str, Any] = settings["texts"] if settings else {}
    return BotConfig(
        gate=tuple(
            GateChannel(
                r["chat_id"],
                r["title"],
                r["username"],
                r["invite_link"],
                r["invite_requests"],
                r["request_counts"],
            )
            for r in gate
        ),
        texts={k: dict(v) for k, v in texts.items() if isinstance(v, dict)},
        uploaders=frozenset(r["user_id"] for r in uploaders),
        storage_chat_id=settings["storage_chat_id"] if settings else None,
    )


class ConfigCache:
    """Per-bot BotConfig kept `ttl_s` seconds."""

    def __init__(self, pool: asyncpg.Pool, ttl_s: float = 5.0) -> None:
        self.pool = pool
        self.ttl_s = ttl_s
        self._entries: dict[int, tuple[float, BotConfig]] = {}

    async def get(self, bot_id: int) -> BotConfig:
        """The bot's configuration, from memory when fresh."""
        now = time.monotonic()
        entry = self._entries.get(bot_id)
        if entry is not None and entry[0] > now:
            return entry[1]
        config = await load(self.pool, bot_id)
        self._entries[bot_id] = (now + self.ttl_s, config)
        return config

    def invalidate(self, bot_id: int) -> None:
        """Forget a bot's entry (its gate, texts or uploaders changed)."""
        self._entries.pop(bot_id, None)
