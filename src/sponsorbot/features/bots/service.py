"""The owner's side of bots: connect, pause, resume, switch mode, remove; errors in the
features' family, so the web maps one family of errors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sponsorbot.engine.bots import (
    ActiveBot,
    BotError,
    BotExists,
    BotNotFound,
    BotService,
    BotTokenMalformed,
    BotTokenRefused,
    WebhookRefused,
    WebhookUnavailable,
)
from sponsorbot.engine.intake import Intake
from sponsorbot.engine.redrive import Redriven, redrive, waiting
from sponsorbot.engine.token_box import TokenError, bot_id_of
from sponsorbot.features.errors import Conflict, FeatureError, Invalid, NotFound, Refused
from sponsorbot.telegram import BotApi

# The engine's refusals, as owners read them, with a stable code for the panel's texts.
_AS_FEATURE: tuple[tuple[type[BotError], type[FeatureError], str], ...] = (
    (BotTokenMalformed, Invalid, "token_malformed"),
    (BotTokenRefused, Refused, "token_refused"),
    (BotExists, Conflict, "bot_exists"),
    (BotNotFound, NotFound, "bot_not_found"),
    (WebhookUnavailable, Invalid, "webhook_unavailable"),
    (WebhookRefused, Refused, "webhook_refused"),
)


@dataclass(frozen=True, slots=True)
class Bot:
    """A bot as its owner sees it: never its token, only the token's last characters; a
    `problem` ("conflict", "token_unreadable") is one the owner has to solve."""

    id: int
    username: str
    mode: str
    status: str
    problem: str | None
    problem_at: datetime | None
    token_tail: str
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Bot:
        """A bot from the engine's public fields of it."""
        return cls(**{f.name: row[f.name] for f in fields(cls)})


def token_names(token: str) -> int | None:
    """The bot id a token names (the digits before its colon), or None when it is not a
    token's shape (the replacement then says so itself)."""
    try:
        return bot_id_of(token)
    except TokenError:
        return None


@contextlib.contextmanager
def _owner_errors() -> Iterator[None]:
    try:
        yield
    except BotError as exc:
        for engine_cls, feature_cls, code in _AS_FEATURE:
            if isinstance(exc, engine_cls):
                raise feature_cls(str(exc), code=code) from None
        raise FeatureError(str(exc)) from None


class BotsService:
    """Bots as the owner manages them (tokens never leave it but through `token`)."""

    def __init__(
        self, bots: BotService, api: BotApi, intake: Intake, redrive_holds: tuple[str, ...] = ()
    ) -> None:
        self._bots = bots
        self._api = api
        self.intake = intake
        self._redrive_holds = redrive_holds

    @property
    def webhook_possible(self) -> bool:
        """Whether webhook mode can be chosen (a public URL is set)."""
        return self._bots.public_url is not None

    def default_mode(self) -> str:
        """Webhooks when there is a public URL, long polling otherwise."""
        return self._bots.default_mode()

    async def add(self, token: str, mode: str | None = None) -> Bot:
        """Connect a bot by its token (checked live)."""
        with _owner_errors():
            return Bot.of(await self._bots.add(token, mode))

    async def get(self, bot_id: int) -> Bot:
        """One bot; NotFound for an unknown id."""
        with _owner_errors():
            return Bot.of(await self._bots.get(bot_id))

    async def all(self) -> list[Bot]:
        """All bots, oldest first."""
        return [Bot.of(row) for row in await self._bots.all()]

    async def token(self, bot_id: int) -> str:
        """The decrypted token (for calls made as the bot; never shown)."""
        with _owner_errors():
            return await self._bots.token(bot_id)

    async def pause(self, bot_id: int) -> Bot:
        """Stop serving a bot."""
        with _owner_errors():
            return Bot.of(await self._bots.pause(bot_id))

    async def resume(self, bot_id: int) -> Bot:
        """Serve a paused bot again."""
        with _owner_errors():
            return Bot.of(await self._bots.resume(bot_id))

    async def replace_token(self, bot_id: int, token: str) -> Bot:
        """A new token for the same bot, checked live (after a revoke in @BotFather)."""
        with _owner_errors():
            return Bot.of(await self._bots.replace_token(bot_id, token))

    async def set_mode(self, bot_id: int, mode: str) -> Bot:
        """Switch between webhook and long polling."""
        with _owner_errors():
            return Bot.of(await self._bots.set_mode(bot_id, mode))

    async def remove(self, bot_id: int) -> None:
        """Remove a bot and everything queued for it."""
        with _owner_errors():
            await self._bots.remove(bot_id)

    async def active(self) -> list[ActiveBot]:
        """The active bots with their tokens (for periodic jobs that call Telegram as them)."""
        return await self._bots.active()

    async def redrive(
        self, bot_id: int | None = None, since: datetime | None = None, *, dry_run: bool = False
    ) -> Redriven:
        """Queue dead updates and given-up messages again (of one bot; what arrived since a
        time, else what gave up in the last 24 hours), but those the features hold back (a
        cancelled broadcast's); with `dry_run`, only count them. NotFound for an unknown bot."""
        if bot_id is not None:
            await self.get(bot_id)
        act = waiting if dry_run else redrive
        return await act(self._bots.pool, bot_id, since, self._redrive_holds)

    async def webhook_info(self, bot_id: int) -> dict[str, Any]:
        """What Telegram says of the bot's webhook (getWebhookInfo)."""
        return await self._api.bot(await self.token(bot_id)).get_webhook_info()
