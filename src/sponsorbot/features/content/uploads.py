"""Uploading in Telegram: an uploader sends files to the bot and gets the link back.

One file: a link at once. ``/batch`` ... ``/done``: one link for everything sent in between
(``/cancel`` drops it). A forwarded channel post adds that channel to the bot. Anyone not on
the bot's uploader list gets the visitor's behaviour instead.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from sponsorbot.engine.handlers import Context, UnitOfWork
from sponsorbot.features.botconfig import BotConfig, ConfigCache
from sponsorbot.features.channels import SET_LINK, UPSERT, create_invite_link, inspect, refusal
from sponsorbot.features.content import (
    INSERT,
    MAX_ITEMS,
    NewContent,
    item_of_message,
    link,
    new_code,
)
from sponsorbot.features.errors import FeatureError
from sponsorbot.features.texts import language_of, render
from sponsorbot.telegram import TelegramError

BATCH = "SELECT items FROM upload_batches WHERE bot_id = $1 AND user_id = $2"
OPEN_BATCH = """
INSERT INTO upload_batches (bot_id, user_id) VALUES ($1, $2)
ON CONFLICT (bot_id, user_id) DO UPDATE SET items = '[]', started_at = now()
"""
ADD_ITEM = """
UPDATE upload_batches SET items = items || $3::jsonb WHERE bot_id = $1 AND user_id = $2
"""
CLOSE_BATCH = "DELETE FROM upload_batches WHERE bot_id = $1 AND user_id = $2"
COMMANDS = ("/batch", "/done", "/cancel")


def _command(text: str) -> str | None:
    if not text.startswith("/"):
        return None
    return text.split(maxsplit=1)[0].split("@", 1)[0].lower()


def _forwarded_chat(message: dict[str, Any]) -> dict[str, Any] | None:
    origin = message.get("forward_origin")
    if isinstance(origin, dict) and origin.get("type") == "channel":
        chat = origin.get("chat")
        return chat if isinstance(chat, dict) else None
    legacy = message.get("forward_from_chat")
    return legacy if isinstance(legacy, dict) else None


class Uploads:
    """The uploader's side of the message handler."""

    def __init__(self, config: ConfigCache) -> None:
        self.config = config

    async def handle(self, message: dict[str, Any], ctx: Context, config: BotConfig) -> bool:
        """Handle an uploader's message; False when it is not an upload matter (e.g. /start)."""
        user_id = int(message["from"]["id"])
        lang = language_of(message["from"].get("language_code"))
        text = str(message.get("text") or "")
        command = _command(text)
        forwarded = _forwarded_chat(message)
        if forwarded is not None:
            await self._add_channel(ctx, user_id, forwarded, lang, config)
            return True
        item = item_of_message(message)
        if command not in COMMANDS and item is None and (command is not None or not text):
            return False  # /start and other commands, or a message without content
        batch = await ctx.db.fetchrow(BATCH, ctx.bot.id, user_id)
        if item is None and command is None:
            if batch is None:
                return False
            item = {"kind": "text", "text": text}
        uow = ctx.uow

        def reply(key: str, **values: Any) -> None:
            text = render(key, lang, config.texts, **values)
            uow.send(user_id, "sendMessage", {"text": text, "parse_mode": "HTML"})

        if command == "/batch":
            uow.execute(OPEN_BATCH, ctx.bot.id, user_id)
            reply("batch_started")
        elif command == "/cancel":
            uow.execute(CLOSE_BATCH, ctx.bot.id, user_id)
            reply("batch_cancelled" if batch is not None else "no_batch")
        elif command == "/done":
            if batch is None:
                reply("no_batch")
            elif not batch["items"]:
                reply("batch_empty")
            else:
                items = list(batch["items"])
                kind = items[0]["kind"] if len(items) == 1 else "batch"
                uow.execute(CLOSE_BATCH, ctx.bot.id, user_id)
                new = NewContent(kind, items, f"tg:{user_id}")
                self._store(uow, ctx, user_id, new, lang, config)
        elif item is not None and batch is not None:
            count = len(batch["items"]) + 1
            if count > MAX_ITEMS:
                reply("batch_added", count=f"{MAX_ITEMS}/{MAX_ITEMS}: /done")
            else:
                uow.execute(ADD_ITEM, ctx.bot.id, user_id, [item])
                reply("batch_added", count=count)
        elif item is not None:
            new = NewContent(item["kind"], [item], f"tg:{user_id}")
            self._store(uow, ctx, user_id, new, lang, config)
        return True

    def _store(
        self,
        uow: UnitOfWork,
        ctx: Context,
        user_id: int,
        new: NewContent,
        lang: str,
        config: BotConfig,
    ) -> None:
        code = new_code()

        async def insert(conn: asyncpg.Connection) -> None:
            # A code collision fails the transaction; the retried update draws a new code.
            await conn.execute(INSERT, *new.args(ctx.bot.id, code))

        uow.add(insert)
        text = render("upload_saved", lang, config.texts, link=link(ctx.bot.username, code))
        uow.send(user_id, "sendMessage", {"text": text, "parse_mode": "HTML"})

    async def _add_channel(
        self,
        ctx: Context,
        user_id: int,
        chat: dict[str, Any],
        lang: str,
        config: BotConfig,
    ) -> None:
        uow = ctx.uow
        try:
            check = await inspect(ctx.telegram, ctx.bot.id, int(chat["id"]))
            if check.missing:
                reason = refusal(check.title, check.missing)
            else:
                uow.execute(UPSERT, *check.args(ctx.bot.id))
                if check.username is None:
                    url = await create_invite_link(ctx.telegram, check.chat_id, False)
                    uow.execute(SET_LINK, ctx.bot.id, check.chat_id, url, False)
                self.config.invalidate(ctx.bot.id)
                text = render("channel_added", lang, config.texts, title=check.title)
                uow.send(user_id, "sendMessage", {"text": text, "parse_mode": "HTML"})
                return
        except FeatureError as exc:
            reason = exc.message
        except TelegramError as exc:
            if exc.is_transient:
                raise
            reason = exc.description
        text = render("channel_refused", lang, config.texts, reason=reason)
        uow.send(user_id, "sendMessage", {"text": text, "parse_mode": "HTML"})
