"""The visitor's side: /start <code>, the gate message, "I've joined", the content.

Read phase: the bot's configuration (cached), one query for the content and the person's
open gate, one getChatMember per gate channel, all at once. Write phase: the person, the gate
state, events and every outgoing call, committed with the update's done mark; on /start, all in
that one statement (UnitOfWork.write).
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from sponsorbot.engine.handlers import PRIORITY_LATER, Context, UnitOfWork
from sponsorbot.features.botconfig import BotConfig, ConfigCache, GateChannel
from sponsorbot.features.channels import SET_LINK, SET_STATUS, create_invite_link
from sponsorbot.features.content import CODE_SHAPE
from sponsorbot.features.errors import Refused
from sponsorbot.features.events import Events
from sponsorbot.features.membership import MembershipCache, Standing, Verdict, check_all
from sponsorbot.features.texts import escape, language_of, render

START = re.compile(r"^/start(?:@\w+)?(?:\s+(.*))?$", re.DOTALL)
CALLBACK = re.compile(r"^j:(\d{1,18})$")
LOOKUP = """
SELECT c.id, c.kind, c.items, c.caption, c.protect, c.auto_delete_s, c.enabled,
       p.gate_content_id, p.gate_ref, p.gate_checks,
       ARRAY(SELECT j.chat_id FROM join_requests j
             WHERE j.bot_id = $1 AND j.user_id = $3 AND j.status = 'pending') AS pending
FROM (SELECT 1) AS one
LEFT JOIN contents c ON c.bot_id = $1 AND c.{key} = $2
LEFT JOIN people p ON p.bot_id = $1 AND p.user_id = $3
"""
BY_CODE = LOOKUP.format(key="code")
BY_ID = LOOKUP.format(key="id")
SEEN = """
INSERT INTO people (bot_id, user_id, language) VALUES ($1, $2, $3)
ON CONFLICT (bot_id, user_id) DO UPDATE
SET last_seen = now(), language = COALESCE(excluded.language, people.language), blocked_at = NULL
"""
SET_GATE = """
UPDATE people SET gate_content_id = $3, gate_ref = $4, gate_checks = $5
WHERE bot_id = $1 AND user_id = $2
"""
# SEEN and SET_GATE in one statement: /start is the hottest path, and each statement is a
# round trip inside the update's transaction.
SEEN_WITH_GATE = """
INSERT INTO people (bot_id, user_id, language, gate_content_id, gate_ref, gate_checks)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (bot_id, user_id) DO UPDATE
SET last_seen = now(), language = COALESCE(excluded.language, people.language), blocked_at = NULL,
    gate_content_id = excluded.gate_content_id, gate_ref = excluded.gate_ref,
    gate_checks = excluded.gate_checks
"""
SEND_METHODS = {
    "document": "sendDocument",
    "video": "sendVideo",
    "photo": "sendPhoto",
}
MAX_ANSWER = 200  # answerCallbackQuery text limit


def seen(uow: UnitOfWork, user: dict[str, Any]) -> None:
    """Upsert the person: last seen, language, not blocked (they just wrote to us)."""
    uow.write(SEEN, uow.bot_id, user["id"], user.get("language_code"))


class Visitor:
    """Handlers for a visitor's /start and "I've joined"."""

    def __init__(self, config: ConfigCache, members: MembershipCache) -> None:
        self.config = config
        self.members = members

    async def start(self, message: dict[str, Any], payload: str, ctx: Context) -> None:
        """/start with or without a code."""
        user = message["from"]
        user_id = int(user["id"])
        uow = ctx.uow
        config = await self.config.get(ctx.bot.id)
        lang = language_of(user.get("language_code"))
        events = Events(ctx.bot.id)
        if not payload:
            seen(uow, user)
            uow.send(
                user_id,
                "sendMessage",
                {"text": render("welcome", lang, config.texts), "parse_mode": "HTML"},
            )
            return
        code = payload if CODE_SHAPE.match(payload) else None
        row = await ctx.db.fetchrow(BY_CODE, ctx.bot.id, code, user_id) if code else None
        # The content a link names rides on "started", so the panel can count opens per item.
        opened = row["id"] if row is not None else None
        events.add("started", user_id, content_id=opened)
        if row is None or row["id"] is None or not row["enabled"]:
            seen(uow, user)
            events.add("unknown_code", user_id, data={"code": payload[:64]})
            uow.send(
                user_id,
                "sendMessage",
                {"text": render("unknown_code", lang, config.texts), "parse_mode": "HTML"},
            )
            events.flush(uow)
            return
        verdicts = await self._check(ctx, config, user_id, row["pending"], events)
        missing = [v.channel for v in verdicts if v.standing is Standing.MISSING]
        old_ref = row["gate_ref"]
        if old_ref:
            # One current gate: the older gate message goes, whatever content it was for.
            uow.send(user_id, "deleteMessage", {}, uses_ref=old_ref)
        if missing:
            ref = f"gate:{user_id}:{secrets.token_hex(6)}"
            uow.send(
                user_id,
                "sendMessage",
                gate_message(missing, row["id"], lang, config),
                ref=ref,
            )
            uow.write(
                SEEN_WITH_GATE, ctx.bot.id, user_id, user.get("language_code"), row["id"], ref, 1
            )
            events.add("gate_shown", user_id, content_id=row["id"], data={"missing": len(missing)})
        else:
            if old_ref:
                uow.write(
                    SEEN_WITH_GATE, ctx.bot.id, user_id, user.get("language_code"), None, None, 0
                )
            else:
                seen(uow, user)
            if config.gate:
                events.add("gate_passed", user_id, content_id=row["id"], data={"checks": 1})
            deliver(uow, user_id, dict(row), lang, config, events)
        events.flush(uow)

    async def joined(self, query: dict[str, Any], ctx: Context) -> None:
        """The visitor pressed "I've joined": check again; edit the gate or deliver."""
        user = query["from"]
        user_id = int(user["id"])
        uow = ctx.uow
        config = await self.config.get(ctx.bot.id)
        lang = language_of(user.get("language_code"))
        events = Events(ctx.bot.id)
        seen(uow, user)
        match = CALLBACK.match(str(query.get("data", "")))
        message = query.get("message") or {}
        message_id = message.get("message_id")
        answer: dict[str, Any] = {"callback_query_id": query["id"]}
        row = None
        if match:
            row = await ctx.db.fetchrow(BY_ID, ctx.bot.id, int(match.group(1)), user_id)
        if row is None or row["id"] is None or not row["enabled"]:
            answer["text"] = render("gate_outdated", lang, config.texts, html=False)[:MAX_ANSWER]
            uow.send(user_id, "answerCallbackQuery", answer)
            return
        current = row["gate_content_id"] == row["id"]
        checks = (row["gate_checks"] if current else 0) + 1
        verdicts = await self._check(ctx, config, user_id, row["pending"], events)
        missing = [v.channel for v in verdicts if v.standing is Standing.MISSING]
        if missing:
            titles = ", ".join(c.title for c in missing)
            answer["text"] = render("still_missing", lang, config.texts, html=False, titles=titles)[
                :MAX_ANSWER
            ]
            answer["show_alert"] = True
            uow.send(user_id, "answerCallbackQuery", answer)
            if isinstance(message_id, int):
                params = gate_message(missing, row["id"], lang, config)
                params["message_id"] = message_id
                uow.send(user_id, "editMessageText", params)
            if current:
                uow.execute(SET_GATE, ctx.bot.id, user_id, row["id"], row["gate_ref"], checks)
        else:
            answer["text"] = render("all_joined", lang, config.texts, html=False)[:MAX_ANSWER]
            uow.send(user_id, "answerCallbackQuery", answer)
            if isinstance(message_id, int):
                uow.send(user_id, "deleteMessage", {"message_id": message_id})
            if current:
                uow.execute(SET_GATE, ctx.bot.id, user_id, None, None, 0)
            events.add("gate_passed", user_id, content_id=row["id"], data={"checks": checks})
            deliver(uow, user_id, dict(row), lang, config, events)
        events.flush(uow)

    async def _check(
        self,
        ctx: Context,
        config: BotConfig,
        user_id: int,
        pending: list[int] | None,
        events: Events,
    ) -> list[Verdict]:
        gate = list(config.gate)
        for i, channel in enumerate(gate):
            if channel.url is None:
                gate[i] = await self._with_link(ctx, channel)
        verdicts = await check_all(
            ctx.telegram, self.members, ctx.bot.id, user_id, gate, pending or ()
        )
        for verdict in verdicts:
            if verdict.standing is Standing.UNKNOWN:
                # Let the visitor through, and show the owner why in the channel's status.
                reason = verdict.reason or "unknown"
                lost = "inaccessible" in reason or "admin" in reason.lower()
                ctx.uow.execute(
                    SET_STATUS,
                    ctx.bot.id,
                    verdict.channel.chat_id,
                    "missing_rights" if lost else "unreachable",
                    ["administrator"] if lost else [],
                    reason,
                )
                events.add(
                    "channel_unknown",
                    user_id,
                    chat_id=verdict.channel.chat_id,
                    data={"reason": reason[:200]},
                )
        return verdicts

    async def _with_link(self, ctx: Context, channel: GateChannel) -> GateChannel:
        """A private channel without our invite link yet: make one now and store it."""
        try:
            url = await create_invite_link(ctx.telegram, channel.chat_id, channel.request_counts)
        except Refused:
            return channel
        ctx.uow.execute(SET_LINK, ctx.bot.id, channel.chat_id, url, channel.request_counts)
        self.config.invalidate(ctx.bot.id)
        return GateChannel(
            channel.chat_id,
            channel.title,
            channel.username,
            url,
            channel.request_counts,
            channel.request_counts,
        )


def gate_message(
    missing: list[GateChannel], content_id: int, lang: str, config: BotConfig
) -> dict[str, Any]:
    """The gate: the missing channels as join buttons, then "I've joined"."""
    lines = "\n".join(f"• {escape(c.title)}" for c in missing)
    rows: list[list[dict[str, str]]] = [
        [{"text": render("join_button", lang, config.texts, html=False, title=c.title), "url": url}]
        for c in missing
        if (url := c.url) is not None
    ]
    rows.append(
        [
            {
                "text": render("joined_button", lang, config.texts, html=False),
                "callback_data": f"j:{content_id}",
            }
        ]
    )
    return {
        "text": render("gate", lang, config.texts, raw={"channels": lines}),
        "parse_mode": "HTML",
        "reply_markup": {"inline_keyboard": rows},
    }


def deliver(
    uow: UnitOfWork,
    user_id: int,
    content: dict[str, Any],
    lang: str,
    config: BotConfig,
    events: Events,
) -> None:
    """Send the content by file_id; with auto-delete, queue durable deletes for later."""
    protect = bool(content["protect"])
    auto_delete_s = int(content["auto_delete_s"])
    prefix = f"c:{user_id}:{secrets.token_hex(6)}"
    refs: list[str] = []
    for i, item in enumerate(content["items"]):
        ref = f"{prefix}:{i}" if auto_delete_s else None
        caption = content["caption"] if i == 0 and content["caption"] else item.get("caption")
        if item["kind"] == "text":
            params: dict[str, Any] = {"text": item["text"], "protect_content": protect}
            method = "sendMessage"
        else:
            method = SEND_METHODS[item["kind"]]
            params = {item["kind"]: item["file_id"], "protect_content": protect}
            if caption:
                params["caption"] = caption
        uow.send(user_id, method, params, ref=ref)
        if ref:
            refs.append(ref)
    if auto_delete_s:
        minutes = max(1, round(auto_delete_s / 60))
        notice = f"{prefix}:n"
        uow.send(
            user_id,
            "sendMessage",
            {
                "text": render("auto_delete", lang, config.texts, minutes=minutes),
                "parse_mode": "HTML",
            },
            ref=notice,
        )
        at = datetime.now(UTC) + timedelta(seconds=auto_delete_s)
        for ref in [*refs, notice]:
            uow.send(
                user_id, "deleteMessage", {}, uses_ref=ref, not_before=at, priority=PRIORITY_LATER
            )
    events.add("content_sent", user_id, content_id=content["id"])
