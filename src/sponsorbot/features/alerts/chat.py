"""The team's side inside a bot: linking a chat with a code, /unlink, and the alerts' buttons.

A button acts as the member who pressed it: the chat must be linked to an active member, their
role must hold the permission the panel asks for the same move, and the order must still be
where the move applies. Each refusal is a clear answer that changes nothing; each move is in
the audit log and the order's timeline under the member's name, as if done on the panel.
Reject and "ask for a change" ask for the reason in the chat first (the advertiser reads it).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg

from sponsorbot.engine import calls, conversation
from sponsorbot.engine.conversation import Conversation, States
from sponsorbot.engine.filters import (
    ChatType,
    Command,
    CommandStart,
    State,
    from_person,
    start_payload,
)
from sponsorbot.engine.routing import UNHANDLED, Router
from sponsorbot.engine.unit import Context
from sponsorbot.features.accounts.audit import Actor, record
from sponsorbot.features.accounts.permissions import allowed
from sponsorbot.features.alerts.buttons import TeamOrder, TeamRedrive
from sponsorbot.features.alerts.kinds import ACT_PERMISSION, ORDER_MOVES
from sponsorbot.features.alerts.links import (
    CODE_PREFIX,
    DROP_WAITING,
    LINK_CHAT,
    MEMBER,
    MEMBER_OF_CHAT,
    SET_TELEGRAM_ID,
    TAKE_CODE,
    UNLINK_CHAT,
    code_hash,
    tell_what_waits,
)
from sponsorbot.features.alerts.texts import team_text
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.errors import Conflict, FeatureError, NotFound
from sponsorbot.features.shop.orders import Order
from sponsorbot.features.shop.rules import can
from sponsorbot.features.shop.service import ShopService

log = logging.getLogger(__name__)

REASON_TTL_S = 30 * 60.0
# The audit kinds of the panel's same moves (web/panel/routes_shop_orders.py).
AUDIT_KINDS = {
    "approve": "shop.order_approved",
    "reject": "shop.order_rejected",
    "change": "shop.order_change_asked",
}
# The shop's name (features/shop/rules.py) of each move a button makes.
SHOP_MOVES = {"approve": "approve", "reject": "reject", "change": "ask_change"}
STATE_WORDS = ("submitted", "in_review")
# Refusals the member can act on, in their language (others show the English message).
PROBLEMS = {
    "fa": {
        "reason": "دلیلی برای آگهی‌دهنده بنویسید (حداکثر ۵۰۰ نویسه).",
        "shop_address": "نخست نشانی ترون فروشگاه را تنظیم کنید.",
        "prices_unavailable": "اکنون قیمت TRX در دسترس نیست؛ یک دقیقهٔ دیگر تأیید کنید.",
    }
}


def _name(member: asyncpg.Record) -> str:
    return str(member["name"] or member["email"])


def _actor(member: asyncpg.Record) -> Actor:
    """The audit log's "who" for a member acting from their chat."""
    return Actor(member["id"], f"{member['name']} <{member['email']}>", "telegram")


def _language(member: asyncpg.Record | None, fallback: str = "en") -> str:
    return str(member["language"]) if member is not None else fallback


def problem_text(exc: FeatureError, language: str) -> str:
    """A refusal in the member's language where we have the words, else the service's own."""
    return PROBLEMS.get(language, {}).get(exc.code or "", exc.message)


class Asking(States):
    """A team member's conversation state with a bot."""

    # A reject or a change waits for its reason (the order and the move in the data).
    REASON = "team:reason"


class TeamChat:
    """Handlers for the team's chats with a bot."""

    def __init__(self, pool: asyncpg.Pool, shop: ShopService, bots: BotsService) -> None:
        self.pool = pool
        self.shop = shop
        self.bots = bots

    def clock(self) -> datetime:
        """Now (a method, so a test could move it)."""
        return datetime.now(UTC)

    async def _member(self, ctx: Context) -> asyncpg.Record | None:
        return await self.pool.fetchrow(MEMBER_OF_CHAT, ctx.bot.id, ctx.chat_key)

    def router(self) -> Router:
        """The team's handlers; included before the visitors' (a code is a /start link too)."""
        router = Router("team")

        @router.message(from_person, CommandStart(payload=True))
        async def link(message: dict[str, Any], ctx: Context) -> object:
            payload = start_payload(message)
            if not payload.startswith(CODE_PREFIX):
                return UNHANDLED
            await self.link(message, payload[len(CODE_PREFIX) :], ctx)
            return None

        @router.message(from_person, Command("unlink"))
        async def unlink(message: dict[str, Any], ctx: Context) -> object:
            return await self.unlink(ctx)

        @router.message(from_person, ChatType("private"), State(Asking.REASON))
        async def reason(message: dict[str, Any], ctx: Context, conversation: Conversation) -> None:
            await self.reason(message, ctx, conversation)

        @router.callback_query(TeamOrder.filter())
        async def order(query: dict[str, Any], ctx: Context, pressed: TeamOrder) -> None:
            await self.order_button(query, ctx, pressed)

        @router.callback_query(TeamRedrive.filter())
        async def redrive(query: dict[str, Any], ctx: Context, pressed: TeamRedrive) -> None:
            await self.redrive_button(query, ctx, pressed)

        return router

    # Linking

    async def link(self, message: dict[str, Any], code: str, ctx: Context) -> None:
        """Link this chat to the member whose code it is (a code works once, in ten minutes)."""
        person = message["from"]
        lang = _language(
            None, "fa" if str(person.get("language_code", "")).startswith("fa") else "en"
        )
        if (message.get("chat") or {}).get("type") != "private":
            ctx.uow.queue(calls.send_message(ctx.chat_key, team_text("link_private", lang)))
            return
        now = self.clock()
        async with self.pool.acquire() as conn, conn.transaction():
            taken = await conn.fetchrow(TAKE_CODE, code_hash(code), now)
            member = await conn.fetchrow(MEMBER, taken["user_id"]) if taken else None
            if taken is None or member is None or taken["via_bot"] != ctx.bot.id:
                ctx.uow.queue(calls.send_message(ctx.chat_key, team_text("link_bad", lang)))
                return
            tg_name = " ".join(
                str(person.get(k) or "") for k in ("first_name", "last_name")
            ).strip()
            if person.get("username"):
                tg_name = f"{tg_name} (@{person['username']})".strip()
            await conn.execute(LINK_CHAT, member["id"], ctx.bot.id, ctx.chat_key, tg_name[:200])
            await conn.execute(SET_TELEGRAM_ID, member["id"], ctx.chat_key)
            await tell_what_waits(conn, member["id"], int(now.timestamp() * 1000))
            actor = _actor(member)
            after = {"bot": ctx.bot.username, "telegram_id": ctx.chat_key}
            await record(
                conn, now, actor, "team.telegram_linked", f"user:{member['id']}", None, after
            )
        lang = _language(member, lang)
        ctx.uow.queue(
            calls.send_message(ctx.chat_key, team_text("linked", lang, name=_name(member)))
        )

    async def unlink(self, ctx: Context) -> object:
        """/unlink from a linked chat; anyone else's /unlink is not ours to answer."""
        member = await self._member(ctx)
        if member is None:
            return UNHANDLED
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(UNLINK_CHAT, ctx.bot.id, ctx.chat_key)
            await conn.execute(DROP_WAITING, member["id"])
            await record(
                conn, self.clock(), _actor(member), "team.telegram_unlinked", f"user:{member['id']}"
            )
        conversation.end(ctx.uow, ctx.chat_key)
        text = team_text("unlinked", _language(member))
        ctx.uow.queue(calls.send_message(ctx.chat_key, text))
        return None

    # Buttons

    async def _presser(
        self, query: dict[str, Any], ctx: Context
    ) -> tuple[asyncpg.Record, str] | None:
        """The linked member who pressed, if their role may act; else answered and None."""
        member = await self._member(ctx)
        lang = _language(member)
        if member is None:
            ctx.uow.queue(
                calls.answer_callback(
                    ctx.chat_key, query["id"], team_text("not_member", lang), alert=True
                )
            )
            return None
        if not allowed(ACT_PERMISSION, member["role"]):
            ctx.uow.queue(
                calls.answer_callback(
                    ctx.chat_key, query["id"], team_text("no_right", lang), alert=True
                )
            )
            return None
        return member, lang

    async def order_button(self, query: dict[str, Any], ctx: Context, pressed: TeamOrder) -> None:
        """Approve at once; reject or ask for a change after the reason."""
        if pressed.move not in ORDER_MOVES:
            ctx.uow.queue(calls.answer_callback(ctx.chat_key, query["id"]))
            return
        who = await self._presser(query, ctx)
        if who is None:
            return
        member, lang = who
        order = await self._order(pressed.order_id)
        refusal = self._refusal(order, pressed.order_id, pressed.move, lang)
        if refusal is not None:
            ctx.uow.queue(calls.answer_callback(ctx.chat_key, query["id"], refusal, alert=True))
            self._close(query, ctx, refusal)
            return
        if pressed.move != "approve":
            key = "ask_reject" if pressed.move == "reject" else "ask_change"
            ctx.uow.queue(calls.answer_callback(ctx.chat_key, query["id"]))
            data = {"order_id": pressed.order_id, "move": pressed.move}
            conversation.begin(ctx.uow, ctx.chat_key, Asking.REASON, data, ttl_s=REASON_TTL_S)
            ctx.uow.queue(
                calls.send_message(ctx.chat_key, team_text(key, lang, order=pressed.order_id))
            )
            return
        done = await self._act(member, pressed.order_id, "approve", "", lang)
        ctx.uow.queue(calls.answer_callback(ctx.chat_key, query["id"], done, alert=False))
        self._close(query, ctx, done)

    async def reason(self, message: dict[str, Any], ctx: Context, asked: Conversation) -> None:
        """The reason for a reject or a change (`asked`: the conversation that asked for it,
        naming the order and the move), then the move; /cancel leaves the order alone."""
        member = await self._member(ctx)
        data = asked.data
        order_id, move = int(data.get("order_id", 0)), str(data.get("move", ""))
        lang = _language(member)
        text = str(message.get("text") or "")
        if text.strip().lower().startswith("/cancel") or member is None:
            conversation.end(ctx.uow, ctx.chat_key)
            if member is not None:
                ctx.uow.queue(
                    calls.send_message(
                        ctx.chat_key, team_text("reason_cancelled", lang, order=order_id)
                    )
                )
            return
        if not allowed(ACT_PERMISSION, member["role"]):
            conversation.end(ctx.uow, ctx.chat_key)
            ctx.uow.queue(calls.send_message(ctx.chat_key, team_text("no_right", lang)))
            return
        refusal = self._refusal(await self._order(order_id), order_id, move, lang)
        if refusal is not None:
            conversation.end(ctx.uow, ctx.chat_key)
            ctx.uow.queue(calls.send_message(ctx.chat_key, refusal))
            return
        try:
            done = await self._act(member, order_id, move, text, lang, raise_invalid=True)
        except FeatureError as exc:
            # A reason the shop cannot use (empty, too long): asked again, the state kept.
            problem = problem_text(exc, lang)
            ctx.uow.queue(
                calls.send_message(ctx.chat_key, team_text("reason_bad", lang, problem=problem))
            )
            return
        conversation.end(ctx.uow, ctx.chat_key)
        ctx.uow.queue(calls.send_message(ctx.chat_key, done))

    async def _order(self, order_id: int) -> Order | None:
        try:
            return await self.shop.order(order_id)
        except NotFound:
            return None

    def _refusal(self, order: Order | None, order_id: int, move: str, lang: str) -> str | None:
        """Why the move cannot be made on the order as it is now (None: it can)."""
        if order is None:
            return team_text("gone", lang, order=order_id)
        if can(SHOP_MOVES[move], order.state):
            return None
        state = order.state
        word = (
            team_text(f"state_{state}", lang)
            if state in STATE_WORDS
            else team_text("state_other", lang, state=state.replace("_", " "))
        )
        return team_text("moved", lang, order=order_id, state=word)

    async def _act(
        self,
        member: asyncpg.Record,
        order_id: int,
        move: str,
        reason: str,
        lang: str,
        raise_invalid: bool = False,
    ) -> str:
        """Make the move as the member and audit it; the answer to show them."""
        actor = f"panel:{member['id']}"
        moves: dict[str, Callable[[], Awaitable[Order]]] = {
            "approve": lambda: self.shop.approve(order_id, actor),
            "reject": lambda: self.shop.reject(order_id, reason, actor),
            "change": lambda: self.shop.ask_change(order_id, reason, actor),
        }
        before = await self.shop.order(order_id)
        try:
            after = await moves[move]()
        except Conflict as exc:
            if exc.code == "order_state":
                refusal = self._refusal(await self._order(order_id), order_id, move, lang)
                return refusal or team_text("refused", lang, problem=problem_text(exc, lang))
            return team_text("refused", lang, problem=problem_text(exc, lang))
        except FeatureError as exc:
            if raise_invalid:
                raise
            return team_text("refused", lang, problem=problem_text(exc, lang))
        change: dict[str, Any] = {"state": after.state, "via": "telegram"}
        if reason.strip():
            change["reason"] = reason.strip()
        await record(
            self.pool,
            self.clock(),
            _actor(member),
            AUDIT_KINDS[move],
            f"order:{order_id}",
            {"state": before.state},
            change,
        )
        key = {"approve": "approved", "reject": "rejected", "change": "changed"}[move]
        return team_text(key, lang, name=_name(member), reason=reason.strip())

    def _close(self, query: dict[str, Any], ctx: Context, outcome: str) -> None:
        """The alert's buttons go once they were used (or cannot be any more)."""
        message = query.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("message_id"), int):
            return
        text = str(message.get("text") or "")
        ctx.uow.queue(
            calls.edit_message_text(
                ctx.chat_key, message["message_id"], f"{text}\n\n{outcome}"[:4096], parse_mode=None
            )
        )

    async def redrive_button(
        self, query: dict[str, Any], ctx: Context, pressed: TeamRedrive
    ) -> None:
        """Queue the bot's dead updates and given-up messages again."""
        who = await self._presser(query, ctx)
        if who is None:
            return
        member, lang = who
        try:
            done = await self.bots.redrive(pressed.bot_id)
        except NotFound:
            ctx.uow.queue(calls.answer_callback(ctx.chat_key, query["id"]))
            return
        actor = _actor(member)
        after = {"updates": done.updates, "messages": done.messages, "via": "telegram"}
        await record(
            self.pool, self.clock(), actor, "bot.redriven", f"bot:{pressed.bot_id}", None, after
        )
        text = team_text(
            "redriven", lang, name=_name(member), updates=done.updates, messages=done.messages
        )
        ctx.uow.queue(calls.answer_callback(ctx.chat_key, query["id"], text))
        self._close(query, ctx, text)
