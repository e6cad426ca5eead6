"""Uploading in Telegram: an uploader sends files to the bot and gets the link back.

One file: a link at once. ``/batch`` ... ``/done``: one link for everything sent in between
(``/cancel`` drops it); the open batch is the uploader's conversation state. A forwarded channel
post adds that channel to the bot. Anyone not on the bot's uploader list, and anything that is
not an upload matter (``/start``, a plain word outside a batch), goes on to the gate. Each
handler runs in the uploader's turn (`features/turn.py`): their language, the texts, and the
person upserted when it is answered.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from sponsorbot.engine.conversation import Conversation, States, begin, end
from sponsorbot.engine.filters import ChatType, Command, State, command_of, from_person
from sponsorbot.engine.routing import UNHANDLED, Router
from sponsorbot.engine.unit import Context
from sponsorbot.features.botconfig import ConfigCache
from sponsorbot.features.channels.service import (
    SET_LINK,
    UPSERT,
    create_invite_link,
    inspect,
    refusal,
)
from sponsorbot.features.content.service import (
    INSERT,
    MAX_ITEMS,
    NewContent,
    item_of_message,
    link,
    new_code,
)
from sponsorbot.features.errors import FeatureError
from sponsorbot.features.turn import Turn, turned
from sponsorbot.telegram import TelegramError


class Upload(States):
    """An uploader's conversation state."""

    BATCH = "upload:batch"  # /batch ... /done: the items sent so far are in its data


def forwarded_chat(message: dict[str, Any]) -> dict[str, Any] | None:
    """The channel a forwarded post came from, if it is one."""
    origin = message.get("forward_origin")
    if isinstance(origin, dict) and origin.get("type") == "channel":
        chat = origin.get("chat")
        return chat if isinstance(chat, dict) else None
    legacy = message.get("forward_from_chat")
    return legacy if isinstance(legacy, dict) else None


class Uploads:
    """The uploader's side of the bot."""

    def __init__(self, config: ConfigCache) -> None:
        self.config = config

    async def is_uploader(self, message: dict[str, Any], ctx: Context) -> bool:
        """A router filter: the sender is on this bot's uploader list."""
        config = await self.config.get(ctx.bot.id)
        return int(message["from"]["id"]) in config.uploaders

    def router(self) -> Router:
        """The uploader's handlers, most specific first."""
        router = Router("content: uploads", ChatType("private"), from_person, self.is_uploader)
        router.message(lambda m, _: forwarded_chat(m) is not None)(self.add_channel)
        router.message(Command("batch"))(self.open_batch)
        router.message(Command("cancel"))(self.cancel_batch)
        router.message(Command("done"))(self.close_batch)
        router.message(State(Upload.BATCH))(self.add_to_batch)
        router.message()(self.single)
        return router

    @turned()
    async def open_batch(self, message: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """/batch: start gathering items (an open batch starts over)."""
        begin(ctx.uow, turn.user_id, Upload.BATCH, {"items": []})
        turn.say("batch_started")

    @turned()
    async def cancel_batch(self, message: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """/cancel: drop the open batch."""
        open_batch = await ctx.conversation()
        end(ctx.uow, turn.user_id)
        in_batch = open_batch is not None and open_batch.state == Upload.BATCH
        turn.say("batch_cancelled" if in_batch else "no_batch")

    @turned()
    async def close_batch(self, message: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """/done: one link for the items of the open batch."""
        open_batch = await ctx.conversation()
        if open_batch is None or open_batch.state != Upload.BATCH:
            turn.say("no_batch")
            return
        items = list(open_batch.data.get("items") or [])
        if not items:
            turn.say("batch_empty")
            return
        end(ctx.uow, turn.user_id)
        kind = items[0]["kind"] if len(items) == 1 else "batch"
        self._store(ctx, turn, NewContent(kind, items, f"tg:{turn.user_id}"))

    @turned()
    async def add_to_batch(
        self, message: dict[str, Any], ctx: Context, turn: Turn, conversation: Conversation
    ) -> object:
        """A file or a text while a batch is open (`conversation`, from the `State` filter):
        one more item."""
        if command_of(message) is not None:
            return UNHANDLED  # /start and other commands are not items
        item = item_of_message(message)
        text = message.get("text")
        if item is None and isinstance(text, str) and text:
            item = {"kind": "text", "text": text}
        if item is None:
            return UNHANDLED
        items = list(conversation.data.get("items") or [])
        if len(items) >= MAX_ITEMS:
            turn.say("batch_added", count=f"{MAX_ITEMS}/{MAX_ITEMS}: /done")
            return None
        items.append(item)
        begin(ctx.uow, turn.user_id, Upload.BATCH, {"items": items})
        turn.say("batch_added", count=len(items))
        return None

    @turned()
    async def single(self, message: dict[str, Any], ctx: Context, turn: Turn) -> object:
        """One file outside a batch: a link for it at once."""
        item = item_of_message(message)
        if item is None:
            return UNHANDLED
        self._store(ctx, turn, NewContent(item["kind"], [item], f"tg:{turn.user_id}"))
        return None

    def _store(self, ctx: Context, turn: Turn, new: NewContent) -> None:
        code = new_code()
        bot_id = ctx.bot.id

        async def insert(conn: asyncpg.Connection) -> None:
            # A code collision fails the transaction; the retried update draws a new code.
            await conn.execute(INSERT, *new.args(bot_id, code))

        ctx.uow.run_in_transaction(insert)
        turn.say("upload_saved", link=link(ctx.bot.username, code))

    @turned()
    async def add_channel(self, message: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """A post forwarded from a channel: add that channel to the bot (checked live)."""
        chat = forwarded_chat(message)
        assert chat is not None
        key, values = await self._add_channel(ctx, int(chat["id"]))
        turn.say(key, **values)

    async def _add_channel(self, ctx: Context, chat_id: int) -> tuple[str, dict[str, Any]]:
        """Queue the channel's row (and invite link); the reply's text key and values."""
        uow = ctx.uow
        try:
            check = await inspect(ctx.telegram, ctx.bot.id, chat_id)
            if check.missing:
                return "channel_refused", {"reason": refusal(check.title, check.missing)}
            uow.write_in_order(UPSERT, *check.args(ctx.bot.id))
            if check.username is None:
                url = await create_invite_link(ctx.telegram, check.chat_id, False)
                uow.write_in_order(SET_LINK, ctx.bot.id, check.chat_id, url, False)
        except FeatureError as exc:
            return "channel_refused", {"reason": exc.message}
        except TelegramError as exc:
            if exc.is_transient:
                raise
            return "channel_refused", {"reason": exc.description}
        self.config.invalidate(ctx.bot.id)
        return "channel_added", {"title": check.title}
