"""Updates about chats: members joining and leaving gate channels, join requests, and the
bot's own standing (made admin of a channel later, demoted, blocked by a person)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sponsorbot.engine.unit import Context
from sponsorbot.features.botconfig import ConfigCache
from sponsorbot.features.channels.service import SET_STATUS, UPSERT, from_chat
from sponsorbot.features.gate.membership import MembershipCache
from sponsorbot.features.stats.events import EventKind, Events
from sponsorbot.telegram.members import is_member

# The times from the row proposed (the columns' defaults): Citus refuses now() in DO UPDATE.
RECORD_REQUEST = """
INSERT INTO join_requests (bot_id, chat_id, user_id, status) VALUES ($1, $2, $3, 'pending')
ON CONFLICT (bot_id, user_id, chat_id)
DO UPDATE SET status = 'pending', requested_at = excluded.requested_at,
              updated_at = excluded.updated_at
"""
# The content whose gate the person has open, if no join counted for it yet: the first join
# then counts in that content's funnel (once per gate, however many channels it lists).
GATE_OPEN = """
SELECT gate_content_id FROM people WHERE bot_id = $1 AND user_id = $2 AND NOT gate_joined
"""
JOINED_AT_GATE = """
UPDATE people SET gate_joined = true WHERE bot_id = $1 AND user_id = $2 AND gate_content_id = $3
"""
# Declined requests are kept a month (the gate refuses them meanwhile), then forgotten.
DELETE_DECLINED = """
DELETE FROM join_requests WHERE (bot_id, user_id, chat_id) IN (
    SELECT bot_id, user_id, chat_id FROM join_requests
    WHERE status = 'declined' AND updated_at < now() - interval '30 days' LIMIT $1)
"""
FORGET_REQUEST = "DELETE FROM join_requests WHERE bot_id = $1 AND user_id = $2 AND chat_id = $3"
# Who may add a channel by making the bot its admin: the bot's uploaders (and anyone, for a
# channel already on the list). A stranger could otherwise fill the owner's list with chats
# of their own choosing, titles and all (docs/adr/0020-flood-limits.md). At most MAX_CHANNELS.
MAY_PICK_UP = """
SELECT EXISTS (SELECT 1 FROM channels WHERE bot_id = $1 AND chat_id = $2)
    OR (EXISTS (SELECT 1 FROM uploaders WHERE bot_id = $1 AND user_id = $3)
        AND (SELECT count(*) FROM channels WHERE bot_id = $1) < $4)
"""
MAX_CHANNELS = 500
BLOCKED = """
INSERT INTO people (bot_id, user_id, blocked_at) VALUES ($1, $2, $3)
ON CONFLICT (bot_id, user_id) DO UPDATE
SET blocked_at = excluded.blocked_at, last_seen = excluded.last_seen
"""


class ChatUpdates:
    """chat_member, my_chat_member and chat_join_request handlers."""

    def __init__(self, config: ConfigCache, members: MembershipCache) -> None:
        self.config = config
        self.members = members

    async def chat_member(self, body: dict[str, Any], ctx: Context) -> None:
        """A person joined or left a chat the bot administers."""
        chat_id = int(body["chat"]["id"])
        old, new = body.get("old_chat_member") or {}, body.get("new_chat_member") or {}
        user_id = int(new["user"]["id"])
        if user_id == ctx.bot.id:
            return
        was, now = is_member(old), is_member(new)
        events = Events(ctx.bot.id)
        if now and not was:
            self.members.remember(ctx.bot.id, chat_id, user_id)
            ctx.uow.write_in_order(FORGET_REQUEST, ctx.bot.id, user_id, chat_id)
            link = (body.get("invite_link") or {}).get("invite_link")
            gated = await self._joined_at_gate(ctx, user_id)
            events.add(
                EventKind.JOINED,
                user_id,
                chat_id=chat_id,
                content_id=gated,
                data={"link": link} if link else None,
            )
        elif was and not now:
            # Dropped at once: the next link asks Telegram again.
            self.members.forget(ctx.bot.id, chat_id, user_id)
            ctx.uow.write_in_order(FORGET_REQUEST, ctx.bot.id, user_id, chat_id)
            events.add(EventKind.LEFT, user_id, chat_id=chat_id, data={"status": new.get("status")})
        events.flush(ctx.uow)

    async def _joined_at_gate(self, ctx: Context, user_id: int) -> int | None:
        """The content whose open gate this join (or request) is the first for, marked so;
        None when no gate is open or a join already counted for it."""
        gated: int | None = await ctx.db.fetchval(GATE_OPEN, ctx.bot.id, user_id)
        if gated is not None:
            ctx.uow.write_alone(JOINED_AT_GATE, ctx.bot.id, user_id, gated)
        return gated

    async def join_request(self, body: dict[str, Any], ctx: Context) -> None:
        """Record a pending join request (the gate may count it as joined)."""
        chat_id = int(body["chat"]["id"])
        user_id = int(body["from"]["id"])
        ctx.uow.write_in_order(RECORD_REQUEST, ctx.bot.id, chat_id, user_id)
        gated = await self._joined_at_gate(ctx, user_id)
        events = Events(ctx.bot.id)
        events.add(EventKind.JOIN_REQUEST, user_id, chat_id=chat_id, content_id=gated)
        events.flush(ctx.uow)

    async def my_chat_member(self, body: dict[str, Any], ctx: Context) -> None:
        """The bot's own membership changed: pick up channels, note lost rights, blocks."""
        chat = body["chat"]
        new = body.get("new_chat_member") or {}
        status = new.get("status")
        if chat.get("type") == "private":
            blocked_at = body.get("date") if status == "kicked" else None
            ctx.uow.write_in_order(
                BLOCKED,
                ctx.bot.id,
                int(chat["id"]),
                _timestamp(blocked_at) if blocked_at is not None else None,
            )
            return
        if chat.get("type") not in ("channel", "supergroup"):
            return
        chat_id = int(chat["id"])
        if status in ("administrator", "creator"):
            promoter = int((body.get("from") or {}).get("id") or 0)
            if not await ctx.db.fetchval(MAY_PICK_UP, ctx.bot.id, chat_id, promoter, MAX_CHANNELS):
                return
            check = from_chat(chat, new)
            ctx.uow.write_in_order(UPSERT, *check.args(ctx.bot.id))
        elif status in ("left", "kicked"):
            ctx.uow.write_in_order(
                SET_STATUS, ctx.bot.id, chat_id, "unreachable", [], "the bot left the chat"
            )
        else:
            ctx.uow.write_in_order(
                SET_STATUS,
                ctx.bot.id,
                chat_id,
                "missing_rights",
                ["administrator"],
                "the bot is no longer an administrator",
            )
        self.config.invalidate(ctx.bot.id)


def _timestamp(unix: Any) -> datetime:
    return datetime.fromtimestamp(int(unix), UTC)
