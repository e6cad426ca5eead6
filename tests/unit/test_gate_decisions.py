"""The gate's decisions, handler by handler, with no database and no Telegram (handlerkit)."""

from __future__ import annotations

from typing import Any

import pytest

from sponsorbot.engine.callbacks import InvalidCallback
from sponsorbot.features.botconfig import BotConfig
from sponsorbot.features.gate.flood import PerPerson
from sponsorbot.features.gate.membership import MembershipCache
from sponsorbot.features.gate.visitor import (
    BY_CODE,
    BY_ID,
    SEEN_WITH_GATE,
    SET_GATE,
    TAPS,
    WELCOMES,
    Joined,
    Visitor,
)
from sponsorbot.features.people import SEEN
from sponsorbot.features.stats.events import INSERT as EVENTS
from tests.handlerkit import (
    ScriptedReads,
    ScriptedTelegram,
    StaticConfig,
    button,
    channel,
    context,
    message,
    sent,
)

USER = 501
CONTENT = 77
CODE = "Abc123xyz0"
FIRST, SECOND = -1001, -1002


def content_row(**person: Any) -> dict[str, Any]:
    """What BY_CODE / BY_ID answer for a known, enabled document and this person."""
    row = {
        "id": CONTENT,
        "code": CODE,
        "kind": "document",
        "items": [{"kind": "document", "file_id": "FILE"}],
        "caption": None,
        "protect": False,
        "auto_delete_s": 0,
        "enabled": True,
        "gate_content_id": None,
        "gate_ref": None,
        "gate_checks": 0,
        "pending": [],
    }
    row.update(person)
    return row


def gate_of_two() -> tuple[Visitor, ScriptedTelegram, ScriptedReads]:
    config = BotConfig(gate=(channel(FIRST, "First", "first"), channel(SECOND, "Second", "second")))
    visitor = Visitor(StaticConfig(config), MembershipCache())
    reads = ScriptedReads()
    reads.on(BY_CODE, lambda bot, code, user: content_row() if code == CODE else None)
    reads.on(BY_ID, lambda bot, cid, user: content_row() if cid == CONTENT else None)
    return visitor, ScriptedTelegram(), reads


def event_kinds(ctx: Any) -> list[str]:
    return [kind for sql, args in ctx.uow.statements if sql == EVENTS for kind in args[1]]


def statements(ctx: Any) -> list[str]:
    return [sql for sql, _ in ctx.uow.statements]


async def test_a_known_code_for_a_member_of_every_channel_delivers_at_once() -> None:
    visitor, telegram, reads = gate_of_two()
    telegram.joined(FIRST, USER)
    telegram.joined(SECOND, USER, "administrator")
    ctx = context(telegram, reads, USER)
    await visitor.start(message(USER, f"/start {CODE}"), ctx)
    [document] = sent(ctx, "sendDocument")
    assert document.params["document"] == "FILE"
    assert sent(ctx, "sendMessage") == []
    assert SEEN in statements(ctx)
    assert event_kinds(ctx) == ["started", "gate_passed", "content_sent"]


async def test_an_unknown_code_says_so_and_asks_telegram_nothing() -> None:
    visitor, telegram, reads = gate_of_two()
    ctx = context(telegram, reads, USER)
    await visitor.start(message(USER, "/start Nope000000"), ctx)
    [reply] = sent(ctx, "sendMessage")
    assert "link" in reply.params["text"].lower()
    assert telegram.calls == []
    assert event_kinds(ctx) == ["started", "unknown_code"]


async def test_a_malformed_code_is_not_even_looked_up() -> None:
    visitor, telegram, reads = gate_of_two()
    ctx = context(telegram, reads, USER)
    await visitor.start(message(USER, "/start ' OR 1=1 --"), ctx)
    assert reads.asked == []
    assert len(sent(ctx, "sendMessage")) == 1


async def test_a_member_of_some_channels_sees_only_the_missing_ones() -> None:
    visitor, telegram, reads = gate_of_two()
    telegram.joined(FIRST, USER)
    ctx = context(telegram, reads, USER)
    await visitor.start(message(USER, f"/start {CODE}"), ctx)
    [gate] = sent(ctx, "sendMessage")
    buttons = [b for row in gate.params["reply_markup"]["inline_keyboard"] for b in row]
    assert [b.get("url") for b in buttons] == ["https://t.me/second", None]
    assert Joined.unpack(buttons[-1]["callback_data"]) == Joined(CODE)
    assert gate.ref is not None and gate.ref.startswith(f"gate:{USER}:")
    assert sent(ctx, "sendDocument") == []
    assert SEEN_WITH_GATE in statements(ctx)
    assert event_kinds(ctx) == ["started", "gate_shown"]


async def test_a_channel_where_the_bot_lost_its_rights_lets_the_visitor_through() -> None:
    visitor, telegram, reads = gate_of_two()
    telegram.joined(FIRST, USER)
    telegram.refuse(SECOND, "Bad Request: member list is inaccessible")
    ctx = context(telegram, reads, USER)
    await visitor.start(message(USER, f"/start {CODE}"), ctx)
    assert len(sent(ctx, "sendDocument")) == 1
    assert len(ctx.uow.writes) == 1  # the channel's status: missing rights, and why
    assert event_kinds(ctx) == ["started", "channel_unknown", "gate_passed", "content_sent"]


async def test_a_new_link_replaces_the_open_gate_message() -> None:
    visitor, telegram, reads = gate_of_two()
    reads.on(BY_CODE, lambda *_: content_row(gate_content_id=CONTENT, gate_ref="gate:old"))
    ctx = context(telegram, reads, USER)
    await visitor.start(message(USER, f"/start {CODE}"), ctx)
    [delete] = sent(ctx, "deleteMessage")
    assert delete.uses_ref == "gate:old"
    assert ctx.uow.calls.index(delete) < ctx.uow.calls.index(sent(ctx, "sendMessage")[0])


async def test_i_ve_joined_twice_first_still_missing_then_through() -> None:
    visitor, telegram, reads = gate_of_two()
    telegram.joined(FIRST, USER)
    reads.on(
        BY_CODE, lambda *_: content_row(gate_content_id=CONTENT, gate_ref="gate:g", gate_checks=1)
    )
    first = context(telegram, reads, USER)
    await visitor.joined(button(USER, Joined(CODE).pack()), first)
    [answer] = sent(first, "answerCallbackQuery")
    assert answer.params["show_alert"] is True and "Second" in answer.params["text"]
    [edit] = sent(first, "editMessageText")
    assert edit.params["message_id"] == 50
    assert sent(first, "sendDocument") == []
    assert len(first.uow.writes) == 1  # SET_GATE: one more check

    telegram.joined(SECOND, USER)
    reads.on(
        BY_CODE, lambda *_: content_row(gate_content_id=CONTENT, gate_ref="gate:g", gate_checks=2)
    )
    second = context(telegram, reads, USER)
    await visitor.joined(button(USER, Joined(CODE).pack()), second)
    [answer] = sent(second, "answerCallbackQuery")
    assert "show_alert" not in answer.params
    assert sent(second, "deleteMessage")[0].params["message_id"] == 50
    assert len(sent(second, "sendDocument")) == 1
    assert event_kinds(second) == ["gate_passed", "content_sent"]


async def test_a_forged_joined_button_is_answered_and_reads_nothing() -> None:
    visitor, telegram, reads = gate_of_two()
    ctx = context(telegram, reads, USER)
    await visitor.joined(button(USER, "j:not-a-number"), ctx)
    [answer] = sent(ctx, "answerCallbackQuery")
    assert answer.params["callback_query_id"] == f"cq{USER}"
    assert BY_ID not in reads.asked
    assert sent(ctx, "sendDocument") == []


async def test_a_joined_button_with_another_items_id_delivers_nothing() -> None:
    """H1: "I've joined" with a sequential id walked every item; an id counts only for the
    gate this person was shown (buttons sent before codes rode on them)."""
    visitor, telegram, reads = gate_of_two()
    telegram.joined(FIRST, USER)
    telegram.joined(SECOND, USER)
    reads.on(BY_CODE, lambda *_: content_row(id=None))
    reads.on(BY_ID, lambda bot, cid, user: content_row(id=cid, gate_content_id=CONTENT))
    for forged in (f"j:{CONTENT + 1}", "j:1", "j:Zz9Zz9Zz9Zz9"):
        ctx = context(telegram, reads, USER)
        await visitor.joined(button(USER, forged), ctx)
        assert sent(ctx, "sendDocument") == [], forged
        [answer] = sent(ctx, "answerCallbackQuery")
        assert "show_alert" not in answer.params

    ctx = context(telegram, reads, USER)
    await visitor.joined(button(USER, f"j:{CONTENT}"), ctx)
    assert len(sent(ctx, "sendDocument")) == 1


async def test_start_without_a_code_gets_the_welcome() -> None:
    visitor, telegram, reads = gate_of_two()
    ctx = context(telegram, reads, USER)
    await visitor.start(message(USER, "/start"), ctx)
    assert len(sent(ctx, "sendMessage")) == 1
    assert reads.asked == [] and telegram.calls == []


def test_set_gate_is_what_joined_writes() -> None:
    # The handlers above count writes; make sure the statement they count is the gate's.
    assert "gate_checks" in SET_GATE
    try:
        Joined.unpack("j:1:2")
    except InvalidCallback:
        pass
    else:
        raise AssertionError("two parts for a one-field callback must not unpack")


async def test_a_person_typing_fast_gets_one_welcome_and_a_bounded_number_of_answers() -> None:
    """L11: every message got a welcome, so a spammer queued replies without bound. Now the
    welcome, one short notice, then nothing for the rest of the half minute."""
    visitor, telegram, reads = gate_of_two()
    # All at one instant: nothing refills while the loop runs, however slow the machine.
    visitor.welcomes = PerPerson(WELCOMES, clock=lambda: 0.0)
    visitor.taps = PerPerson(TAPS, clock=lambda: 0.0)
    telegram.joined(FIRST, USER)
    telegram.joined(SECOND, USER)
    welcomes = 0
    for n in range(10):
        ctx = context(telegram, reads, USER)
        await visitor.welcome(message(USER, f"hello {n}"), ctx)
        welcomes += len(sent(ctx, "sendMessage"))
        assert SEEN in statements(ctx)  # the person is still seen
    assert welcomes == 2
    delivered = 0
    for _ in range(50):
        ctx = context(telegram, reads, USER)
        await visitor.start(message(USER, f"/start {CODE}"), ctx)
        delivered += len(sent(ctx, "sendDocument"))
    assert delivered == 20
    other = context(telegram, reads, USER + 1)
    await visitor.welcome(message(USER + 1, "hi"), other)
    assert len(sent(other, "sendMessage")) == 1


async def test_a_retried_update_is_not_refused_by_the_flood_limit_it_counted_once() -> None:
    """L11: the first try counted the welcome, its commit failed; the retry still answers."""
    visitor, telegram, reads = gate_of_two()
    first = context(telegram, reads, USER)
    await visitor.welcome(message(USER, "hi"), first)
    retry = context(telegram, reads, USER, attempt=2)
    await visitor.welcome(message(USER, "hi"), retry)
    assert len(sent(retry, "sendMessage")) == 1


def _ahead(code: str, user_id: int, **person: Any) -> dict[str, Any]:
    """What the claim's read-ahead (START_AHEAD) answers."""
    return content_row(**person) | {"looked_up": code, "looked_up_for": user_id}


async def test_the_claim_s_read_ahead_spares_the_lookup() -> None:
    visitor, telegram, reads = gate_of_two()
    ctx = context(telegram, reads, USER)
    ctx.ahead = _ahead(CODE, USER, gate_content_id=CONTENT, gate_ref="gate:old")
    await visitor.start(message(USER, f"/start {CODE}"), ctx)
    assert reads.asked == []
    [gate] = sent(ctx, "sendMessage")
    assert "First" in gate.params["text"] and "Second" in gate.params["text"]
    # The old gate message goes, as with the row read by the handler itself.
    assert [c.uses_ref for c in sent(ctx, "deleteMessage")] == ["gate:old"]


@pytest.mark.parametrize(
    "ahead",
    [
        _ahead("Other00000", USER),  # read for another code
        _ahead(CODE, USER + 1),  # read for another person
        {"unexpected": True},
        None,
    ],
)
async def test_a_read_ahead_for_something_else_is_not_trusted(ahead: Any) -> None:
    visitor, telegram, reads = gate_of_two()
    ctx = context(telegram, reads, USER)
    ctx.ahead = ahead
    await visitor.start(message(USER, f"/start {CODE}"), ctx)
    assert reads.asked == [BY_CODE]
