"""The shop's pure rules: order states and their moves, and the money arithmetic.

Money is `Decimal` throughout. Prices are USDT with 6 places (the token's own precision). A TRX
amount asked for is rounded UP to 2 places, so that paying exactly what was asked is never a
micro-cent short once it is converted back (rounded DOWN to 6 places) at the locked rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from typing import Literal, get_args

USDT_PLACES = Decimal("0.000001")
TRX_ASK_PLACES = Decimal("0.01")
MAX_PRICE = Decimal("1000000")
# A part payment gets this long for the rest, with reminders this long before the end.
PART_PAYMENT_WINDOW = timedelta(hours=48)
REMINDERS = (timedelta(hours=24), timedelta(hours=4))
# A TRX rate is kept this long, then quoted again (the advertiser holds no option on TRX's
# price for the whole time to pay).
RATE_KEPT = timedelta(hours=24)

# The vocabularies as types (the owner API's schema names them) and as tuples to check against.
Kind = Literal["gate_slot", "broadcast", "banner"]
State = Literal[
    "submitted",
    "in_review",
    "awaiting_payment",
    "partly_paid",
    "paid",
    "running",
    "completed",
    "rejected",
    "expired",
    "cancelled",
    "refunded",
]
# held: the transfer is real but not this order's by its amount; it waits for the owner.
PaymentStatus = Literal["checking", "credited", "rejected", "held"]
TransferState = Literal["credited", "unattributed", "returned"]
KINDS: tuple[str, ...] = get_args(Kind)
STATES: tuple[str, ...] = get_args(State)
PAYMENT_STATUSES: tuple[str, ...] = get_args(PaymentStatus)
TRANSFER_STATES: tuple[str, ...] = get_args(TransferState)
# Where each move may start from. Anything else is a 409 naming the order's state.
MOVES: dict[str, tuple[str, ...]] = {
    "approve": ("submitted",),
    "reject": ("submitted", "in_review"),
    "ask_change": ("submitted",),
    "resubmit": ("in_review",),
    "cancel": ("submitted", "in_review", "awaiting_payment", "partly_paid"),
    "mark_paid": ("awaiting_payment", "partly_paid", "expired"),
    "refund": ("partly_paid", "paid", "running", "completed", "expired", "cancelled"),
    "expire": ("awaiting_payment", "partly_paid"),
    "start": ("paid",),
    "complete": ("running",),
}
# Orders a hash may be sent for.
PAYABLE = ("awaiting_payment", "partly_paid")


class MoneyError(ValueError):
    """An amount that cannot be a price."""


def can(move: str, state: str) -> bool:
    """Whether `move` may happen to an order in `state`."""
    return state in MOVES[move]


def parse_price(text: str | Decimal | int) -> Decimal:
    """A USDT price: positive, at most 6 places, below a million."""
    try:
        value = Decimal(str(text).strip().replace(",", "."))
    except InvalidOperation:
        raise MoneyError("the price is not a number") from None
    if not value.is_finite():
        raise MoneyError("the price is not a number")
    if value <= 0:
        raise MoneyError("the price must be more than 0")
    if value >= MAX_PRICE:
        raise MoneyError("the price must be below 1,000,000 USDT")
    if value != value.quantize(USDT_PLACES):
        raise MoneyError("USDT has 6 decimal places at most")
    return value.quantize(USDT_PLACES)


def trx_to_ask(usdt: Decimal, usdt_per_trx: Decimal) -> Decimal:
    """The TRX that pays `usdt` at the locked rate, rounded up to 2 places."""
    if usdt_per_trx <= 0:
        raise MoneyError("the TRX rate must be positive")
    return (usdt / usdt_per_trx).quantize(TRX_ASK_PLACES, rounding=ROUND_CEILING)


def trx_in_usdt(trx: Decimal, usdt_per_trx: Decimal) -> Decimal:
    """What `trx` counts for at the locked rate: rounded down to 6 places."""
    return (trx * usdt_per_trx).quantize(USDT_PLACES, rounding=ROUND_FLOOR)


def show(amount: Decimal) -> str:
    """An amount as people read it: no exponent, no trailing zeros past the point."""
    text = format(amount.normalize(), "f")
    return text if "." not in text else text.rstrip("0").rstrip(".")


@dataclass(frozen=True, slots=True)
class Paid:
    """Where an order stands after a credit."""

    paid: Decimal
    left: Decimal
    extra: Decimal
    state: str
    due_at: datetime | None


def after_credit(
    state: str,
    price: Decimal,
    paid: Decimal,
    credit: Decimal,
    due_at: datetime | None,
    now: datetime,
) -> Paid:
    """Add a credit: paid in full (any excess recorded), or partly paid with 48 hours for the
    rest counted from the first part payment (a later part does not extend it)."""
    total = paid + credit
    if total >= price:
        return Paid(total, Decimal(0), total - price, "paid", due_at)
    return Paid(
        total, price - total, Decimal(0), "partly_paid", due_at or now + PART_PAYMENT_WINDOW
    )


def reminders_due(due_at: datetime, sent: int, now: datetime) -> int:
    """How many of the reminders (24 h, 4 h before the end) should have gone by `now`."""
    due = sum(1 for before in REMINDERS if now >= due_at - before)
    return max(due, sent)
