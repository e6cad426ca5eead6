"""A bot's gate configuration as handlers read it: gate channels, texts, uploaders.

Every /start needs it, so it is cached in memory for a few seconds per bot. A change made
through the services drops the entry at once in this process and, through a wake-up, in every
other one (a campaign that reached its goal leaves every gate within a second or two); the
expiry covers a lost notification.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from sponsorbot.engine.notify import Notifier

GATE = """
SELECT g.chat_id, g.request_counts, c.title, c.username, c.invite_link, c.invite_requests
FROM gate_channels g
JOIN channels c ON c.bot_id = g.bot_id AND c.chat_id = g.chat_id
WHERE g.bot_id = $1
ORDER BY g.position
"""
# Running campaigns of the bot, whose channel goes first or last in its gate with the
# campaign's own invite link (so joins through the gate are credited to it).
CAMPAIGN_SLOTS = """
SELECT c.id, c.chat_id, c.position, c.join_requests, b.invite_link, ch.title, ch.username
FROM campaign_bots b
JOIN campaigns c ON c.id = b.campaign_id
JOIN channels ch ON ch.bot_id = b.bot_id AND ch.chat_id = c.chat_id
WHERE b.bot_id = $1 AND c.status = 'running' AND b.revoked_at IS NULL
ORDER BY c.id
"""
SETTINGS = "SELECT storage_chat_id, texts FROM bot_settings WHERE bot_id = $1"
UPLOADERS = "SELECT user_id FROM uploaders WHERE bot_id = $1"
# The ad shop: whether the welcome offers it, and the paid banners shown after content.
SHOP = """
SELECT s.enabled,
       COALESCE((SELECT array_agg(o.material ORDER BY o.id) FROM (
                     SELECT id, material FROM shop_orders
                     WHERE bot_id = $1 AND kind = 'banner' AND state = 'running'
                       AND ends_at > now()
                     ORDER BY id LIMIT 2) o), '{}') AS banners
FROM (SELECT $1::bigint AS bot_id) b
LEFT JOIN shop_settings s ON s.bot_id = b.bot_id
"""


@dataclass(frozen=True, slots=True)
class GateChannel:
    """One channel of a bot's gate."""

    chat_id: int
    title: str
    username: str | None
    invite_link: str | None
    invite_requests: bool
    request_counts: bool
    campaign_id: int | None = None
    campaign_link: str | None = None

    @property
    def url(self) -> str | None:
        """Where the visitor joins: a campaign's own link, the public address, or the bot's
        invite link."""
        if self.campaign_link:
            return self.campaign_link
        if self.username:
            return f"https://t.me/{self.username}"
        return self.invite_link


@dataclass(frozen=True, slots=True)
class Banner:
    """A paid banner: a line of text and its link, sent after delivered content."""

    text: str
    url: str


@dataclass(frozen=True, slots=True)
class BotConfig:
    """What a handler needs to know about its bot's gate."""

    gate: tuple[GateChannel, ...] = ()
    texts: dict[str, dict[str, str]] = field(default_factory=dict)
    uploaders: frozenset[int] = frozenset()
    storage_chat_id: int | None = None
    shop_enabled: bool = False
    banners: tuple[Banner, ...] = ()


async def load(pool: asyncpg.Pool, bot_id: int) -> BotConfig:
    """Read a bot's configuration (five cheap indexed reads)."""
    async with pool.acquire() as conn:
        gate = await conn.fetch(GATE, bot_id)
        slots = await conn.fetch(CAMPAIGN_SLOTS, bot_id)
        settings = await conn.fetchrow(SETTINGS, bot_id)
        uploaders = await conn.fetch(UPLOADERS, bot_id)
        shop = await conn.fetchrow(SHOP, bot_id)
    texts: dict[str, Any] = settings["texts"] if settings else {}
    channels = [
        GateChannel(
            r["chat_id"],
            r["title"],
            r["username"],
            r["invite_link"],
            r["invite_requests"],
            r["request_counts"],
        )
        for r in gate
    ]
    return BotConfig(
        gate=with_campaigns(channels, [dict(r) for r in slots]),
        texts={k: dict(v) for k, v in texts.items() if isinstance(v, dict)},
        uploaders=frozenset(r["user_id"] for r in uploaders),
        storage_chat_id=settings["storage_chat_id"] if settings else None,
        shop_enabled=bool(shop["enabled"]),
        banners=tuple(Banner(str(b["text"]), str(b["url"])) for b in shop["banners"]),
    )


WAKE_PREFIX = "config:"


def with_campaigns(gate: list[GateChannel], slots: list[dict[str, Any]]) -> tuple[GateChannel, ...]:
    """The gate with each running campaign's channel first or last, showing the campaign's
    link; a channel already in the gate keeps its place and takes the campaign's link. One
    slot per channel: the oldest campaign's."""
    first: list[GateChannel] = []
    last: list[GateChannel] = []
    placed = {c.chat_id: i for i, c in enumerate(gate)}
    taken: set[int] = set()
    gate = list(gate)
    for slot in slots:
        chat_id = int(slot["chat_id"])
        if chat_id in taken:
            continue
        taken.add(chat_id)
        channel = GateChannel(
            chat_id,
            str(slot["title"]),
            slot["username"],
            None,
            bool(slot["join_requests"]),
            # A join request through the campaign's link lets the visitor through: approval is
            # the sponsor's business, and the join is credited when it comes.
            bool(slot["join_requests"]),
            int(slot["id"]),
            str(slot["invite_link"]),
        )
        if chat_id in placed:
            gate[placed[chat_id]] = channel
            continue
        (first if slot["position"] == "first" else last).append(channel)
    return (*first, *gate, *last)


class ConfigCache:
    """Per-bot BotConfig kept `ttl_s` seconds, dropped everywhere on a change."""

    def __init__(
        self, pool: asyncpg.Pool, ttl_s: float = 5.0, notifier: Notifier | None = None
    ) -> None:
        self.pool = pool
        self.ttl_s = ttl_s
        self.notifier = notifier
        self._entries: dict[int, tuple[float, BotConfig]] = {}
        # Bumped by each drop: a load that started before a drop must not be kept after it.
        self._generation = 0
        if notifier is not None:
            notifier.subscribe(WAKE_PREFIX, self._dropped_elsewhere)

    async def get(self, bot_id: int) -> BotConfig:
        """The bot's configuration, from memory when fresh."""
        now = time.monotonic()
        entry = self._entries.get(bot_id)
        if entry is not None and entry[0] > now:
            return entry[1]
        generation = self._generation
        config = await load(self.pool, bot_id)
        if generation == self._generation:
            self._entries[bot_id] = (now + self.ttl_s, config)
        return config

    def invalidate(self, bot_id: int) -> None:
        """Forget a bot's entry here and in every other process (its gate, texts or
        uploaders changed)."""
        self._drop(bot_id)
        if self.notifier is not None:
            self.notifier.wake(f"{WAKE_PREFIX}{bot_id}")

    def _drop(self, bot_id: int) -> None:
        self._generation += 1
        self._entries.pop(bot_id, None)

    def _dropped_elsewhere(self, rest: str) -> None:
        if rest.isdigit():
            self._drop(int(rest))
