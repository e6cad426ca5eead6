"""The visitor's pace (features/gate/flood.py): a human is never refused, a script's cost is
bounded, and a refusal is never silent; the handlers that use it (handlerkit, no database)."""

from __future__ import annotations

import itertools
import logging
from typing import Any, cast

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sponsorbot.features.botconfig import BotConfig
from sponsorbot.features.gate import visitor as gate_visitor
from sponsorbot.features.gate.flood import Bucket, Pace, Paced, PerPerson, step
from sponsorbot.features.gate.membership import MembershipCache
from sponsorbot.features.gate.visitor import BY_CODE, NO_LINK, TAPS, WELCOMES, Visitor
from sponsorbot.features.texts import DEFAULTS, render
from sponsorbot.telegram.errors import error_from_answer
from tests.examples import examples
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

USER = 601
CODE = "Episode001"

paces = st.builds(
    Pace,
    burst=st.integers(1, 40),
    per_s=st.floats(1.0, 20.0),
    notice_every_s=st.floats(0.5, 120.0),
)
any_paces = st.builds(
    Pace,
    burst=st.integers(1, 40),
    per_s=st.floats(0.01, 20.0),
    notice_every_s=st.floats(0.5, 120.0),
)


def run(pace: Pace, times: list[float]) -> list[Paced]:
    """The verdicts for one person tapping at these times."""
    bucket: Bucket | None = None
    verdicts = []
    for now in times:
        bucket, verdict = step(bucket, pace, now)
        verdicts.append(verdict)
    return verdicts


def at(start: float, gaps: list[float]) -> list[float]:
    return list(itertools.accumulate(gaps, initial=start))


def test_a_burst_then_one_notice_then_quiet_until_the_window_ends() -> None:
    pace = Pace(burst=3, per_s=1.0, notice_every_s=10.0)
    verdicts = run(pace, [0.0] * 6)
    assert verdicts == [Paced.ALLOW] * 3 + [Paced.TELL] + [Paced.QUIET] * 2
    # A second later one token is back; ten seconds after the notice, a new notice.
    assert run(pace, [0.0] * 4 + [1.0, 1.0]) == [Paced.ALLOW] * 3 + [
        Paced.TELL,
        Paced.ALLOW,
        Paced.QUIET,
    ]
    assert run(pace, [0.0] * 4 + [0.0, 10.0, 10.0])[-2:] == [Paced.ALLOW, Paced.ALLOW]
    assert run(pace, [0.0] * 4 + [10.0] * 4)[-1] is Paced.TELL


def test_the_binge_of_thirty_episodes_two_seconds_apart_is_never_refused() -> None:
    """The report that started this: the old limit (20 a minute) dropped 10 of these."""
    assert run(TAPS, at(0.0, [2.0] * 29)) == [Paced.ALLOW] * 30


def test_a_clock_that_steps_back_counts_as_no_time() -> None:
    pace = Pace(burst=1, per_s=1.0, notice_every_s=5.0)
    assert run(pace, [100.0, 50.0, 100.5, 101.0]) == [
        Paced.ALLOW,
        Paced.TELL,
        Paced.QUIET,
        Paced.ALLOW,
    ]


def test_a_pace_made_faster_keeps_its_ratios() -> None:
    fast = TAPS.faster(20)
    assert fast.burst == TAPS.burst
    assert fast.per_s == pytest.approx(TAPS.per_s * 20)
    assert fast.notice_every_s == pytest.approx(TAPS.notice_every_s / 20)
    assert run(fast, at(0.0, [0.1] * 29)) == [Paced.ALLOW] * 30
    with pytest.raises(ValueError):
        Pace(burst=0, per_s=1.0, notice_every_s=1.0)


@settings(max_examples=examples(300))
@given(
    paces,
    st.floats(0.0, 1e6),
    st.lists(st.floats(1.0, 3600.0), max_size=300),
)
# 1.4 - 0.4 is a hair under 1.0 in floating point: an exact 1 s gap must still find a token.
@example(Pace(1, 1.0, 30.0), 0.4, [1.0, 1.0])
def test_a_human_pace_is_never_refused(pace: Pace, start: float, gaps: list[float]) -> None:
    """Taps at least a second apart, however many, against a refill of one a second or more."""
    assert set(run(pace, at(start, gaps))) <= {Paced.ALLOW}


@settings(max_examples=examples(300))
@given(
    any_paces,
    st.lists(st.one_of(st.just(0.0), st.floats(0.0, 0.2), st.floats(0.0, 30.0)), max_size=200),
)
def test_whatever_the_taps_the_allowed_ones_are_bounded_and_no_refusal_is_silent(
    pace: Pace, gaps: list[float]
) -> None:
    times = at(0.0, gaps)
    verdicts = run(pace, times)
    allowed = [t for t, v in zip(times, verdicts, strict=True) if v is Paced.ALLOW]
    # In any window [allowed[i], allowed[j]] of length T: at most burst + per_s * T.
    for i, first in enumerate(allowed):
        for j in range(i, len(allowed)):
            assert j - i + 1 <= pace.bound(allowed[j] - first) + 1e-6
    told = [t for t, v in zip(times, verdicts, strict=True) if v is Paced.TELL]
    # The notice: at most once per window...
    assert all(b - a >= pace.notice_every_s for a, b in itertools.pairwise(told))
    # ...and every refusal without one comes inside the window of the notice before it.
    last_told = None
    for now, verdict in zip(times, verdicts, strict=True):
        if verdict is Paced.TELL:
            last_told = now
        elif verdict is Paced.QUIET:
            assert last_told is not None and now - last_told < pace.notice_every_s


def test_per_person_counts_each_person_of_each_bot_apart_and_forgets_the_oldest() -> None:
    now = [0.0]
    limit = PerPerson(Pace(1, 0.1, 10.0), keep=2, clock=lambda: now[0])
    assert limit.check(1, 1) == (Paced.ALLOW, 0)
    assert limit.check(2, 1) == (Paced.ALLOW, 0)  # another bot
    assert limit.check(1, 1) == (Paced.TELL, 0)
    assert limit.check(1, 1) == (Paced.QUIET, 0)
    assert limit.check(1, 1) == (Paced.QUIET, 0)
    now[0] = 10.0
    # The next notice says how many went unanswered since the last one.
    assert limit.check(1, 1) == (Paced.ALLOW, 0)
    assert limit.check(1, 1) == (Paced.TELL, 2)
    assert limit.check(1, 2)[0] is Paced.ALLOW and limit.check(1, 3)[0] is Paced.ALLOW
    assert limit.check(1, 1)[0] is Paced.ALLOW  # keep=2: person 1 was forgotten


def test_each_notice_is_written_in_both_languages_and_renders() -> None:
    notices = ("slow_down", "welcome_again", "button_outdated")
    for lang in ("en", "fa"):
        for key in notices:
            assert render(key, lang) == DEFAULTS[lang][key]
    # Persian prose with no Latin run that would need isolating.
    assert not any(c.isascii() and c.isalpha() for key in notices for c in DEFAULTS["fa"][key])


# The handlers, with a clock the test moves.


def content_row(code: str = CODE) -> dict[str, Any]:
    return {
        "id": int(code[-3:]),
        "code": code,
        "kind": "document",
        "items": [{"kind": "document", "file_id": f"FILE-{code}"}],
        "caption": None,
        "protect": False,
        "auto_delete_s": 0,
        "enabled": True,
        "gate_content_id": None,
        "gate_ref": None,
        "gate_checks": 0,
        "pending": [],
    }


def paced_visitor(
    config: BotConfig | None = None,
) -> tuple[Visitor, ScriptedTelegram, ScriptedReads, list[float]]:
    """A visitor handler with no gate whose paces read a clock the test sets."""
    visitor = Visitor(StaticConfig(config or BotConfig()), MembershipCache())
    now = [0.0]
    visitor.taps = PerPerson(TAPS, clock=lambda: now[0])
    visitor.welcomes = PerPerson(WELCOMES, clock=lambda: now[0])
    reads = ScriptedReads()
    reads.on(BY_CODE, lambda bot, code, user: content_row(code))
    return visitor, ScriptedTelegram(), reads, now


async def test_thirty_links_two_seconds_apart_bring_thirty_files_in_order() -> None:
    visitor, telegram, reads, now = paced_visitor()
    files = []
    for n in range(1, 31):
        now[0] = n * 2.0
        ctx = context(telegram, reads, USER)
        await visitor.start(message(USER, f"/start Episode{n:03}"), ctx)
        files += [c.params["document"] for c in sent(ctx, "sendDocument")]
        assert sent(ctx, "sendMessage") == []
    assert files == [f"FILE-Episode{n:03}" for n in range(1, 31)]


async def test_a_script_gets_the_burst_and_one_notice_in_the_person_s_language(
    caplog: pytest.LogCaptureFixture,
) -> None:
    visitor, telegram, reads, now = paced_visitor()
    files, notices = 0, []
    caplog.set_level(logging.INFO, logger=gate_visitor.__name__)
    for n in range(200):
        ctx = context(telegram, reads, USER)
        await visitor.start(message(USER, f"/start Episode{n % 999:03}", language="fa"), ctx)
        files += len(sent(ctx, "sendDocument"))
        notices += [c.params["text"] for c in sent(ctx, "sendMessage")]
    assert files == TAPS.burst
    assert notices == [DEFAULTS["fa"]["slow_down"]]
    [line] = [r.getMessage() for r in caplog.records if "faster than the pace" in r.getMessage()]
    assert f"bot 1000: user {USER} opens links" in line
    # Half a minute on, one more notice, which counts the taps refused without a word.
    now[0] = TAPS.notice_every_s
    for _ in range(TAPS.burst + 1):
        await visitor.start(message(USER, f"/start {CODE}"), context(telegram, reads, USER))
    assert "179 refused without a word" in caplog.records[-1].getMessage()


async def test_a_second_message_inside_the_welcome_s_window_gets_one_short_answer() -> None:
    visitor, telegram, reads, now = paced_visitor()
    answers = []
    for n in range(10):
        ctx = context(telegram, reads, USER)
        await visitor.welcome(message(USER, f"hello {n}"), ctx)
        answers += [c.params["text"] for c in sent(ctx, "sendMessage")]
    assert answers == [render("welcome", "en"), DEFAULTS["en"]["welcome_again"]]
    now[0] = WELCOMES.notice_every_s
    ctx = context(telegram, reads, USER)
    await visitor.welcome(message(USER, "hello again"), ctx)
    assert [c.params["text"] for c in sent(ctx, "sendMessage")] == [render("welcome", "en")]


async def test_a_button_nothing_handles_is_answered_with_a_word() -> None:
    visitor, telegram, reads, _ = paced_visitor()
    ctx = context(telegram, reads, USER)
    await visitor.stray_button(button(USER, "zz:old"), ctx)
    [answer] = sent(ctx, "answerCallbackQuery")
    assert answer.params["text"] == DEFAULTS["en"]["button_outdated"]


class NoLinks(ScriptedTelegram):
    """The bot is admin enough to see members but may not make invite links."""

    async def create_chat_invite_link(self, chat_id: int | str, **params: Any) -> dict[str, Any]:
        self.calls.append(("createChatInviteLink", {"chat_id": chat_id, **params}))
        answer = {"ok": False, "error_code": 400, "description": "Bad Request: not enough rights"}
        raise error_from_answer("createChatInviteLink", 400, answer)


async def test_a_private_channel_nobody_can_be_sent_to_join_lets_the_visitor_through() -> None:
    """The gate listed it with no button: a dead end for the visitor, and no word to the owner."""
    config = BotConfig(gate=(channel(-1001, "Private", None),))
    visitor = Visitor(StaticConfig(config), MembershipCache())
    reads = ScriptedReads()
    reads.on(BY_CODE, lambda bot, code, user: content_row(code))
    telegram = NoLinks()
    ctx = context(telegram, reads, USER)
    await visitor.start(message(USER, f"/start {CODE}"), ctx)
    assert len(sent(ctx, "sendDocument")) == 1
    done = Written()
    for write in ctx.uow.writes:
        await write(cast(Any, done))
    assert [args[2:] for _, args in done.statements if NO_LINK in args] == [
        ("missing_rights", ["can_invite_users"], NO_LINK)
    ]


class Written:
    """Stands for the commit's connection: records what the in-order writes execute."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, tuple[Any, ...]]] = []

    async def execute(self, sql: str, *args: Any) -> None:
        self.statements.append((sql, args))
