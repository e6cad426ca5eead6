"""A peer for the load test: the gate, written as a user would with aiogram 3.

What someone choosing a bot stack would otherwise write: a webhook bot on aiogram's aiohttp
handler that handles each update in the web process, in memory, with no queue and nothing
written anywhere. As aiogram does by default, the webhook is answered at once and the update
handled in a task: one in hand is lost if the process dies, and one whose handler fails (a
429, a network error) is logged and dropped. On /start with a payload it asks Telegram about
the two gate channels at once (asyncio.gather of two getChatMember) and sends the gate message
our product sends to a new visitor: the same text, a join button per missing channel and an
"I've joined" button.

It runs in its own virtual environment (aiogram pins a pydantic older than the product's),
made by `sponsorbot loadtest --peer aiogram`, which also writes its configuration:

    python benchmarks/peer_aiogram.py --config peer.json

    {"api": "http://127.0.0.1:8081", "host": "127.0.0.1", "port": 8090,
     "webhook": "http://127.0.0.1:8090", "secret": "...",
     "bots": [{"token": "...", "channels": [{"id": -100..., "title": "...",
                                             "username": "..."}]}]}

Every bot's webhook is set to `<webhook>/webhook/<bot id>` at start (with the secret token and
40 connections, as the product sets its own, and only the update types it handles);
GET /healthz answers once they are all set.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiogram import Bot, Dispatcher, Router
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.filters import CommandObject, CommandStart
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup, Message
from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
from aiohttp import web

# The product's English texts (src/sponsorbot/features/texts.py) and button shapes
# (features/gate/visitor.py: gate_message).
GATE = "To get this content, please join:\n{channels}\n\nThen press <b>I've joined</b>."
JOIN_BUTTON = "Join {title}"
JOINED_BUTTON = "I've joined ✅"
CONTENT = "Here it is."  # a member gets the content; no visitor of the load test is one
JOINED = frozenset({"creator", "administrator", "member"})
MAX_CONNECTIONS = 40

router = Router()


@dataclass(frozen=True)
class Channel:
    """A gate channel of one bot."""

    id: int
    title: str
    username: str


def gate_message(missing: list[Channel], code: str) -> tuple[str, InlineKeyboardMarkup]:
    """The gate's text and keyboard, as the product builds them."""
    lines = "\n".join(f"• {html.escape(c.title)}" for c in missing)
    rows = [
        [
            InlineKeyboardButton(
                text=JOIN_BUTTON.format(title=c.title), url=f"https://t.me/{c.username}"
            )
        ]
        for c in missing
    ]
    rows.append([InlineKeyboardButton(text=JOINED_BUTTON, callback_data=f"j:{code}")])
    return GATE.format(channels=lines), InlineKeyboardMarkup(inline_keyboard=rows)


async def start(
    message: Message, command: CommandObject, bot: Bot, gates: dict[int, list[Channel]]
) -> None:
    """/start <code>: both memberships at once, then the content or the gate."""
    if message.from_user is None or not command.args:
        return
    user_id = message.from_user.id
    channels = gates[bot.id]
    members = await asyncio.gather(*(bot.get_chat_member(c.id, user_id) for c in channels))
    missing = [c for c, m in zip(channels, members, strict=True) if m.status not in JOINED]
    if not missing:
        await message.answer(CONTENT)
        return
    text, markup = gate_message(missing, command.args)
    await message.answer(text, reply_markup=markup)


router.message.register(start, CommandStart(deep_link=True))


async def healthz(request: web.Request) -> web.Response:
    """Up, with every webhook set."""
    return web.Response(text="ok")


def build(config: dict[str, Any]) -> web.Application:
    """The aiohttp application: one webhook path per bot, one dispatcher for all."""
    session = AiohttpSession(api=TelegramAPIServer.from_base(config["api"]))
    default = DefaultBotProperties(parse_mode=ParseMode.HTML)
    bots: list[Bot] = []
    gates: dict[int, list[Channel]] = {}
    for entry in config["bots"]:
        bot = Bot(entry["token"], session=session, default=default)
        bots.append(bot)
        gates[bot.id] = [
            Channel(int(c["id"]), c["title"], c["username"]) for c in entry["channels"]
        ]
    dispatcher = Dispatcher(gates=gates)
    dispatcher.include_router(router)
    secret = config["secret"]

    async def set_webhooks() -> None:
        await asyncio.gather(
            *(
                bot.set_webhook(
                    f"{config['webhook']}/webhook/{bot.id}",
                    secret_token=secret,
                    max_connections=MAX_CONNECTIONS,
                    # The aiogram idiom: only the updates a handler is registered for (the
                    # simulator's my_chat_member of the set-up are none of its business).
                    allowed_updates=dispatcher.resolve_used_update_types(),
                    drop_pending_updates=True,
                )
                for bot in bots
            )
        )

    dispatcher.startup.register(set_webhooks)
    app = web.Application()
    for bot in bots:
        # aiogram's default: answer the webhook at once, handle the update in a task.
        handler = SimpleRequestHandler(
            dispatcher=dispatcher, bot=bot, secret_token=secret, handle_in_background=True
        )
        handler.register(app, path=f"/webhook/{bot.id}")
    app.router.add_get("/healthz", healthz)
    setup_application(app, dispatcher)
    return app


def main() -> None:
    """Read the configuration and serve until SIGTERM."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--config", type=Path, required=True)
    args = parser.parse_args()
    config = json.loads(args.config.read_text())
    logging.basicConfig(level=logging.WARNING)
    try:  # aiogram's "fast" extra: the product runs on uvloop too
        import uvloop
    except ImportError:
        pass
    else:
        uvloop.install()
    web.run_app(build(config), host=config["host"], port=int(config["port"]), print=None)


if __name__ == "__main__":
    main()
