"""Is this person in these channels? Asked of Telegram all at once, "joined" cached briefly.

"Joined" is kept in this worker's memory for a few minutes and dropped at once when a
chat_member update says the person left. "Not joined" is never cached: the visitor is about to
join and press "I've joined". A channel Telegram will not tell us about (the bot lost its
rights, "member list is inaccessible") is Unknown and lets the visitor through: nobody can
join a channel nobody can check. Telegram unreachable or answering 5xx is none of these: the
error propagates and the engine retries the update later. Nor is a refused token (401): it
says nothing about any channel, and propagates for the engine to stop the bot.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sponsorbot.features.botconfig import GateChannel
from sponsorbot.telegram import Bot, TelegramError, Unauthorized
from sponsorbot.telegram.members import is_member


class Standing(enum.Enum):
    """A visitor's standing in one gate channel."""

    JOINED = "joined"
    PENDING = "pending"  # a recorded join request where the gate counts it
    MISSING = "missing"
    UNKNOWN = "unknown"

    @property
    def passes(self) -> bool:
        """Whether this lets the visitor through."""
        return self is not Standing.MISSING


@dataclass(frozen=True, slots=True)
class Verdict:
    """The standing in one channel, with Telegram's words when Unknown."""

    channel: GateChannel
    standing: Standing
    reason: str | None = None


class MembershipCache:
    """(bot, chat, user) → joined, for `ttl_s` seconds; bounded in size."""

    def __init__(self, ttl_s: float = 300.0, max_entries: int = 500_000) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._until: dict[tuple[int, int, int], float] = {}

    def joined(self, bot_id: int, chat_id: int, user_id: int) -> bool:
        """True when a fresh "joined" is remembered."""
        key = (bot_id, chat_id, user_id)
        until = self._until.get(key)
        if until is None:
            return False
        if until <= time.monotonic():
            del self._until[key]
            return False
        return True

    def remember(self, bot_id: int, chat_id: int, user_id: int) -> None:
        """Remember that the person is in the chat."""
        if len(self._until) >= self.max_entries:
            self._evict()
        self._until[(bot_id, chat_id, user_id)] = time.monotonic() + self.ttl_s

    def forget(self, bot_id: int, chat_id: int, user_id: int) -> None:
        """The person left (or was removed): ask Telegram next time."""
        self._until.pop((bot_id, chat_id, user_id), None)

    def _evict(self) -> None:
        now = time.monotonic()
        for key in [k for k, until in self._until.items() if until <= now]:
            del self._until[key]
        # Still full of fresh entries: drop the oldest half (dicts keep insertion order).
        if len(self._until) >= self.max_entries:
            for key in list(self._until)[: len(self._until) // 2]:
                del self._until[key]


async def check_all(
    telegram: Bot,
    cache: MembershipCache,
    bot_id: int,
    user_id: int,
    gate: Sequence[GateChannel],
    pending: Collection[int] = (),
) -> list[Verdict]:
    """The visitor's standing in every gate channel, asking Telegram about all at once.

    Raises the first transient TelegramError (network, 5xx, 429) so the update is retried,
    and Unauthorized (the token was refused), which is no verdict about a channel.
    """
    verdicts: dict[int, Verdict] = {}
    to_ask: list[GateChannel] = []
    for channel in gate:
        if cache.joined(bot_id, channel.chat_id, user_id):
            verdicts[channel.chat_id] = Verdict(channel, Standing.JOINED)
        elif channel.request_counts and channel.chat_id in pending:
            verdicts[channel.chat_id] = Verdict(channel, Standing.PENDING)
        else:
            to_ask.append(channel)
    answers = await asyncio.gather(
        *(telegram.get_chat_member(c.chat_id, user_id) for c in to_ask), return_exceptions=True
    )
    for channel, answer in zip(to_ask, answers, strict=True):
        if isinstance(answer, TelegramError):
            if answer.is_transient or isinstance(answer, Unauthorized):
                raise answer
            verdicts[channel.chat_id] = Verdict(channel, Standing.UNKNOWN, answer.description)
        elif isinstance(answer, BaseException):
            raise answer
        elif is_member(answer):
            cache.remember(bot_id, channel.chat_id, user_id)
            verdicts[channel.chat_id] = Verdict(channel, Standing.JOINED)
        else:
            verdicts[channel.chat_id] = Verdict(channel, Standing.MISSING)
    return [verdicts[c.chat_id] for c in gate]
