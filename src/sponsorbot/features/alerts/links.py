"""Linking a member's Telegram chat, and what they choose to hear: the panel's side.

A member asks the panel for a one-time code (ten minutes, stored as its SHA-256) for one of the
workspace's bots (the owner's control bot when one is set) and sends it to that bot, by the
deep link or as `/start team_<code>`. The bot's side (chat.py) checks the code and links the
chat that sent it. Unlinking, from the panel or with /unlink in the chat, drops the link and
every delivery still waiting for it.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from sponsorbot.features.accounts.permissions import allowed
from sponsorbot.features.alerts.collect import review_subject, transfer_subject
from sponsorbot.features.alerts.kinds import DIGEST_PERMISSION, kinds_for
from sponsorbot.features.errors import Invalid, NotFound

CODE_TTL = timedelta(minutes=10)
CODE_PREFIX = "team_"
# Lower-case letters and digits without look-alikes: a code is typed by hand now and then.
ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
CODE_LENGTH = 12

LINK = """
SELECT l.via_bot, l.chat_id, l.tg_name, l.linked_at, b.username AS bot
FROM team_links l LEFT JOIN bots b ON b.id = l.via_bot WHERE l.user_id = $1
"""
PREFS = "SELECT muted, quiet_from, quiet_to, digest FROM alert_prefs WHERE user_id = $1"
SAVE_PREFS = """
INSERT INTO alert_prefs (user_id, muted, quiet_from, quiet_to, digest)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (user_id) DO UPDATE
SET muted = excluded.muted, quiet_from = excluded.quiet_from, quiet_to = excluded.quiet_to,
    digest = excluded.digest
"""
BOTS = "SELECT id, username FROM bots WHERE status = 'active' ORDER BY username"
CONTROL = "SELECT control_bot FROM workspace WHERE id = 1"
SET_CONTROL = "UPDATE workspace SET control_bot = $1 WHERE id = 1"
NEW_CODE = """
WITH old AS (DELETE FROM team_link_codes WHERE user_id = $1 OR expires_at < $4)
INSERT INTO team_link_codes (code_hash, user_id, via_bot, expires_at) VALUES ($2, $1, $3, $4 + $5)
"""
# The code is used up whether or not the link takes.
TAKE_CODE = """
DELETE FROM team_link_codes WHERE code_hash = $1 AND expires_at > $2
RETURNING user_id, via_bot
"""
# A member as their chat speaks to them: their language, else the workspace's.
MEMBER = """
SELECT u.id, u.name, u.email, u.role, coalesce(u.language, w.default_language, 'en') AS language
FROM users u LEFT JOIN workspace w ON w.id = 1
WHERE u.id = $1 AND u.disabled_at IS NULL
"""
LINK_CHAT = """
WITH other AS (DELETE FROM team_links WHERE via_bot = $2 AND chat_id = $3 AND user_id <> $1)
INSERT INTO team_links (user_id, via_bot, chat_id, tg_name) VALUES ($1, $2, $3, $4)
ON CONFLICT (user_id) DO UPDATE
SET via_bot = excluded.via_bot, chat_id = excluded.chat_id, tg_name = excluded.tg_name,
    linked_at = now()
"""
# What waits for a member who just linked their chat: the orders to review and the payments to
# decide (the newest 20 of each), told as alerts of theirs alone.
WAITING_ORDERS = """
SELECT o.id, o.bot_id,
       (SELECT max(l.id) FROM shop_order_log l
        WHERE l.bot_id = o.bot_id AND l.order_id = o.id
          AND l.kind IN ('submitted', 'resubmitted')) AS step
FROM shop_orders o WHERE o.state = 'submitted' ORDER BY o.id DESC LIMIT 20
"""
WAITING_TRANSFERS = """
SELECT id, coin, amount, reason FROM shop_transfers WHERE state = 'unattributed'
ORDER BY id DESC LIMIT 20
"""
ADD_FOR_ONE = """
INSERT INTO alerts (kind, key, once, about_bot, data, subject, only_user)
SELECT k, key, true, bot, data, subject, $6
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::jsonb[], $5::text[])
     AS s (k, key, bot, data, subject)
ON CONFLICT (key) WHERE once DO NOTHING
"""
# The verified id also becomes the member's Telegram id for post previews.
SET_TELEGRAM_ID = "UPDATE users SET telegram_id = $2 WHERE id = $1"
UNLINK = "DELETE FROM team_links WHERE user_id = $1 RETURNING via_bot, chat_id"
UNLINK_CHAT = "DELETE FROM team_links WHERE via_bot = $1 AND chat_id = $2 RETURNING user_id"
DROP_WAITING = "DELETE FROM alert_deliveries WHERE user_id = $1 AND sent_at IS NULL"
MEMBER_OF_CHAT = """
SELECT u.id, u.name, u.email, u.role, coalesce(u.language, w.default_language, 'en') AS language
FROM team_links l JOIN users u ON u.id = l.user_id AND u.disabled_at IS NULL
LEFT JOIN workspace w ON w.id = 1
WHERE l.via_bot = $1 AND l.chat_id = $2
"""


async def tell_what_waits(conn: asyncpg.Connection, user_id: int, stamp: int) -> None:
    """Alerts for the member alone of what waits now (`stamp` keeps each link's apart); each
    names its subject, so the collector's own alert about the same thing is not told twice."""
    rows: list[tuple[str, str, int | None, dict[str, Any], str | None]] = []
    for order in await conn.fetch(WAITING_ORDERS):
        data = {"order_id": order["id"], "step": "submitted"}
        key = f"waiting:{user_id}:{stamp}:order:{order['id']}"
        subject = review_subject(int(order["step"])) if order["step"] else None
        rows.append(("order_review", key, order["bot_id"], data, subject))
    for transfer in await conn.fetch(WAITING_TRANSFERS):
        data = {
            "coin": transfer["coin"],
            "amount": str(transfer["amount"]),
            "reason": transfer["reason"],
        }
        key = f"waiting:{user_id}:{stamp}:transfer:{transfer['id']}"
        subject = transfer_subject(int(transfer["id"]))
        rows.append(("payment_decision", key, None, data, subject))
    if rows:
        columns = [list(c) for c in zip(*rows, strict=True)]
        await conn.execute(ADD_FOR_ONE, *columns, user_id)


def code_hash(code: str) -> bytes:
    """What is stored of a link code."""
    return hashlib.sha256(code.strip().lower().encode()).digest()


@dataclass(frozen=True, slots=True)
class Prefs:
    """A member's choices: kinds turned off, quiet hours (minutes of the day), the digest."""

    muted: tuple[str, ...] = ()
    quiet_from: int | None = None
    quiet_to: int | None = None
    digest: bool = False


@dataclass(frozen=True, slots=True)
class LinkCode:
    """A code made for a member: what they send, to which bot, until when."""

    code: str
    bot_id: int
    bot: str
    expires_at: datetime

    @property
    def start(self) -> str:
        """The /start payload (the deep link's `start=` value)."""
        return CODE_PREFIX + self.code

    @property
    def url(self) -> str:
        """The deep link that opens the bot with the code."""
        return f"https://t.me/{self.bot}?start={self.start}"


class TeamLinks:
    """The panel's side of linking and preferences."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def link(self, user_id: int) -> dict[str, Any] | None:
        """The member's linked chat (None: not linked)."""
        row = await self.pool.fetchrow(LINK, user_id)
        return dict(row) if row else None

    async def prefs(self, user_id: int) -> Prefs:
        """The member's choices (the defaults before the first save: everything, no quiet)."""
        row = await self.pool.fetchrow(PREFS, user_id)
        if row is None:
            return Prefs()
        return Prefs(tuple(row["muted"]), row["quiet_from"], row["quiet_to"], row["digest"])

    async def save_prefs(self, user_id: int, role: str, on: list[str], prefs: Prefs) -> Prefs:
        """Keep the member's choices: `on` are the kinds they want, of those their role gets."""
        if (prefs.quiet_from is None) != (prefs.quiet_to is None):
            raise Invalid("give both ends of the quiet hours, or neither", code="quiet_hours")
        for end in (prefs.quiet_from, prefs.quiet_to):
            if end is not None and not 0 <= end < 24 * 60:
                raise Invalid("a time of day is between 00:00 and 23:59", code="quiet_hours")
        muted = [k for k in kinds_for(role) if k not in on]
        digest = prefs.digest and allowed(DIGEST_PERMISSION, role)
        await self.pool.execute(
            SAVE_PREFS, user_id, muted, prefs.quiet_from, prefs.quiet_to, digest
        )
        return Prefs(tuple(muted), prefs.quiet_from, prefs.quiet_to, digest)

    async def bots(self) -> list[dict[str, Any]]:
        """The bots a member may link through: the control bot when set, else every active one."""
        rows = [dict(r) for r in await self.pool.fetch(BOTS)]
        control = await self.pool.fetchval(CONTROL)
        chosen = [r for r in rows if r["id"] == control]
        return chosen or rows

    async def control_bot(self) -> int | None:
        """The bot every member links through (None: any)."""
        value: int | None = await self.pool.fetchval(CONTROL)
        return value

    async def set_control_bot(self, bot_id: int | None) -> None:
        """The owner's choice of the bot every member links through (None: any)."""
        if bot_id is not None and bot_id not in {b["id"] for b in await self.pool.fetch(BOTS)}:
            raise NotFound("no such active bot")
        await self.pool.execute(SET_CONTROL, bot_id)

    async def new_code(self, user_id: int, bot_id: int, now: datetime) -> LinkCode:
        """A one-time code for the member to send to `bot_id` (an earlier code stops working)."""
        bot = next((b for b in await self.bots() if b["id"] == bot_id), None)
        if bot is None:
            raise NotFound("no such bot to link through", code="link_bot")
        code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
        await self.pool.execute(NEW_CODE, user_id, code_hash(code), bot_id, now, CODE_TTL)
        return LinkCode(code, bot_id, bot["username"], now + CODE_TTL)

    async def unlink(self, user_id: int) -> bool:
        """Drop the member's link and what waits to be sent to it; False when none was."""
        async with self.pool.acquire() as conn, conn.transaction():
            gone = await conn.fetchrow(UNLINK, user_id)
            await conn.execute(DROP_WAITING, user_id)
        return gone is not None
