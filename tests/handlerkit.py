"""A pure seam for handlers: a scripted Telegram, scripted reads, and the unit of work to check.

No database, no HTTP, no engine loop: a handler runs against these in microseconds, and the
test reads what it decided from `ctx.uow` (the calls it queued, the statements it wrote).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from sponsorbot.engine.unit import BotInfo, Context, QueuedCall, UnitOfWork
from sponsorbot.features.botconfig import BotConfig, ConfigCache, GateChannel
from sponsorbot.telegram import TelegramError
from sponsorbot.telegram.errors import error_from_answer

BOT_ID = 1000
BOT_NAME = "gate_bot"


class ScriptedTelegram:
    """Stands for `telegram.Bot`: scripted membership answers, every call recorded."""

    def __init__(self) -> None:
        self.members: dict[tuple[int, int], str] = {}
        self.refusals: dict[int, TelegramError] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def joined(self, chat_id: int, user_id: int, status: str = "member") -> None:
        """Telegram will say this person is in the chat."""
        self.members[(chat_id, user_id)] = status

    def refuse(self, chat_id: int, description: str, code: int = 400) -> None:
        """Every question about this chat gets an error (lost rights, ...)."""
        answer = {"ok": False, "error_code": code, "description": description}
        self.refusals[chat_id] = error_from_answer("getChatMember", code, answer)

    async def get_chat_member(self, chat_id: int | str, user_id: int) -> dict[str, Any]:
        self.calls.append(("getChatMember", {"chat_id": chat_id, "user_id": user_id}))
        if int(chat_id) in self.refusals:
            raise self.refusals[int(chat_id)]
        status = self.members.get((int(chat_id), user_id), "left")
        return {"status": status, "user": {"id": user_id}}

    async def create_chat_invite_link(self, chat_id: int | str, **params: Any) -> dict[str, Any]:
        self.calls.append(("createChatInviteLink", {"chat_id": chat_id, **params}))
        return {"invite_link": f"https://t.me/+link{abs(int(chat_id))}"}


class ScriptedReads:
    """Stands for the pool in the read phase: `fetchrow(sql, *args)` answers by statement."""

    def __init__(self) -> None:
        self.rows: dict[str, Callable[..., Any]] = {}
        self.asked: list[str] = []

    def on(self, sql: str, answer: Callable[..., Any]) -> None:
        """Answer `sql` with `answer(*args)`."""
        self.rows[sql] = answer

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        self.asked.append(sql)
        if sql not in self.rows:
            raise AssertionError(f"the handler read something unscripted:\n{sql}")
        return self.rows[sql](*args)


class StaticConfig(ConfigCache):
    """A config cache that always gives one configuration."""

    def __init__(self, config: BotConfig) -> None:
        super().__init__(cast(Any, None))
        self.config = config
        self.invalidated = 0

    async def get(self, bot_id: int) -> BotConfig:
        return self.config

    def invalidate(self, bot_id: int) -> None:
        self.invalidated += 1


def channel(chat_id: int, title: str = "Chan", username: str | None = "chan") -> GateChannel:
    """A gate channel (public unless `username` is None)."""
    return GateChannel(chat_id, title, username, None, False, False)


def context(
    telegram: ScriptedTelegram, reads: ScriptedReads, user_id: int, *, attempt: int = 1
) -> Context:
    """A handler's context for one update of this person."""
    info = BotInfo(BOT_ID, BOT_NAME, "polling", "active")
    return Context(
        info,
        cast(Any, telegram),
        cast(Any, reads),
        UnitOfWork(BOT_ID, inbox_id=1),
        attempt,
        user_id,
        1,
    )


def sent(ctx: Context, method: str) -> list[QueuedCall]:
    """The calls of one method the handler queued."""
    return [c for c in ctx.uow.calls if c.method == method]


def written(ctx: Context) -> list[str]:
    """The SQL of every write the handler made (alone or in order)."""
    return [sql for sql, _ in ctx.uow.statements] + [
        f"<transaction write #{i}>" for i in range(len(ctx.uow.writes))
    ]


def message(user_id: int, text: str, language: str = "en") -> dict[str, Any]:
    """A private text message from a person."""
    return {
        "message_id": 7,
        "from": {"id": user_id, "is_bot": False, "first_name": "V", "language_code": language},
        "chat": {"id": user_id, "type": "private"},
        "text": text,
    }


def button(user_id: int, data: str, message_id: int = 50) -> dict[str, Any]:
    """A press of an inline button under one of the bot's messages."""
    return {
        "id": f"cq{user_id}",
        "from": {"id": user_id, "is_bot": False, "first_name": "V", "language_code": "en"},
        "message": {"message_id": message_id, "chat": {"id": user_id, "type": "private"}},
        "data": data,
    }
