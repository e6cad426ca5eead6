"""The cases through python-telegram-bot, in its own virtual environment:
``python -m tests.simulator.conformance.client_ptb <simulator URL>``.

PTB builds each object from its JSON with the class's constructor (``de_json``): a missing
required field is a TypeError, and nothing checks the types. So each result is also written
back (``to_dict``) and compared with what was sent, fields PTB keeps aside in ``api_kwargs``
(it does not know them) are listed, and an object read as a base class where a subclass was
due (a ChatMember of an unknown status) is a problem.
"""

from __future__ import annotations

import copy
import datetime as dtm
import json
import re
import warnings
from typing import Any

from telegram import (  # type: ignore[import-not-found]
    Bot,
    InlineKeyboardMarkup,
    InputFile,
    MessageEntity,
    ReplyKeyboardMarkup,
    ReplyKeyboardRemove,
    TelegramObject,
    Update,
)
from telegram.error import RetryAfter, TelegramError  # type: ignore[import-not-found]
from telegram.request import HTTPXRequest  # type: ignore[import-not-found]

from tests.simulator.conformance.driver import MEMBER_CLASSES, Outcome, differences, main
from tests.simulator.conformance.spec import ALL_UPDATES, BAD_TOKEN, Call, Upload

MARKUPS = {
    "inline_keyboard": InlineKeyboardMarkup,
    "keyboard": ReplyKeyboardMarkup,
    "remove_keyboard": ReplyKeyboardRemove,
}


class RecordingRequest(HTTPXRequest):  # type: ignore[misc]
    """PTB's own HTTP layer, keeping the last answer's body as the simulator sent it."""

    def __init__(self, record: dict[str, bytes | None]) -> None:
        super().__init__()
        self.record = record

    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        code, payload = await super().do_request(*args, **kwargs)
        self.record["last"] = payload
        return code, payload


def _snake(method: str) -> str:
    return re.sub("([A-Z])", r"_\1", method).lower()


def _dump(value: Any) -> Any:
    if isinstance(value, TelegramObject):
        return json.loads(value.to_json())  # enums as their values, dates as timestamps
    if isinstance(value, list | tuple):
        return [_dump(v) for v in value]
    return value


def _fallback(obj: Any) -> bool:
    """Read as a base class that has subclasses of its own name (ChatMember, MessageOrigin)."""
    cls = type(obj)
    return any(sub.__name__.startswith(cls.__name__) for sub in cls.__subclasses__())


def _walk(value: Any, path: str, outcome: Outcome) -> None:
    """Fields PTB keeps aside (notes: PTB 22 is older than the Bot API the simulator follows,
    aiogram's client flags fields no Bot API has), and objects read as a base class."""
    if isinstance(value, list | tuple):
        for n, item in enumerate(value):
            _walk(item, f"{path}[{n}]", outcome)
        return
    if not isinstance(value, TelegramObject):
        return
    where = path or "result"
    if value.api_kwargs:
        outcome.notes.append(f"{where}: fields PTB does not know: {sorted(value.api_kwargs)}")
    name = type(value).__name__
    if _fallback(value):
        outcome.problems.append(f"{where}: read as the base class {name}")
    status = getattr(value, "status", None)
    member = name.startswith("ChatMember") and name != "ChatMemberUpdated"
    if member and MEMBER_CLASSES.get(str(status)) != name:
        outcome.problems.append(f"{where}: status {status!r} read as {name}")
    for attr, item in value._get_attrs(recursive=False).items():
        _walk(item, f"{path}.{attr}" if path else attr, outcome)


def strict(parsed: Any, sent: Any, outcome: Outcome) -> Outcome:
    """What a lenient read let through, added to ``outcome``."""
    _walk(parsed, "", outcome)
    outcome.problems += differences(sent, _dump(parsed))
    return outcome


def _kind(update: Any, body: dict[str, Any]) -> str:
    """The update's kind as PTB sees it: the field of the body PTB filled in."""
    for key in body:
        if key != "update_id" and getattr(update, key, None) is not None:
            return key
    return "none"


class Ptb:
    """The scene's bot as a PTB Bot on the simulator."""

    def __init__(self, url: str, token: str) -> None:
        self.record: dict[str, bytes | None] = {"last": None}
        base = f"{url}/bot"

        def bot(token: str) -> Any:
            return Bot(
                token,
                base_url=base,
                request=RecordingRequest(self.record),
                get_updates_request=RecordingRequest(self.record),
            )

        self.bot = bot(token)
        self.bad_bot = bot(BAD_TOKEN)

    def _sent(self) -> Any:
        last = self.record["last"]
        return None if last is None else json.loads(last)

    def _args(self, args: dict[str, Any], raw: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in args.items():
            if isinstance(value, Upload):
                value = InputFile(value.data, filename=value.filename)
            elif raw:
                pass
            elif key == "reply_markup":
                kind = next(k for k in MARKUPS if k in value)
                value = MARKUPS[kind].de_json(value, self.bot)
            elif key in ("entities", "caption_entities"):
                value = MessageEntity.de_list(value, self.bot)
            out[key] = value
        return out

    def _error(self, exc: Exception) -> Outcome:
        sent = self._sent()
        if isinstance(exc, RetryAfter):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                after = exc.retry_after
            seconds = int(after.total_seconds()) if isinstance(after, dtm.timedelta) else after
            return Outcome(type(exc).__name__, exc.message, seconds, sent=sent)
        if isinstance(exc, TelegramError):
            return Outcome(type(exc).__name__, exc.message, sent=sent)
        if sent is None:  # refused before anything was sent
            return Outcome(f"client:{type(exc).__name__}", str(exc))
        return Outcome(type(exc).__name__, str(exc), parse_error=True, sent=sent)

    async def call(self, call: Call, args: dict[str, Any]) -> Outcome:
        """The Bot method of the same name (``send_message``...)."""
        bot = self.bad_bot if call.bad_token else self.bot
        self.record["last"] = None
        try:
            result = await getattr(bot, _snake(call.method))(**self._args(args, call.raw))
        except Exception as exc:  # every failure is the case's outcome
            return self._error(exc)
        sent = self._sent()
        return strict(result, sent["result"], Outcome(sent=sent))

    async def get_updates(self) -> Outcome:
        """bot.get_updates, every kind allowed."""
        self.record["last"] = None
        try:
            updates = await self.bot.get_updates(timeout=0, allowed_updates=ALL_UPDATES)
        except Exception as exc:
            return self._error(exc)
        sent = self._sent()
        outcome = Outcome(sent=sent)
        for update, body in zip(updates, sent["result"], strict=True):
            outcome.kinds.append(_kind(update, body))
            strict(update, body, outcome)
        return outcome

    def read_update(self, body: dict[str, Any]) -> Outcome:
        """Update.de_json, as PTB's webhook server reads a body."""
        try:
            update = Update.de_json(copy.deepcopy(body), self.bot)  # PTB pops keys
        except Exception as exc:  # PTB raises whatever its constructors raise
            return Outcome(type(exc).__name__, str(exc), parse_error=True, sent=[body])
        return strict(update, body, Outcome(kinds=[_kind(update, body)], sent=[body]))

    async def close(self) -> None:
        """Shut both bots' HTTP clients."""
        await self.bot.shutdown()
        for request in self.bad_bot._request:
            await request.shutdown()


async def open_ptb(url: str, token: str) -> Ptb:
    """The library on the scene's bot, initialized (getMe) as an Application would."""
    ptb = Ptb(url, token)
    await ptb.bot.initialize()
    return ptb


if __name__ == "__main__":
    main("ptb", open_ptb)
