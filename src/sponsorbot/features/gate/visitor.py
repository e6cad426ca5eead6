"""The visitor's side: /start <code>, the gate message, "I've joined", the content.

Read phase: the bot's configuration (cached), one query for the content and the person's
open gate, one getChatMember per gate channel, all at once. Write phase: the person, the gate
state, events and every outgoing call, committed with the update's done mark; on /start, all in
that one statement (UnitOfWork.write_alone). Each handler runs in a `VisitorTurn`
(`features/turn.py`), which upserts the person and writes the events when it ends, and the
paced ones behind the person's flood limit (`flood.paced`).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sponsorbot.engine import calls
from sponsorbot.engine.callbacks import CallbackData
from sponsorbot.engine.filters import start_payload
from sponsorbot.engine.unit import PRIORITY_LATER, Context, UnitOfWork
from sponsorbot.features.botconfig import BotConfig, ConfigCache, GateChannel
from sponsorbot.features.channels.service import (
    REQUIRED_RIGHT,
    SET_LINK,
    SET_STATUS,
    create_invite_link,
)
from sponsorbot.features.content.service import CODE_SHAPE
from sponsorbot.features.errors import Refused
from sponsorbot.features.gate.flood import Pace, PerPerson, paced
from sponsorbot.features.gate.hooks import GateHooks
from sponsorbot.features.gate.membership import MembershipCache, Standing, Verdict, check_all
from sponsorbot.features.people import names
from sponsorbot.features.stats.events import EventKind, Events
from sponsorbot.features.texts import escape, render
from sponsorbot.features.turn import Turn, turned

LOOKUP = """
SELECT c.id, c.code, c.kind, c.items, c.caption, c.protect, c.auto_delete_s, c.enabled,
       p.gate_content_id, p.gate_ref, p.gate_checks,
       ARRAY(SELECT j.chat_id FROM join_requests j
             WHERE j.bot_id = $1 AND j.user_id = $3 AND j.status = 'pending') AS pending
FROM (SELECT 1) AS one
LEFT JOIN contents c ON c.bot_id = $1 AND c.{key} = $2
LEFT JOIN people p ON p.bot_id = $1 AND p.user_id = $3
"""
BY_CODE = LOOKUP.format(key="code")
BY_ID = LOOKUP.format(key="id")
# LOOKUP for a `/start <code>` message, read by the claim (Router.read_ahead): it saves a round
# trip on the hottest path. The code is found as start_payload and CODE_SHAPE find it, and the
# answer names the code and person it was read for; the handler reads again on any mismatch.
# The chat key of a message is its sender.
START_AHEAD = r"""
SELECT to_jsonb(x) || COALESCE(
    (SELECT jsonb_build_object('gate_content_id', p.gate_content_id, 'gate_ref', p.gate_ref,
                               'gate_checks', p.gate_checks)
     FROM people p WHERE p.bot_id = c.bot_id AND p.user_id = c.chat_key),
    '{"gate_content_id": null, "gate_ref": null, "gate_checks": null}')
FROM (
    SELECT s.code AS looked_up, c.chat_key AS looked_up_for,
           ct.id, ct.code, ct.kind, ct.items, ct.caption, ct.protect, ct.auto_delete_s,
           ct.enabled,
           ARRAY(SELECT j.chat_id FROM join_requests j
                 WHERE j.bot_id = c.bot_id AND j.user_id = c.chat_key
                   AND j.status = 'pending') AS pending
    FROM (SELECT substring(c.payload -> 'message' ->> 'text'
                           FROM '^/start\s+([A-Za-z0-9]{10,64})\s*$') AS code) s
    LEFT JOIN contents ct ON ct.bot_id = c.bot_id AND ct.code = s.code
    WHERE s.code IS NOT NULL
) x
"""
SET_GATE = """
UPDATE people SET gate_content_id = $3, gate_ref = $4, gate_checks = $5
WHERE bot_id = $1 AND user_id = $2
"""
# The person and their gate in one statement: /start is the hottest path, and each statement is
# a round trip inside the update's transaction.
SEEN_WITH_GATE = """
INSERT INTO people (bot_id, user_id, language, gate_content_id, gate_ref, gate_checks,
                    username, first_name, last_name)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (bot_id, user_id) DO UPDATE
SET last_seen = excluded.last_seen, language = COALESCE(excluded.language, people.language),
    blocked_at = NULL,
    username = excluded.username, first_name = excluded.first_name, last_name = excluded.last_name,
    gate_content_id = excluded.gate_content_id, gate_ref = excluded.gate_ref,
    gate_checks = excluded.gate_checks, gate_joined = false
"""
# Why a private gate channel let a visitor through: the bot cannot make a link to join it.
NO_LINK = "the bot cannot make an invite link there"
# Paces per person (features/gate/flood.py). Links: a burst of 20, then one a second, which
# a person tapping through a list of episodes never outruns; a script gets 20 plus one a second,
# and one "slow down" every half minute. What the taps bring is paced again by the sender, at
# `send_per_chat_per_s` (config.py, 3 by default) messages a second to one chat: the engine
# builds each bot's RateLimiter (engine/ratelimit.py) with it, and Sender._drain_chat reserves
# a slot per message, in order, so a longer answer waits its turn rather than being dropped.
# Other messages: one welcome per half minute, one short notice after it, then nothing until
# the half minute is over.
TAPS = Pace(burst=20, per_s=1.0, notice_every_s=30.0)
WELCOMES = Pace(burst=1, per_s=1 / 30, notice_every_s=30.0)
# Gate messages sent before the button carried the code name the content by its id.
LEGACY_ID = re.compile(r"^\d{1,18}$")


@dataclass(frozen=True, slots=True)
class Joined(CallbackData, prefix="j"):
    """The gate's "I've joined" button: the content's random code, never its sequential id.

    Callback data is written by the client, so an id would let anyone past one gate walk
    every item (docs/adr/0006-callback-data.md); the code is what the visitor's link already held.
    """

    code: str


@dataclass(slots=True)
class VisitorTurn(Turn):
    """A visitor's turn: the statistics events it records are written when it ends."""

    events: Events = field(init=False)

    def __post_init__(self) -> None:
        self.events = Events(self.uow.bot_id)

    def end(self) -> None:
        """The person, then the events, with the update's other writes."""
        Turn.end(self)
        self.events.flush(self.uow)


def _read_ahead(ctx: Context, code: str | None, user_id: int) -> Any:
    """START_AHEAD's answer, if it was read for this code and person."""
    ahead = ctx.ahead
    if (
        code is not None
        and isinstance(ahead, dict)
        and ahead.get("looked_up") == code
        and ahead.get("looked_up_for") == user_id
    ):
        return ahead
    return None


class Visitor:
    """Handlers for a visitor's /start, "I've joined" and anything else they send."""

    def __init__(
        self, config: ConfigCache, members: MembershipCache, hooks: GateHooks | None = None
    ) -> None:
        self.config = config
        self.members = members
        # What other features add to the welcome and after delivered content.
        self.hooks = hooks if hooks is not None else GateHooks()
        self.welcomes = PerPerson(WELCOMES)
        self.taps = PerPerson(TAPS)

    @turned(VisitorTurn)
    async def welcome(self, message: dict[str, Any], ctx: Context, turn: VisitorTurn) -> None:
        """Anything no feature took (no code, a word, a sticker): the welcome text."""
        await self._welcome(message, ctx, turn)

    @paced(lambda visitor: visitor.welcomes, "welcome_again", "sends messages")
    async def _welcome(self, message: dict[str, Any], ctx: Context, turn: VisitorTurn) -> None:
        turn.say("welcome", markup=self.hooks.welcome_markup(turn.config, turn.lang))

    @turned(VisitorTurn)
    async def start(self, message: dict[str, Any], ctx: Context, turn: VisitorTurn) -> None:
        """/start with a code: the content at once, or the gate first."""
        payload = start_payload(message)
        if payload:
            await self._open(message, ctx, turn, payload)
        else:
            await self._welcome(message, ctx, turn)

    @paced(lambda visitor: visitor.taps, "slow_down", "opens links")
    async def _open(
        self, message: dict[str, Any], ctx: Context, turn: VisitorTurn, payload: str
    ) -> None:
        user_id, events = turn.user_id, turn.events
        code = payload if CODE_SHAPE.match(payload) else None
        row = _read_ahead(ctx, code, user_id)
        if row is None and code:
            row = await ctx.db.fetchrow(BY_CODE, ctx.bot.id, code, user_id)
        # The content a link names rides on "started", so the panel can count opens per item.
        opened = row["id"] if row is not None else None
        events.add(EventKind.STARTED, user_id, content_id=opened)
        if row is None or row["id"] is None or not row["enabled"]:
            events.add(EventKind.UNKNOWN_CODE, user_id, data={"code": payload[:64]})
            turn.say("unknown_code")
            return
        missing = await self._missing(ctx, turn, row["pending"])
        old_ref = row["gate_ref"]
        if old_ref:
            # One current gate: the older gate message goes, whatever content it was for.
            ctx.uow.queue(calls.delete_message(user_id, uses_ref=old_ref))
        language = turn.user.get("language_code")
        if missing:
            ref = f"gate:{user_id}:{secrets.token_hex(6)}"
            text, markup = gate_message(missing, row["code"], turn.lang, turn.config)
            ctx.uow.queue(calls.send_message(user_id, text, markup=markup, ref=ref))
            turn.person_written(
                SEEN_WITH_GATE, ctx.bot.id, user_id, language, row["id"], ref, 1, *names(turn.user)
            )
            # The channels asked for, so statistics can count how often each was shown.
            shown = [c.chat_id for c in missing]
            events.add(EventKind.GATE_SHOWN, user_id, content_id=row["id"], data={"missing": shown})
        else:
            if old_ref:
                turn.person_written(
                    SEEN_WITH_GATE, ctx.bot.id, user_id, language, None, None, 0, *names(turn.user)
                )
            if turn.config.gate:
                events.add(EventKind.GATE_PASSED, user_id, content_id=row["id"], data={"checks": 1})
            deliver(ctx.uow, user_id, dict(row), turn.lang, turn.config, events, self.hooks)

    @turned(VisitorTurn)
    async def joined(
        self, query: dict[str, Any], ctx: Context, turn: VisitorTurn, pressed: Joined | None = None
    ) -> None:
        """The visitor pressed "I've joined": check again; edit the gate or deliver.

        `pressed` is the button's data, unpacked by the router's `Joined.filter()`; a caller
        with no router (a test) leaves it to be unpacked here."""
        if pressed is None:
            pressed = Joined.parse(query.get("data"))
        user_id, events, uow = turn.user_id, turn.events, ctx.uow
        message = query.get("message") or {}
        message_id = message.get("message_id")
        row = await self._pressed(ctx, pressed, user_id) if pressed is not None else None
        if row is None or row["id"] is None or not row["enabled"]:
            turn.answer(query, "gate_outdated")
            return
        current = row["gate_content_id"] == row["id"]
        # A gate of this item was shown after one check, even if it is no longer the open one.
        checks = (row["gate_checks"] if current else 1) + 1
        missing = await self._missing(ctx, turn, row["pending"])
        if missing:
            titles = ", ".join(c.title for c in missing)
            turn.answer(query, "still_missing", alert=True, titles=titles)
            if isinstance(message_id, int):
                text, markup = gate_message(missing, row["code"], turn.lang, turn.config)
                uow.queue(calls.edit_message_text(user_id, message_id, text, markup=markup))
            if current:
                uow.write_in_order(
                    SET_GATE, ctx.bot.id, user_id, row["id"], row["gate_ref"], checks
                )
        else:
            turn.answer(query, "all_joined")
            if isinstance(message_id, int):
                uow.queue(calls.delete_message(user_id, message_id))
            if current:
                uow.write_in_order(SET_GATE, ctx.bot.id, user_id, None, None, 0)
            events.add(
                EventKind.GATE_PASSED, user_id, content_id=row["id"], data={"checks": checks}
            )
            deliver(uow, user_id, dict(row), turn.lang, turn.config, events, self.hooks)

    @turned(VisitorTurn, seen=False)
    async def stray_button(self, query: dict[str, Any], ctx: Context, turn: VisitorTurn) -> None:
        """A button no feature took (an old keyboard, a forged or unknown prefix): its spinner
        stops with a word, in the visitor's language."""
        if isinstance(query.get("id"), str):
            turn.answer(query, "button_outdated")

    async def _pressed(self, ctx: Context, pressed: Joined, user_id: int) -> Any:
        """The content and person a "I've joined" button names, or None when it names nothing
        this person may have: an old button's id counts only for the gate they were shown."""
        if CODE_SHAPE.match(pressed.code):
            row = await ctx.db.fetchrow(BY_CODE, ctx.bot.id, pressed.code, user_id)
            if row is not None and row["id"] is not None:
                return row
        if LEGACY_ID.match(pressed.code):
            row = await ctx.db.fetchrow(BY_ID, ctx.bot.id, int(pressed.code), user_id)
            if row is not None and row["id"] is not None and row["gate_content_id"] == row["id"]:
                return row
        return None

    async def _missing(
        self, ctx: Context, turn: VisitorTurn, pending: list[int] | None
    ) -> list[GateChannel]:
        """The gate channels this person has not joined (nor asked to, where that counts)."""
        gate = list(turn.config.gate)
        for i, channel in enumerate(gate):
            if channel.url is None:
                gate[i] = await self._with_link(ctx, channel)
        verdicts = await check_all(
            ctx.telegram, self.members, ctx.bot.id, turn.user_id, gate, pending or ()
        )
        missing = []
        for verdict in verdicts:
            if verdict.standing is Standing.UNKNOWN:
                self._unknown(ctx, turn, verdict)
            elif verdict.standing is Standing.MISSING and verdict.channel.url is None:
                # Private, and the bot could not make an invite link: the gate would list it
                # with no button, and nobody could join it. Like a channel nobody can check,
                # it lets the visitor through and shows the owner why.
                self._unknown(ctx, turn, Verdict(verdict.channel, Standing.UNKNOWN, NO_LINK))
            elif verdict.standing is Standing.MISSING:
                missing.append(verdict.channel)
        return missing

    def _unknown(self, ctx: Context, turn: VisitorTurn, verdict: Verdict) -> None:
        """Let the visitor through, and show the owner why in the channel's status."""
        reason = verdict.reason or "unknown"
        lost = "inaccessible" in reason or "admin" in reason.lower()
        rights = [REQUIRED_RIGHT] if reason == NO_LINK else ["administrator"] if lost else []
        ctx.uow.write_in_order(
            SET_STATUS,
            ctx.bot.id,
            verdict.channel.chat_id,
            "missing_rights" if rights else "unreachable",
            rights,
            reason,
        )
        turn.events.add(
            EventKind.CHANNEL_UNKNOWN,
            turn.user_id,
            chat_id=verdict.channel.chat_id,
            data={"reason": reason[:200]},
        )

    async def _with_link(self, ctx: Context, channel: GateChannel) -> GateChannel:
        """A private channel without our invite link yet: make one now and store it."""
        try:
            url = await create_invite_link(ctx.telegram, channel.chat_id, channel.request_counts)
        except Refused:
            return channel
        ctx.uow.write_in_order(SET_LINK, ctx.bot.id, channel.chat_id, url, channel.request_counts)
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
    missing: list[GateChannel], code: str, lang: str, config: BotConfig
) -> tuple[str, dict[str, Any]]:
    """The gate's text and keyboard: the missing channels as join buttons, then "I've joined"."""
    lines = "\n".join(f"• {escape(c.title)}" for c in missing)
    rows: list[list[dict[str, str]]] = [
        [{"text": render("join_button", lang, config.texts, html=False, title=c.title), "url": url}]
        for c in missing
        if (url := c.url) is not None
    ]
    joined = render("joined_button", lang, config.texts, html=False)
    rows.append([{"text": joined, "callback_data": Joined(code).pack()}])
    text = render("gate", lang, config.texts, raw={"channels": lines})
    return text, {"inline_keyboard": rows}


def deliver(
    uow: UnitOfWork,
    user_id: int,
    content: dict[str, Any],
    lang: str,
    config: BotConfig,
    events: Events,
    hooks: GateHooks,
) -> None:
    """Send the content by file_id; with auto-delete, queue durable deletes for later; then
    what other features add after content (the hooks)."""
    protect = bool(content["protect"])
    auto_delete_s = int(content["auto_delete_s"])
    prefix = f"c:{user_id}:{secrets.token_hex(6)}"
    refs: list[str] = []
    for i, item in enumerate(content["items"]):
        ref = f"{prefix}:{i}" if auto_delete_s else None
        caption = content["caption"] if i == 0 and content["caption"] else item.get("caption")
        if item["kind"] == "text":
            call = calls.send_message(
                user_id, item["text"], parse_mode=None, protect=protect, ref=ref
            )
        else:
            call = calls.send_media(
                user_id, item["kind"], item["file_id"], caption=caption, protect=protect, ref=ref
            )
        uow.queue(call)
        if ref:
            refs.append(ref)
    if auto_delete_s:
        _auto_delete(uow, user_id, prefix, refs, auto_delete_s, lang, config)
    hooks.delivered(uow, user_id, lang, config)
    events.add(EventKind.CONTENT_SENT, user_id, content_id=content["id"])


def _auto_delete(
    uow: UnitOfWork,
    user_id: int,
    prefix: str,
    refs: list[str],
    after_s: int,
    lang: str,
    config: BotConfig,
) -> None:
    """Tell the visitor the content goes in N minutes, and queue the deletes (durable)."""
    minutes = max(1, round(after_s / 60))
    notice = f"{prefix}:n"
    text = render("auto_delete", lang, config.texts, minutes=minutes)
    uow.queue(calls.send_message(user_id, text, ref=notice))
    at = datetime.now(UTC) + timedelta(seconds=after_s)
    for ref in [*refs, notice]:
        uow.queue(
            calls.delete_message(user_id, uses_ref=ref, not_before=at, priority=PRIORITY_LATER)
        )
