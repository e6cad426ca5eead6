"""The forced-join gate: a visitor's /start, the gate message, "I've joined", the content, and
the chat updates that keep membership and channel rights current.

The core of the product, low in the feature graph: features that add to what a visitor sees
(the shop) require the gate and fill in its hooks (`GateHooks`, a service of this feature)."""

from __future__ import annotations

import asyncpg

from sponsorbot.engine.filters import ChatType, CommandStart, from_person
from sponsorbot.engine.janitor import Sweep, sweep
from sponsorbot.engine.routing import Router
from sponsorbot.features.base import Feature, Job, Parts, Shared
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.gate.bot_settings import BotSettingsService
from sponsorbot.features.gate.chats import DELETE_DECLINED, ChatUpdates
from sponsorbot.features.gate.hooks import GateHooks
from sponsorbot.features.gate.membership import MembershipCache
from sponsorbot.features.gate.visitor import START_AHEAD, Joined, Visitor
from sponsorbot.features.stats.events import EventKind

PRIVATE = ChatType("private")
CLEANUP_EVERY_S = 600.0


async def cleanup(pool: asyncpg.Pool) -> None:
    """Forget declined join requests after a month."""
    await sweep(pool, [Sweep("join_requests", DELETE_DECLINED)])


def setup(shared: Shared) -> Parts:
    """The gate's handlers, its owner-side settings service and its hooks."""
    # Who is in which channel, as this process last heard: the visitor's checks read it, chat
    # updates drop a person who left.
    members = MembershipCache(shared.options.member_ttl_s)
    hooks = GateHooks()
    visitor = Visitor(shared.config, members, hooks)
    chats = ChatUpdates(shared.config, members)
    router = Router("gate")
    router.message(PRIVATE, from_person, CommandStart())(visitor.start)
    router.read_ahead("message", START_AHEAD)
    router.callback_query(Joined.filter())(visitor.joined)
    router.chat_member()(chats.chat_member)
    router.my_chat_member()(chats.my_chat_member)
    router.chat_join_request()(chats.join_request)
    fallback = Router("gate: welcome")
    fallback.message(PRIVATE, from_person)(visitor.welcome)
    fallback.callback_query()(visitor.stray_button)
    engine = shared.engine
    bots = shared.required.get(BotsService)
    return Parts(
        router=router,
        fallback=fallback,
        services=[BotSettingsService(engine.pool, engine.api, bots, shared.config), hooks],
        jobs=[Job("gate_cleanup", CLEANUP_EVERY_S, cleanup)],
        event_kinds=(
            EventKind.STARTED,
            EventKind.GATE_SHOWN,
            EventKind.GATE_PASSED,
            EventKind.CONTENT_SENT,
            EventKind.UNKNOWN_CODE,
            EventKind.JOINED,
            EventKind.LEFT,
            EventKind.JOIN_REQUEST,
            EventKind.CHANNEL_UNKNOWN,
        ),
    )


FEATURE = Feature("gate", setup, requires=("bots",))
