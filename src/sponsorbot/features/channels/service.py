"""Channels: resolve an owner's reference, check the bot's rights live, save, re-check.

A gate channel is only useful when the bot is an administrator there holding
``can_invite_users``: it must see who is a member, and make invite links for private channels.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from sponsorbot.features.errors import Invalid, NotFound, Refused
from sponsorbot.features.service import OwnerService
from sponsorbot.telegram import Bot, TelegramError

log = logging.getLogger(__name__)

USERNAME = r"[A-Za-z][A-Za-z0-9_]{3,31}"
_LINK = re.compile(
    r"^(?:https?://)?(?:www\.)?(?:t\.me|telegram\.me|telegram\.dog)/"
    rf"(?:c/(?P<cid>\d{{1,20}})(?:/\d+)*|(?P<name>{USERNAME})(?:/\d+)*)/?(?:[?#].*)?$",
    re.IGNORECASE,
)
_INVITE = re.compile(r"^(?:https?://)?(?:t\.me|telegram\.me)/(?:\+|joinchat/)", re.IGNORECASE)
_NAME = re.compile(rf"^@?({USERNAME})$")
_ID = re.compile(r"^-\d{1,20}$")
REQUIRED_RIGHT = "can_invite_users"
RIGHT_NAMES = {
    "administrator": "make the bot an administrator",
    REQUIRED_RIGHT: "give the bot the right can_invite_users (“Invite users via link”)",
}

CHANNEL_COLUMNS = """chat_id, title, username, chat_type, invite_link, invite_requests, status,
    missing, last_error, checked_at, created_at"""
UPSERT = """
INSERT INTO channels (bot_id, chat_id, title, username, chat_type, status, missing, last_error,
                      checked_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
ON CONFLICT (bot_id, chat_id) DO UPDATE
SET title = excluded.title, username = excluded.username, chat_type = excluded.chat_type,
    status = excluded.status, missing = excluded.missing, last_error = excluded.last_error,
    checked_at = excluded.checked_at
"""
SET_STATUS = """
UPDATE channels SET status = $3, missing = $4, last_error = $5, checked_at = now()
WHERE bot_id = $1 AND chat_id = $2
"""
DELETE = "DELETE FROM channels WHERE bot_id = $1 AND chat_id = $2"
# The periodic check: channels the gate or a campaign uses every time, the rest (picked up when
# the bot was made an admin, never used) a few times a day, so a bot made admin of many chats
# does not spend its Telegram budget on them (docs/adr/0020-flood-limits.md).
CHAT_IDS = """
SELECT c.chat_id FROM channels c
WHERE c.bot_id = $1
  AND (c.checked_at < now() - interval '6 hours'
       OR EXISTS (SELECT 1 FROM gate_channels g WHERE g.bot_id = c.bot_id AND g.chat_id = c.chat_id)
       OR EXISTS (SELECT 1 FROM campaign_bots b JOIN campaigns k ON k.id = b.campaign_id
                  WHERE b.bot_id = c.bot_id AND k.chat_id = c.chat_id))
"""
SET_LINK = """
UPDATE channels SET invite_link = $3, invite_requests = $4 WHERE bot_id = $1 AND chat_id = $2
"""


def parse_ref(ref: str) -> int | str:
    """A chat id or ``@username`` from any form an owner may paste.

    Accepted: ``@name``, ``name``, ``https://t.me/name``, ``t.me/name/123`` (a post link),
    ``https://t.me/c/123/45`` (a private post link), ``-100...``.
    """
    text = ref.strip()
    if _ID.match(text):
        return int(text)
    if _INVITE.match(text):
        raise Invalid(
            "an invite link does not name a channel the bot can look up; use the channel's "
            "@username, its -100... id, a post link, or forward a post to the bot",
            code="channel_ref",
        )
    link = _LINK.match(text)
    if link:
        if link.group("cid"):
            return int(f"-100{link.group('cid')}")
        return "@" + link.group("name")
    name = _NAME.match(text)
    if name:
        return "@" + name.group(1)
    raise Invalid(
        "not a channel reference: use @username, https://t.me/name, a post link or a -100... id",
        code="channel_ref",
        ref=ref[:100],
    )


def missing_rights(member: dict[str, Any]) -> list[str]:
    """What the bot lacks in a chat, from its own ChatMember object."""
    status = member.get("status")
    if status == "creator":
        return []
    if status != "administrator":
        return ["administrator"]
    return [] if member.get(REQUIRED_RIGHT) else [REQUIRED_RIGHT]


def refusal(title: str, missing: list[str]) -> str:
    """The owner-facing sentence naming exactly which right to grant."""
    if "administrator" in missing:
        return (
            f"the bot is not an administrator of “{title}”: make it an administrator "
            f"with the right {REQUIRED_RIGHT}"
        )
    return (
        f"the bot is an administrator of “{title}” but lacks {REQUIRED_RIGHT}: "
        f"{RIGHT_NAMES[REQUIRED_RIGHT]}"
    )


@dataclass(slots=True)
class ChannelCheck:
    """A chat as Telegram describes it, and the bot's standing there."""

    chat_id: int
    title: str
    username: str | None
    chat_type: str
    missing: list[str] = field(default_factory=list)
    join_by_request: bool = False  # joining takes an admin's approval (getChat says so)

    @property
    def status(self) -> str:
        """ok or missing_rights."""
        return "missing_rights" if self.missing else "ok"

    def args(self, bot_id: int) -> tuple[Any, ...]:
        """The UPSERT arguments."""
        return (
            bot_id,
            self.chat_id,
            self.title,
            self.username,
            self.chat_type,
            self.status,
            self.missing,
            None,
        )


def from_chat(chat: dict[str, Any], member: dict[str, Any]) -> ChannelCheck:
    """A check built from a Chat object and the bot's ChatMember (as updates carry them)."""
    return ChannelCheck(
        chat_id=int(chat["id"]),
        title=str(chat.get("title") or chat.get("username") or chat["id"]),
        username=chat.get("username"),
        chat_type=str(chat.get("type", "channel")),
        missing=missing_rights(member),
        join_by_request=bool(chat.get("join_by_request")),
    )


async def inspect(telegram: Bot, bot_id: int, ref: int | str) -> ChannelCheck:
    """Ask Telegram about the chat and the bot's own rights there.

    Raises Refused when Telegram does not know the chat (or will not show it to the bot),
    Invalid for a chat that is not a channel or supergroup; transient errors pass through.
    """
    try:
        chat = await telegram.get_chat(ref)
    except TelegramError as exc:
        if exc.is_transient:
            raise
        raise Refused(
            f"Telegram cannot show this chat to the bot ({exc.description}); for a private "
            "channel add the bot as an administrator first",
            code="chat_hidden",
            telegram=exc.description,
        ) from None
    if chat.get("type") not in ("channel", "supergroup"):
        raise Invalid("only channels and supergroups can be gate channels", code="channel_ref")
    try:
        member = await telegram.get_chat_member(chat["id"], bot_id)
    except TelegramError as exc:
        if exc.is_transient:
            raise
        member = {"status": "left"}
    return from_chat(chat, member)


class ChannelService(OwnerService):
    """Add, list, re-check and remove a bot's channels (the owner API and the panel use it)."""

    async def add(self, bot_id: int, ref: str) -> dict[str, Any]:
        """Resolve, check live and save a channel; refused when a right is missing."""
        target = parse_ref(ref)
        telegram = await self._telegram(bot_id)
        check = await inspect(telegram, bot_id, target)
        if check.missing:
            raise Refused(
                refusal(check.title, check.missing), code="rights_missing", missing=check.missing
            )
        await self.pool.execute(UPSERT, *check.args(bot_id))
        if check.username is None:
            await ensure_invite_link(self.pool, telegram, bot_id, check.chat_id, False)
        self.config.invalidate(bot_id)
        return await self.get(bot_id, check.chat_id)

    async def get(self, bot_id: int, chat_id: int) -> dict[str, Any]:
        """One channel of the bot."""
        row = await self.pool.fetchrow(
            f"SELECT {CHANNEL_COLUMNS} FROM channels WHERE bot_id = $1 AND chat_id = $2",
            bot_id,
            chat_id,
        )
        if row is None:
            await self.bots.get(bot_id)
            raise NotFound(f"the bot has no channel {chat_id}")
        return dict(row)

    async def list(self, bot_id: int, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
        """A page of the bot's channels, oldest first, and how many there are."""
        await self.bots.get(bot_id)
        rows = await self.pool.fetch(
            f"SELECT {CHANNEL_COLUMNS} FROM channels WHERE bot_id = $1 "
            "ORDER BY created_at, chat_id LIMIT $2 OFFSET $3",
            bot_id,
            limit,
            offset,
        )
        total = await self.pool.fetchval("SELECT count(*) FROM channels WHERE bot_id = $1", bot_id)
        return [dict(r) for r in rows], int(total)

    async def remove(self, bot_id: int, chat_id: int) -> None:
        """Forget a channel (it leaves the gate too)."""
        await self._change_one(DELETE, bot_id, chat_id, f"the bot has no channel {chat_id}")

    async def check(self, bot_id: int, chat_id: int) -> dict[str, Any]:
        """Re-check one channel now and return it with its new status."""
        await self.get(bot_id, chat_id)
        await self._recheck(await self._telegram(bot_id), bot_id, chat_id)
        self.config.invalidate(bot_id)
        return await self.get(bot_id, chat_id)

    async def _recheck(self, telegram: Bot, bot_id: int, chat_id: int) -> None:
        try:
            check = await inspect(telegram, bot_id, chat_id)
        except (Refused, Invalid) as exc:
            await self.pool.execute(SET_STATUS, bot_id, chat_id, "unreachable", [], exc.message)
            return
        except TelegramError as exc:
            # Telegram itself is unwell: keep the last verdict, note why it is not newer.
            await self.pool.execute(
                "UPDATE channels SET last_error = $3 WHERE bot_id = $1 AND chat_id = $2",
                bot_id,
                chat_id,
                exc.description,
            )
            return
        await self.pool.execute(UPSERT, *check.args(bot_id))

    async def recheck_all(self, pool: asyncpg.Pool) -> None:
        """The periodic job: every channel of every active bot, a few at a time."""
        limit = asyncio.Semaphore(8)
        for bot in await self.bots.active():
            telegram = self.api.bot(bot.token)
            rows = await pool.fetch(CHAT_IDS, bot.info.id)

            async def one(
                chat_id: int, telegram: Bot = telegram, bot_id: int = bot.info.id
            ) -> None:
                async with limit:
                    await self._recheck(telegram, bot_id, chat_id)

            await asyncio.gather(*(one(r["chat_id"]) for r in rows))
            self.config.invalidate(bot.info.id)


async def ensure_invite_link(
    pool: asyncpg.Pool | asyncpg.Connection,
    telegram: Bot,
    bot_id: int,
    chat_id: int,
    requests: bool,
) -> str:
    """The bot's stored invite link for a private channel, made once (per join mode)."""
    row = await pool.fetchrow(
        "SELECT invite_link, invite_requests FROM channels WHERE bot_id = $1 AND chat_id = $2",
        bot_id,
        chat_id,
    )
    if row is not None and row["invite_link"] and row["invite_requests"] == requests:
        return str(row["invite_link"])
    link = await create_invite_link(telegram, chat_id, requests)
    await pool.execute(SET_LINK, bot_id, chat_id, link, requests)
    return link


async def create_invite_link(telegram: Bot, chat_id: int, requests: bool) -> str:
    """A new invite link of the bot (joining through it creates a request when `requests`)."""
    try:
        made = await telegram.create_chat_invite_link(
            chat_id, name="Sponsorbot gate", creates_join_request=requests or None
        )
    except TelegramError as exc:
        if exc.is_transient:
            raise
        raise Refused(
            f"the bot cannot make an invite link there ({exc.description}): "
            f"{RIGHT_NAMES[REQUIRED_RIGHT]}",
            code="rights_missing",
            missing=[REQUIRED_RIGHT],
        ) from None
    return str(made["invite_link"])
