"""The crediting rules: once per person, kept after the window, order never matters."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from sponsorbot.features.botconfig import GateChannel, with_campaigns
from sponsorbot.features.campaigns.rules import (
    MAX_LEAVES,
    Counts,
    Join,
    Leave,
    Member,
    Verdict,
    apply,
    count,
    verdict,
)
from sponsorbot.features.campaigns.service import link_name
from sponsorbot.features.campaigns.watch import next_status
from tests.examples import examples

T0 = datetime(2026, 11, 1, tzinfo=UTC)
DAY = timedelta(hours=24)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def fold(changes: Sequence[Join | Leave]) -> Member:
    member = Member()
    for change in changes:
        member = apply(member, change)
    return member


def test_a_join_through_the_gate_is_credited_once_and_kept_after_the_window() -> None:
    member = fold([Join(at(0), 1, True), Join(at(5), 2, True)])
    assert (member.gate_joined_at, member.bot_id) == (at(0), 1)
    assert verdict(member, DAY, at(60)) is Verdict.WAITING
    assert verdict(member, DAY, at(24 * 60)) is Verdict.KEPT


def test_leave_and_rejoin_is_one_credit_and_left_inside_the_window() -> None:
    member = fold([Join(at(0), 1, True), Leave(at(30)), Join(at(40), 1, True)])
    assert member.gate_joined_at == at(0)
    assert verdict(member, DAY, at(3 * 24 * 60)) is Verdict.LEFT


def test_a_leave_after_the_window_keeps_the_join() -> None:
    member = fold([Join(at(0), 1, True), Leave(at(24 * 60 + 1))])
    assert verdict(member, DAY, at(2 * 24 * 60)) is Verdict.KEPT


def test_outside_joins_are_apart_and_a_leave_before_the_join_does_not_count() -> None:
    assert verdict(fold([Join(at(0), 1, False)]), DAY, at(0)) is Verdict.OUTSIDE
    member = fold([Leave(at(-10)), Join(at(0), 1, True)])
    assert member.left_at is None
    assert verdict(fold([Leave(at(0))]), DAY, at(0)) is Verdict.NONE
    # Outside first, then through the gate: credited, and judged from the gate join.
    member = fold([Join(at(0), 2, False), Leave(at(1)), Join(at(2), 1, True)])
    assert member.left_at is None and verdict(member, DAY, at(2 + 24 * 60)) is Verdict.KEPT


def test_counts_and_progress() -> None:
    members = [
        fold([Join(at(0), 1, True)]),
        fold([Join(at(0), 1, True), Leave(at(10))]),
        fold([Join(at(23 * 60), 1, True)]),
        fold([Join(at(0), 1, False)]),
    ]
    counts = count(members, DAY, at(24 * 60))
    assert counts == Counts(joins=3, kept=1, left=1, waiting=1, outside_gate=1)
    assert counts.progress("kept") == 1 and counts.progress("joins") == 3


changes = st.lists(
    st.one_of(
        st.builds(
            Join,
            st.integers(0, 3000).map(at),
            st.integers(1, 3),
            st.booleans(),
        ),
        st.builds(Leave, st.integers(0, 3000).map(at)),
    ),
    max_size=12,
)


@settings(max_examples=examples(300), deadline=None)
@given(changes, st.randoms(use_true_random=False), st.integers(0, 4000))
def test_any_order_and_any_duplicate_gives_the_same_record(
    seq: list[Join | Leave], rnd: random.Random, now: int
) -> None:
    shuffled = list(seq) + list(seq[: len(seq) // 2])  # some updates arrive twice
    rnd.shuffle(shuffled)
    one, other = fold(seq), fold(shuffled)
    assert one == other
    assert verdict(one, DAY, at(now)) is verdict(other, DAY, at(now))


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.integers(0, 10_000), max_size=40))
def test_the_kept_leaves_are_the_earliest_whatever_the_order(minutes: list[int]) -> None:
    leaves = [Leave(at(m)) for m in minutes]
    member = fold(leaves)
    assert member == fold(list(reversed(leaves)))
    assert list(member.leaves) == sorted({at(m) for m in minutes})[:MAX_LEAVES]


def channel(chat_id: int, **fields: object) -> GateChannel:
    values: dict[str, object] = {
        "chat_id": chat_id,
        "title": f"c{chat_id}",
        "username": f"c{chat_id}",
        "invite_link": None,
        "invite_requests": False,
        "request_counts": False,
    }
    values.update(fields)
    return GateChannel(**values)  # type: ignore[arg-type]


def slot(campaign_id: int, chat_id: int, position: str) -> dict[str, object]:
    return {
        "id": campaign_id,
        "chat_id": chat_id,
        "position": position,
        "join_requests": False,
        "invite_link": f"https://t.me/+camp{campaign_id}",
        "title": f"c{chat_id}",
        "username": f"c{chat_id}",
    }


def test_campaign_slots_go_first_or_last_with_their_own_link() -> None:
    gate = [channel(1), channel(2)]
    merged = with_campaigns(gate, [slot(10, 3, "first"), slot(11, 4, "last"), slot(12, 2, "last")])
    assert [c.chat_id for c in merged] == [3, 1, 2, 4]
    assert merged[0].url == "https://t.me/+camp10"
    # A channel already in the gate keeps its place and shows the campaign's link.
    assert merged[2].url == "https://t.me/+camp12" and merged[2].campaign_id == 12
    assert merged[1].url == "https://t.me/c1"
    # Two campaigns on one channel: one slot, the oldest campaign's.
    twice = with_campaigns([], [slot(5, 9, "first"), slot(6, 9, "last")])
    assert [(c.chat_id, c.campaign_id) for c in twice] == [(9, 5)]


def test_link_names_are_cut_for_telegram_only() -> None:
    assert link_name("Short") == "Short"
    long = "x" * 40
    assert len(link_name(long)) == 32 and link_name(long).endswith("…")


def test_the_watch_moves_campaigns_when_their_time_comes() -> None:
    base = {
        "status": "running",
        "ends_at": None,
        "goal_joins": 10,
        "progress": 9,
        "starts_at": at(0),
    }
    assert next_status(base, at(5)) is None
    assert next_status({**base, "progress": 10}, at(5)) == "reached"
    assert next_status({**base, "ends_at": at(5)}, at(5)) == "ended"
    assert next_status({**base, "status": "paused", "ends_at": at(5)}, at(6)) == "ended"
    assert next_status({**base, "status": "scheduled", "starts_at": at(10)}, at(5)) is None
    assert next_status({**base, "status": "scheduled", "starts_at": at(10)}, at(10)) == "running"
    assert next_status({**base, "goal_joins": None, "progress": 99}, at(5)) is None
