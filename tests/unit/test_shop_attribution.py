"""The attribution rules: which order a transfer pays, and the exact amounts orders ask for."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsorbot.features.shop.attribution import (
    CLOCK_SKEW,
    MAX_TAIL,
    MICRO,
    Candidate,
    NoTailLeft,
    attribute,
    due_for,
    over_payment,
    pick_due,
)
from sponsorbot.features.shop.rules import STATES
from tests.examples import examples

T0 = datetime(2026, 12, 1, 12, tzinfo=UTC)


def order(
    order_id: int, state: str = "awaiting_payment", approved: int = 0, deadline: int | None = 24
) -> Candidate:
    """A candidate approved `approved` hours after T0, payable until `deadline` hours after."""
    return Candidate(
        order_id,
        state,
        T0 + timedelta(hours=approved),
        None if deadline is None else T0 + timedelta(hours=deadline),
    )


def test_the_one_order_asking_for_the_amount_gets_the_transfer() -> None:
    assert attribute(T0 + timedelta(hours=1), [order(7)]).order_id == 7


def test_a_transfer_nobody_asked_for_waits_for_the_owner() -> None:
    outcome = attribute(T0, [])
    assert (outcome.order_id, outcome.hold) == (None, "no_match")


def test_two_orders_asking_for_one_amount_leave_it_to_the_owner() -> None:
    outcome = attribute(T0 + timedelta(hours=1), [order(1), order(2, "partly_paid")])
    assert (outcome.order_id, outcome.hold) == (None, "ambiguous")


def test_a_transfer_made_before_the_approval_pays_nothing() -> None:
    early = T0 - CLOCK_SKEW - timedelta(seconds=1)
    assert attribute(early, [order(1)]).hold == "too_early"
    # Clocks differ a little: two minutes before the approval still counts.
    assert attribute(T0 - CLOCK_SKEW, [order(1)]).order_id == 1


def test_an_expired_order_takes_only_what_was_paid_before_its_deadline() -> None:
    expired = order(3, "expired", deadline=24)
    assert attribute(T0 + timedelta(hours=23), [expired]).order_id == 3
    assert attribute(T0 + timedelta(hours=25), [expired]).hold == "no_match"


def test_a_paid_or_cancelled_order_takes_nothing_more() -> None:
    for state in ("paid", "running", "completed", "cancelled", "rejected", "refunded"):
        assert attribute(T0 + timedelta(hours=1), [order(4, state)]).hold == "no_match"


candidates = st.lists(
    st.builds(
        order,
        st.integers(1, 50),
        st.sampled_from(STATES),
        st.integers(-5, 5),
        st.none() | st.integers(-5, 30),
    ),
    max_size=6,
    unique_by=lambda c: c.order_id,
)


@settings(max_examples=examples(200), deadline=None)
@given(candidates, st.integers(-10, 40))
def test_a_transfer_goes_to_one_order_that_could_take_it_or_to_the_owner(
    found: list[Candidate], hours: int
) -> None:
    at = T0 + timedelta(hours=hours)
    outcome = attribute(at, found)
    assert (outcome.order_id is None) != (outcome.hold is None)
    could = [
        c
        for c in found
        if c.approved_at - CLOCK_SKEW <= at
        and (
            c.state in ("awaiting_payment", "partly_paid")
            or (c.state == "expired" and c.deadline is not None and at <= c.deadline)
        )
    ]
    if outcome.order_id is not None:
        assert [c.order_id for c in could] == [outcome.order_id]
    else:
        assert len(could) != 1


def test_amounts_carry_the_tail_in_both_coins() -> None:
    due = due_for(Decimal("25"), Decimal("0.25"), 417)
    assert due.usdt == Decimal("25.000417")
    assert due.trx == Decimal("100.000417")
    assert due_for(Decimal("25"), None, 417).trx is None


@settings(max_examples=examples(200), deadline=None)
@given(
    st.decimals(Decimal("0.01"), Decimal("5000"), places=2),
    st.none() | st.decimals(Decimal("0.05"), Decimal("2"), places=4),
    st.sets(st.integers(1, MAX_TAIL), max_size=200),
    st.integers(0, 2**32),
)
def test_a_new_amount_is_never_one_an_open_order_asks_for(
    left: Decimal, rate: Decimal | None, tails: set[int], seed: int
) -> None:
    taken = [due_for(left, rate, tail) for tail in tails]
    # Other prices too: 25.000417 for one order must not be 25.000317 + 100 µ for another.
    taken += [due_for(left + MICRO * 100, rate, tail) for tail in tails]
    usdt = {d.usdt for d in taken}
    trx = {d.trx for d in taken if d.trx is not None}
    due = pick_due(left, rate, usdt, trx, random.Random(seed))
    assert 1 <= due.tail <= MAX_TAIL
    assert due.usdt not in usdt and due.usdt == left + MICRO * due.tail
    if rate is None:
        assert due.trx is None
    else:
        assert due.trx is not None and due.trx not in trx


def test_when_every_tail_is_taken_there_is_no_amount_left() -> None:
    left = Decimal("10")
    taken = {due_for(left, None, tail).usdt for tail in range(1, MAX_TAIL + 1)}
    with pytest.raises(NoTailLeft):
        pick_due(left, None, taken, set())


def test_the_tails_are_not_an_over_payment() -> None:
    assert over_payment(Decimal("10.000417"), Decimal("10")) == 0
    assert over_payment(Decimal("12.25"), Decimal("10")) == Decimal("2.25")
