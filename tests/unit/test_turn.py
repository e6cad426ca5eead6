"""A person's turn (features/turn.py): made before the handler, ended after it, in one place."""

from __future__ import annotations

from typing import Any

from sponsorbot.engine.routing import UNHANDLED, Router
from sponsorbot.engine.unit import Context
from sponsorbot.features.botconfig import BotConfig
from sponsorbot.features.gate.visitor import SEEN_WITH_GATE, VisitorTurn
from sponsorbot.features.people import SEEN
from sponsorbot.features.stats.events import INSERT as EVENTS
from sponsorbot.features.stats.events import EventKind
from sponsorbot.features.texts import DEFAULTS
from sponsorbot.features.turn import MAX_ANSWER, Turn, turned
from tests.handlerkit import (
    ScriptedReads,
    ScriptedTelegram,
    StaticConfig,
    button,
    context,
    message,
    sent,
)

USER = 77


def ctx() -> Context:
    return context(ScriptedTelegram(), ScriptedReads(), USER)


def statements(c: Context) -> list[str]:
    return [sql for sql, _ in c.uow.statements]


class Handlers:
    """Handlers of a feature, as a feature writes them."""

    def __init__(self, config: BotConfig | None = None) -> None:
        self.config = StaticConfig(config or BotConfig())
        self.turns: list[Turn] = []

    @turned()
    async def hello(self, m: dict[str, Any], c: Context, turn: Turn) -> None:
        self.turns.append(turn)
        turn.say("welcome")

    @turned()
    async def not_mine(self, m: dict[str, Any], c: Context, turn: Turn) -> object:
        return UNHANDLED

    @turned(seen=False)
    async def quiet(self, m: dict[str, Any], c: Context, turn: Turn, count: bool = False) -> None:
        if count:
            turn.person_seen()

    @turned(VisitorTurn)
    async def visit(self, m: dict[str, Any], c: Context, turn: VisitorTurn) -> None:
        turn.events.add(EventKind.STARTED, turn.user_id)
        turn.person_written(SEEN_WITH_GATE, 1, USER, "en", None, None, 0, None, "V", None)

    @turned()
    async def press(self, q: dict[str, Any], c: Context, turn: Turn, pressed: str) -> None:
        turn.answer(q, "still_missing", alert=True, titles="x" * 500)
        turn.answer(q)
        self.turns.append(turn)


async def test_a_handled_update_upserts_the_person_once_after_the_handler() -> None:
    handlers, c = Handlers(), ctx()
    await handlers.hello(message(USER, "hi", "fa"), c)
    [turn] = handlers.turns
    assert (turn.user_id, turn.lang) == (USER, "fa")
    [welcome] = sent(c, "sendMessage")
    assert welcome.params["text"] == turn.text("welcome") != DEFAULTS["en"]["welcome"]
    assert statements(c) == [SEEN]
    [(_, args)] = c.uow.statements
    assert args[:3] == (c.bot.id, USER, "fa")


async def test_an_update_passed_on_writes_nothing() -> None:
    c = ctx()
    assert await Handlers().not_mine(message(USER, "hi"), c) is UNHANDLED
    assert c.uow.statements == [] and c.uow.calls == []


async def test_a_handler_that_upserts_only_where_it_counts() -> None:
    quiet, counted = ctx(), ctx()
    await Handlers().quiet(message(USER, "hi"), quiet)
    await Handlers().quiet(message(USER, "hi"), counted, count=True)
    assert statements(quiet) == []
    assert statements(counted) == [SEEN]


async def test_a_visitor_s_turn_writes_the_person_its_own_way_then_the_events() -> None:
    c = ctx()
    await Handlers().visit(message(USER, "/start x"), c)
    assert statements(c) == [SEEN_WITH_GATE, EVENTS]


async def test_an_event_from_no_person_is_passed_on() -> None:
    c = ctx()
    assert await Handlers().hello({"chat": {"id": -1}, "text": "hi"}, c) is UNHANDLED
    assert await Handlers().hello({"from": {"id": "1"}}, c) is UNHANDLED
    assert c.uow.statements == [] and c.uow.calls == []


async def test_through_a_router_the_turn_comes_with_the_filter_data() -> None:
    handlers, c = Handlers(), ctx()
    router = Router()
    router.callback_query(lambda q, c: {"pressed": q["data"], "unasked": 1})(handlers.press)
    assert await router.dispatch("callback_query", {"callback_query": button(USER, "b:1")}, c)
    alert, plain = sent(c, "answerCallbackQuery")
    assert alert.params["show_alert"] is True and len(alert.params["text"]) == MAX_ANSWER
    assert "text" not in plain.params
    assert statements(c) == [SEEN]
