"""Features: the gate, content, channels; they register handlers and jobs with the engine.

`attach(engine)` gives the one `Features` of an engine (its caches are shared by the API
and the handlers of that process); `install(engine)` also registers the update handlers and
the periodic channel check.
"""

from __future__ import annotations

import weakref
from typing import Any

from sponsorbot.engine.core import Engine
from sponsorbot.engine.handlers import Context
from sponsorbot.features.botconfig import ConfigCache
from sponsorbot.features.channels import ChannelService
from sponsorbot.features.chatupdates import ChatUpdates
from sponsorbot.features.content import ContentService
from sponsorbot.features.events import PREPARE_EVERY_S, prepare_months
from sponsorbot.features.membership import MembershipCache
from sponsorbot.features.settings import SettingsService
from sponsorbot.features.texts import language_of, render
from sponsorbot.features.tokens import TokenService
from sponsorbot.features.uploads import Uploads
from sponsorbot.features.visitor import START, Visitor, seen

CHANNEL_CHECK_EVERY_S = 600.0

_attached: weakref.WeakKeyDictionary[Engine, Features] = weakref.WeakKeyDictionary()


class Features:
    """The feature services and handler state of one engine."""

    def __init__(
        self,
        engine: Engine,
        *,
        config_ttl_s: float = 5.0,
        member_ttl_s: float = 300.0,
    ) -> None:
        pool = engine.pool
        self.engine = engine
        self.bots = engine.bots
        self.config = ConfigCache(pool, config_ttl_s)
        self.members = MembershipCache(member_ttl_s)
        self.channels = ChannelService(pool, engine.api, engine.bots, self.config)
        self.contents = ContentService(pool, engine.api, engine.bots, self.config)
        self.settings = SettingsService(pool, engine.api, engine.bots, self.config)
        self.tokens = TokenService(pool)
        self.visitor = Visitor(self.config, self.members)
        self.chats = ChatUpdates(self.config, self.members)
        self.uploads = Uploads(self.config)
        self.installed = False

    def install(self, channel_check_every_s: float = CHANNEL_CHECK_EVERY_S) -> None:
        """Register the update handlers and the periodic channel check (once)."""
        if self.installed:
            return
        registry = self.engine.registry
        registry.register("message", self.on_message)
        registry.register("callback_query", self.on_callback)
        registry.register("chat_member", self.chats.chat_member)
        registry.register("my_chat_member", self.chats.my_chat_member)
        registry.register("chat_join_request", self.chats.join_request)
        self.engine.scheduler.register(
            "channel_watch", channel_check_every_s, self.channels.recheck_all
        )
        self.engine.scheduler.register("event_months", PREPARE_EVERY_S, prepare_months)
        self.installed = True

    async def on_message(self, update: dict[str, Any], ctx: Context) -> None:
        """A private message: an uploader's upload, a /start, or anything else (welcome)."""
        message = update["message"]
        user = message.get("from")
        if message.get("chat", {}).get("type") != "private" or not user or user.get("is_bot"):
            return
        config = await self.config.get(ctx.bot.id)
        if int(user["id"]) in config.uploaders and await self.uploads.handle(message, ctx, config):
            seen(ctx.uow, user)
            return
        start = START.match(str(message.get("text") or ""))
        if start:
            await self.visitor.start(message, (start.group(1) or "").strip(), ctx)
            return
        seen(ctx.uow, user)
        lang = language_of(user.get("language_code"))
        ctx.uow.send(
            int(user["id"]),
            "sendMessage",
            {"text": render("welcome", lang, config.texts), "parse_mode": "HTML"},
        )

    async def on_callback(self, update: dict[str, Any], ctx: Context) -> None:
        """A button press: only our "I've joined" buttons exist."""
        await self.visitor.joined(update["callback_query"], ctx)


def attach(engine: Engine, **options: Any) -> Features:
    """The Features of this engine, made on first use."""
    features = _attached.get(engine)
    if features is None:
        features = Features(engine, **options)
        _attached[engine] = features
    return features


def install(engine: Engine, **options: Any) -> Features:
    """Attach and register handlers and jobs (the worker role and `run` call this)."""
    check_every = options.pop("channel_check_every_s", CHANNEL_CHECK_EVERY_S)
    features = attach(engine, **options)
    features.install(check_every)
    return features
