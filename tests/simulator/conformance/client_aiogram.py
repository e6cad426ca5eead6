"""The cases through aiogram 3, in its own virtual environment:
``python -m tests.simulator.conformance.client_aiogram <simulator URL>``.

aiogram reads every answer with pydantic (extra fields allowed): a missing or mistyped field
is a ClientDecodeError. Beyond that, each result is read back (model_dump) and compared with
what was sent, fields aiogram does not know are listed, and chat members must be the class of
their status.
"""

from __future__ import annotations

import json
from typing import Any

from aiogram import Bot
from aiogram import methods as api
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.exceptions import ClientDecodeError, TelegramAPIError, TelegramRetryAfter
from aiogram.types import BufferedInputFile, Update
from pydantic import BaseModel, ValidationError

from tests.simulator.conformance.driver import (
    MEMBER_CLASSES,
    Outcome,
    differences,
    main,
)
from tests.simulator.conformance.spec import ALL_UPDATES, BAD_TOKEN, Call, Upload


class RecordingSession(AiohttpSession):  # type: ignore[misc]
    """aiogram's own session, keeping the last answer's body as the simulator sent it."""

    last: str | None = None

    def check_response(self, bot: Any, method: Any, status_code: int, content: str) -> Any:
        self.last = content
        return super().check_response(bot, method, status_code, content)


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True, by_alias=True)
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _walk(value: Any, path: str, problems: list[str]) -> None:
    """Fields aiogram does not know, and chat members of the wrong class."""
    if isinstance(value, list):
        for n, item in enumerate(value):
            _walk(item, f"{path}[{n}]", problems)
        return
    if not isinstance(value, BaseModel):
        return
    if value.model_extra:
        problems.append(
            f"{path or 'result'}: fields aiogram does not know: {sorted(value.model_extra)}"
        )
    status = getattr(value, "status", None)
    name = type(value).__name__
    if name.startswith("ChatMember") and name != "ChatMemberUpdated":
        wanted = MEMBER_CLASSES.get(str(getattr(status, "value", status)))
        if wanted != name:
            problems.append(f"{path or 'result'}: status {status!r} read as {name}")
    for field in type(value).model_fields:
        _walk(getattr(value, field), f"{path}.{field}" if path else field, problems)


def strict(parsed: Any, sent: Any) -> list[str]:
    """What a lenient read let through."""
    problems: list[str] = []
    _walk(parsed, "", problems)
    problems += differences(sent, _dump(parsed))
    return problems


def _kind(update: Update) -> str:
    """The update's kind as aiogram sees it (its event_type)."""
    try:
        return str(update.event_type)
    except Exception as exc:  # aiogram's UpdateTypeLookupError: no field it knows
        return f"none ({exc})"


class Aiogram:
    """The scene's bot as an aiogram Bot on the simulator."""

    def __init__(self, url: str, token: str) -> None:
        server = TelegramAPIServer.from_base(url)
        self.session = RecordingSession(api=server)
        self.bot = Bot(token, session=self.session)
        self.bad_bot = Bot(BAD_TOKEN, session=RecordingSession(api=server))

    def _sent(self, bot: Bot) -> Any:
        last = bot.session.last
        return None if last is None else json.loads(last)

    async def call(self, call: Call, args: dict[str, Any]) -> Outcome:
        """The method's own class (``SendMessage``...) through ``bot(...)``."""
        cls = getattr(api, call.method[0].upper() + call.method[1:])
        values = {
            k: BufferedInputFile(v.data, v.filename) if isinstance(v, Upload) else v
            for k, v in args.items()
        }
        bot = self.bad_bot if call.bad_token else self.bot
        bot.session.last = None
        try:
            method = cls.model_construct(**values) if call.raw else cls(**values)
        except ValidationError as exc:
            return Outcome(exception="client:ValidationError", message=str(exc))
        try:
            result = await bot(method)
        except ClientDecodeError as exc:
            return Outcome("ClientDecodeError", str(exc), parse_error=True, sent=self._sent(bot))
        except TelegramRetryAfter as exc:
            return Outcome(type(exc).__name__, exc.message, exc.retry_after, sent=self._sent(bot))
        except TelegramAPIError as exc:
            return Outcome(type(exc).__name__, exc.message, sent=self._sent(bot))
        sent = self._sent(bot)
        return Outcome(problems=strict(result, sent["result"]), sent=sent)

    async def get_updates(self) -> Outcome:
        """bot.get_updates, every kind allowed."""
        self.session.last = None
        try:
            updates = await self.bot.get_updates(timeout=0, allowed_updates=ALL_UPDATES)
        except ClientDecodeError as exc:
            return Outcome(
                "ClientDecodeError", str(exc), parse_error=True, sent=self._sent(self.bot)
            )
        except TelegramAPIError as exc:
            return Outcome(type(exc).__name__, exc.message, sent=self._sent(self.bot))
        sent = self._sent(self.bot)
        outcome = Outcome(sent=sent)
        for update, body in zip(updates, sent["result"], strict=True):
            outcome.kinds.append(_kind(update))
            outcome.problems += strict(update, body)
        return outcome

    def read_update(self, body: dict[str, Any]) -> Outcome:
        """Update.model_validate, as aiogram's webhook handler reads a body."""
        try:
            update = Update.model_validate(body, context={"bot": self.bot})
        except ValidationError as exc:
            return Outcome("ValidationError", str(exc), parse_error=True, sent=[body])
        return Outcome(problems=strict(update, body), kinds=[_kind(update)], sent=[body])

    async def close(self) -> None:
        """Close both sessions."""
        await self.bot.session.close()
        await self.bad_bot.session.close()


async def open_aiogram(url: str, token: str) -> Aiogram:
    """The library on the scene's bot."""
    return Aiogram(url, token)


if __name__ == "__main__":
    main("aiogram", open_aiogram)
