"""The router: filters, fall-through, observers, included routers, allowed_updates."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pytest

from sponsorbot.engine.callbacks import CallbackData
from sponsorbot.engine.conversation import Conversation, States
from sponsorbot.engine.filters import (
    CallbackPrefix,
    ChatType,
    Command,
    CommandStart,
    ContentType,
    State,
    command_of,
    from_person,
    start_payload,
)
from sponsorbot.engine.routing import UNHANDLED, Router, accepted
from sponsorbot.engine.unit import Context
from sponsorbot.features.fallback import stray_buttons
from tests.handlerkit import ScriptedReads, ScriptedTelegram, button, context, message, sent

USER = 42


def ctx() -> Context:
    return context(ScriptedTelegram(), ScriptedReads(), USER)


def chat_member_update(user_id: int = USER) -> dict[str, Any]:
    return {
        "update_id": 9,
        "chat_member": {
            "chat": {"id": -100, "type": "channel"},
            "from": {"id": user_id},
            "old_chat_member": {"status": "left", "user": {"id": user_id}},
            "new_chat_member": {"status": "member", "user": {"id": user_id}},
        },
    }


async def test_two_features_both_hear_one_chat_member_update() -> None:
    root = Router()
    heard: list[str] = []
    gate, campaigns = Router("gate"), Router("campaigns")

    @gate.chat_member()
    async def gate_listens(event: dict[str, Any], c: Context) -> None:
        heard.append("gate")

    @campaigns.chat_member()
    async def campaigns_listen(event: dict[str, Any], c: Context) -> None:
        heard.append("campaigns")

    root.include_router(gate)
    root.include_router(campaigns)
    assert await root.dispatch("chat_member", chat_member_update(), ctx())
    assert heard == ["gate", "campaigns"]


async def test_an_unknown_button_is_answered_without_error() -> None:
    root = Router()
    shop = Router("shop")

    @shop.callback_query(CallbackPrefix("shop"))
    async def shop_button(query: dict[str, Any], c: Context) -> None:
        raise AssertionError("not a shop button")

    root.include_router(shop)
    root.include_router(stray_buttons(Router("stray")))
    c = ctx()
    assert await root.dispatch("callback_query", {"callback_query": button(USER, "zz:1")}, c)
    [answer] = sent(c, "answerCallbackQuery")
    assert answer.params == {"chat_id": USER, "callback_query_id": f"cq{USER}"}


async def test_the_first_taker_wins_and_unhandled_falls_through() -> None:
    root = Router()
    order: list[str] = []
    first, second = Router("first"), Router("second")

    @first.message(Command("batch"))
    async def batch(m: dict[str, Any], c: Context) -> None:
        order.append("batch")

    @first.message()
    async def not_mine(m: dict[str, Any], c: Context) -> object:
        order.append("looked")
        return UNHANDLED

    @second.message()
    async def anything(m: dict[str, Any], c: Context) -> None:
        order.append("anything")

    @second.message()
    async def never(m: dict[str, Any], c: Context) -> None:
        order.append("never")

    root.include_router(first)
    root.include_router(second)
    await root.dispatch("message", {"message": message(USER, "/batch@gate_bot")}, ctx())
    assert order == ["batch"]
    order.clear()
    await root.dispatch("message", {"message": message(USER, "hello")}, ctx())
    assert order == ["looked", "anything"]


async def test_nothing_takes_an_update_of_a_kind_nobody_registered() -> None:
    root = Router()
    root.include_router(Router("empty"))
    assert not await root.dispatch("edited_message", {"edited_message": {}}, ctx())
    assert not root.handles("edited_message")


def test_allowed_updates_are_the_registered_kinds() -> None:
    root, child = Router(), Router("child")

    @root.message()
    async def m(e: Any, c: Context) -> None: ...

    @child.chat_join_request()
    async def j(e: Any, c: Context) -> None: ...

    root.include_router(child)
    assert root.kinds() == ["chat_join_request", "message"]


def test_a_router_is_included_once_and_never_in_a_circle() -> None:
    a, b = Router("a"), Router("b")
    a.include_router(b)
    with pytest.raises(ValueError, match="already included"):
        Router("c").include_router(b)
    with pytest.raises(ValueError, match="cycle"):
        b.include_router(a)


async def test_filters_read_commands_payloads_chats_and_content() -> None:
    c = ctx()
    start = message(USER, "/start  Abc123 ")
    assert CommandStart()(start, c) and CommandStart(payload=True)(start, c)
    assert not CommandStart(payload=False)(start, c)
    assert start_payload(start) == "Abc123"
    assert CommandStart(payload=False)(message(USER, "/start"), c)
    assert not Command("start")(message(USER, "/started"), c)
    assert command_of(message(USER, "/Done@Gate_bot now")) == "done"
    assert command_of({"caption": "/x"}) is None
    assert ChatType("private")(start, c) and not ChatType("channel")(start, c)
    assert ChatType("private")(button(USER, "j:1"), c)
    assert ContentType("document")({"document": {"file_id": "F"}}, c)
    assert from_person(start, c) and not from_person({"from": {"id": 1, "is_bot": True}}, c)
    assert CallbackPrefix("j")(button(USER, "j:1"), c)
    assert not CallbackPrefix("j")(button(USER, "jj:1"), c)


async def test_the_state_filter_reads_the_conversation_once() -> None:
    reads = ScriptedReads()
    from sponsorbot.engine.conversation import READ

    reads.on(READ, lambda bot, user: {"state": "upload:batch", "data": {}, "expires_at": None})
    c = context(ScriptedTelegram(), reads, USER)
    assert await State("upload:batch")({}, c)
    assert await State()({}, c)
    assert not await State("shop:hash")({}, c)
    assert reads.asked == [READ]


async def test_router_filters_are_checked_once_and_only_for_kinds_it_handles() -> None:
    asked: list[str] = []

    def counted(event: dict[str, Any], c: Context) -> bool:
        asked.append("filter")
        return bool(event.get("chat", {}).get("type") == "private")

    root = Router()
    private = Router("private only", counted)

    @private.message(Command("a"))
    async def a(m: dict[str, Any], c: Context) -> None: ...

    @private.message()
    async def rest(m: dict[str, Any], c: Context) -> object:
        return UNHANDLED

    root.include_router(private)
    root.include_router(stray_buttons(Router("stray")))
    await root.dispatch("message", {"message": message(USER, "/b")}, ctx())
    assert asked == ["filter"]
    await root.dispatch("callback_query", {"callback_query": button(USER, "x")}, ctx())
    assert asked == ["filter"], "a router without button handlers never filters a button"


def test_read_aheads_are_gathered_from_the_tree_one_per_kind() -> None:
    root, gate, shop = Router(), Router("gate"), Router("shop")
    root.include_router(gate)
    root.include_router(shop)
    gate.read_ahead("message", "SELECT to_jsonb(1)")
    shop.read_ahead("callback_query", "SELECT to_jsonb(2)")
    assert root.read_aheads() == {
        "message": "SELECT to_jsonb(1)",
        "callback_query": "SELECT to_jsonb(2)",
    }
    shop.read_ahead("message", "SELECT to_jsonb(3)")
    with pytest.raises(ValueError, match="two read-aheads"):
        root.read_aheads()
    with pytest.raises(ValueError, match="one subquery"):
        gate.read_ahead("message", "SELECT 1; DROP TABLE inbox")


@dataclass(frozen=True, slots=True)
class Shelf(CallbackData, prefix="tshelf"):
    """A button for these tests: a shelf and a row on it."""

    shelf: int
    row: str


async def test_a_filter_hands_what_it_found_to_the_handler_by_name() -> None:
    got: list[tuple[str, Any]] = []

    def shelf_of(m: dict[str, Any], c: Context) -> dict[str, Any]:
        return {"shelf": 3}

    async def and_row(m: dict[str, Any], c: Context) -> dict[str, Any]:
        return {"row": "b"}

    # The router's own filter hands `seen_by` to every handler below it.
    root = Router("root", lambda m, c: {"seen_by": "root"})

    @root.message(shelf_of, and_row)
    async def named(m: dict[str, Any], c: Context, shelf: int, row: str, seen_by: str) -> object:
        got.append(("named", (shelf, row, seen_by)))
        return UNHANDLED

    @root.message(shelf_of)
    async def needs_none(m: dict[str, Any], c: Context) -> object:
        got.append(("needs_none", None))
        return UNHANDLED

    child = root.include_router(Router("child", lambda m, c: MappingProxyType({"row": "z"})))

    @child.message(shelf_of)
    async def takes_all(m: dict[str, Any], c: Context, **data: Any) -> None:
        got.append(("takes_all", data))

    assert await root.dispatch("message", {"message": message(USER, "hi")}, ctx())
    assert got == [
        ("named", (3, "b", "root")),
        ("needs_none", None),
        ("takes_all", {"seen_by": "root", "row": "z", "shelf": 3}),
    ]


async def test_a_filter_that_finds_nothing_or_says_no_stops_the_handler() -> None:
    ran: list[str] = []
    root = Router()

    @root.message(lambda m, c: {}, lambda m, c: False)
    async def refused(m: dict[str, Any], c: Context) -> None:
        ran.append("refused")

    async def empty(m: dict[str, Any], c: Context) -> dict[str, Any]:
        return {}

    @root.message(empty)
    async def passed(m: dict[str, Any], c: Context) -> None:
        ran.append("passed")

    assert await root.dispatch("message", {"message": message(USER, "hi")}, ctx())
    assert ran == ["passed"], "an empty mapping passes; False stops"


async def test_a_callback_filter_hands_the_pressed_button_and_passes_on_forged_data() -> None:
    got: list[Shelf] = []
    root = Router()

    @root.callback_query(Shelf.filter())
    async def shelf(q: dict[str, Any], c: Context, pressed: Shelf) -> None:
        got.append(pressed)

    root.include_router(stray_buttons(Router("stray")))
    assert await root.dispatch(
        "callback_query", {"callback_query": button(USER, "tshelf:4:c")}, ctx()
    )
    assert got == [Shelf(4, "c")]
    for forged in ("tshelf:x:c", "tshelf:4", "tshelf", "tshelfy:4:c", "other:4:c"):
        c = ctx()
        assert await root.dispatch("callback_query", {"callback_query": button(USER, forged)}, c)
        assert len(got) == 1, forged
        assert len(sent(c, "answerCallbackQuery")) == 1, "the stray-button answer took it"
    assert Shelf.filter()({"data": None}, ctx()) is False


async def test_the_state_filter_hands_the_open_conversation() -> None:
    c = ctx()
    talk = Conversation("upload:batch", {"items": [1]})
    c.conversation_is(talk)
    got: list[Conversation] = []
    root = Router()

    @root.message(State("upload:batch"))
    async def batch(m: dict[str, Any], c: Context, conversation: Conversation) -> None:
        got.append(conversation)

    assert await root.dispatch("message", {"message": message(USER, "file")}, c)
    assert got == [talk]
    other = ctx()
    other.conversation_is(Conversation("shop:material"))
    assert not await root.dispatch("message", {"message": message(USER, "file")}, other)


async def test_observers_get_filter_data_too() -> None:
    heard: list[Any] = []
    root = Router()

    @root.chat_member(lambda e, c: {"chat_id": e["chat"]["id"]})
    async def listen(e: dict[str, Any], c: Context, chat_id: int) -> None:
        heard.append(chat_id)

    assert await root.dispatch("chat_member", chat_member_update(), ctx())
    assert heard == [-100]


def test_what_a_handler_takes_by_name_is_read_once() -> None:
    async def plain(e: Any, c: Context) -> None: ...

    async def some(e: Any, c: Context, pressed: Any, *, conversation: Any = None) -> None: ...

    async def every(e: Any, c: Context, **data: Any) -> None: ...

    assert accepted(plain) == frozenset({"e", "c"})
    assert accepted(some) == frozenset({"e", "c", "pressed", "conversation"})
    assert accepted(every) is None


class Steps(States):
    """A dialogue's states for these tests."""

    ASKED = "t:asked"
    CONFIRMING = "t:confirming"


async def test_a_states_class_names_a_dialogue_s_states_once() -> None:
    c = ctx()
    c.conversation_is(Conversation("t:confirming"))
    assert await State(Steps)({}, c) == {"conversation": Conversation("t:confirming")}
    assert not await State(Steps.ASKED)({}, c)
    assert await State(Steps.ASKED, "t:confirming")({}, c)
    assert Steps.holds("t:asked") and not Steps.holds("t:other")
    assert isinstance(Steps.ASKED, str) and str(Steps.ASKED) == "t:asked"  # stored so
