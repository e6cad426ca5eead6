"""Which order a transfer pays: the shop's attribution rules, pure (no I/O, no clock).

Every open order asks for its own exact amount: what is left of its price plus a *tail* of 1 to
9,999 millionths that no other open order of the same address asks for (the same tail is added
to the TRX amount, in sun). A transfer pays the order whose exact amount it is, whoever sends
its hash, and only if it was made after that order's approval and before its deadline. Any
other transfer (a part payment, an over-payment, an amount two orders share, one made too
early) is never credited by itself: it waits for the owner, who assigns it or gives it back.
The chain is public and the address is shared, so who sends a hash first proves nothing.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Literal

from sponsorbot.features.shop.rules import PAYABLE, USDT_PLACES, trx_to_ask

# A transfer's block time may be a little before the approval (clocks differ).
CLOCK_SKEW = timedelta(minutes=2)
MAX_TAIL = 9_999
MICRO = USDT_PLACES
# Below this, what was paid beyond the price is the tails themselves, not an over-payment.
TAIL_CEILING = MICRO * (MAX_TAIL + 1)

Hold = Literal["no_match", "ambiguous", "too_early"]


class NoTailLeft(Exception):
    """Every tail is taken by an open order of this address (9,999 of them)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """An order whose exact amount equals the transfer's, as the database holds it now."""

    order_id: int
    state: str
    approved_at: datetime
    deadline: datetime | None


@dataclass(frozen=True, slots=True)
class Attribution:
    """The outcome: the order credited, or why the transfer waits for the owner."""

    order_id: int | None = None
    hold: Hold | None = None


def attribute(block_time: datetime, candidates: Sequence[Candidate]) -> Attribution:
    """The order a transfer made at `block_time` pays, among the orders asking for its amount.

    An order counts while it is payable, or once expired if the transfer was made before its
    deadline (confirmed late). Exactly one such order gets it; none or several: the owner's.
    """
    in_time = [c for c in candidates if c.approved_at - CLOCK_SKEW <= block_time]
    eligible = [
        c
        for c in in_time
        if c.state in PAYABLE
        or (c.state == "expired" and c.deadline is not None and block_time <= c.deadline)
    ]
    if len(eligible) == 1:
        return Attribution(order_id=eligible[0].order_id)
    if len(eligible) > 1:
        return Attribution(hold="ambiguous")
    if candidates and not in_time:
        return Attribution(hold="too_early")
    return Attribution(hold="no_match")


@dataclass(frozen=True, slots=True)
class Due:
    """What an order asks for now: exact amounts, the TRX one only if TRX is taken."""

    usdt: Decimal
    trx: Decimal | None
    tail: int


def due_for(left: Decimal, rate: Decimal | None, tail: int) -> Due:
    """`left` USDT (and its TRX at `rate`) plus `tail` millionths of each."""
    extra = MICRO * tail
    trx = trx_to_ask(left, rate) + extra if rate is not None and rate > 0 else None
    return Due(left + extra, trx, tail)


def pick_due(
    left: Decimal,
    rate: Decimal | None,
    taken_usdt: Collection[Decimal],
    taken_trx: Collection[Decimal],
    rng: random.Random | None = None,
) -> Due:
    """Amounts for `left` that no other open order of the address asks for.

    The tail is drawn at random (a guess at the next order's amount is worth nothing), then the
    next free one is taken; `NoTailLeft` only when all 9,999 are in use.
    """
    draw = (rng or random.SystemRandom()).randint(1, MAX_TAIL)
    for step in range(MAX_TAIL):
        tail = (draw - 1 + step) % MAX_TAIL + 1
        due = due_for(left, rate, tail)
        if due.usdt not in taken_usdt and (due.trx is None or due.trx not in taken_trx):
            return due
    raise NoTailLeft("every amount tail of this address is taken by an open order")


def over_payment(paid: Decimal, price: Decimal) -> Decimal:
    """What was paid beyond the price, not counting the tails that made amounts distinct."""
    extra = paid - price
    return extra if extra >= TAIL_CEILING else Decimal(0)
