"""The shop's orders as the owner reads them: typed, frozen results of the service's order
methods (one order, a page of orders, a page of payments, the orders stuck) instead of dicts.

Addresses are in Base58 and money is a decimal string (`rules.show`), as the panel and the
owner API show them; a `Record`'s fields still read by name (`order["state"]`) for the callers
written when the results were dicts (the team's buttons, the tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sponsorbot.features.service import Record
from sponsorbot.features.shop.rules import show
from sponsorbot.tron.address import to_base58


def base58(address: bytes | None) -> str | None:
    """A stored address (its 21 bytes) as people read it, None for none."""
    return to_base58(bytes(address)) if address else None


def money(amount: Decimal | None) -> str | None:
    """A stored amount as a decimal string, None for none."""
    return show(amount) if amount is not None else None


def moved(result: type[Record], row: Mapping[str, Any]) -> dict[str, Any]:
    """The row's values of the result's fields, for coins that moved on the chain (a payment,
    a transfer): its addresses in Base58 and its amounts as strings."""
    values = result.values_of(row)
    for key in ("from_address", "to_address"):
        values[key] = base58(row[key])
    for key in ("amount", "credited_usdt"):
        values[key] = money(row[key])
    return values


@dataclass(frozen=True, slots=True)
class Payment(Record):
    """A submitted transaction hash and what the verifier made of it. In the payments list,
    also its order's network and its bot's @name."""

    id: int
    order_id: int
    bot_id: int
    tx_hash: str
    source: str
    status: str
    reason: str | None
    coin: str | None
    amount: str | None
    from_address: str | None
    to_address: str | None
    credited_usdt: str | None
    block_time: datetime | None
    checks: int
    last_error: str | None
    next_check_at: datetime
    submitted_at: datetime
    decided_at: datetime | None
    network: str | None = None
    bot_username: str | None = None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Payment:
        """A payment from its row (addresses in Base58, money as strings)."""
        return cls(**moved(cls, row))


@dataclass(frozen=True, slots=True)
class Step(Record):
    """One line of an order's timeline: when, who, what, and its facts."""

    at: datetime
    kind: str
    actor: str
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Order(Record):
    """An order as the owner reads it: what was bought and by whom, the advertiser's material,
    where it stands, what was locked at approval, the money (`left_usdt` still to pay,
    `extra_usdt` paid over the price) and the ad it started. In a list, its bot's @name and
    how many hashes were sent for it; read alone, its payments and whole timeline."""

    id: int
    bot_id: int
    product_id: int | None
    kind: str
    title: str
    joins: int | None
    days: int | None
    user_id: int
    user_name: str
    language: str
    material: dict[str, Any]
    price_usdt: str
    state: str
    note: str | None
    network: str | None
    address: str | None
    accept_usdt: bool | None
    accept_trx: bool | None
    approved_at: datetime | None
    usdt_per_trx: str | None
    rate_source: str | None
    expires_at: datetime | None
    due_at: datetime | None
    reminded: int
    paid_usdt: str
    qr_file_id: str | None
    campaign_id: int | None
    broadcast_id: int | None
    started_at: datetime | None
    ends_at: datetime | None
    ended_at: datetime | None
    report: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime
    due_usdt: str | None
    due_trx: str | None
    start_after: datetime | None
    start_tries: int
    rate_at: datetime | None
    zone: str
    left_usdt: str
    extra_usdt: str
    bot_username: str | None = None
    payment_count: int | None = None
    payments: tuple[Payment, ...] = ()
    timeline: tuple[Step, ...] = ()

    @classmethod
    def of(
        cls,
        row: Mapping[str, Any],
        payments: tuple[Payment, ...] = (),
        timeline: tuple[Step, ...] = (),
    ) -> Order:
        """An order from its row (queries.ORDER or ORDERS), with its payments and timeline
        when it is read alone."""
        values = cls.values_of(row)
        values["address"] = base58(row["address"])
        for key in ("price_usdt", "paid_usdt", "usdt_per_trx", "due_usdt", "due_trx"):
            values[key] = money(row[key])
        price, paid = row["price_usdt"], row["paid_usdt"]
        values["left_usdt"] = show(max(price - paid, Decimal(0)))
        values["extra_usdt"] = show(max(paid - price, Decimal(0)))
        return cls(**values, payments=payments, timeline=timeline)


@dataclass(frozen=True, slots=True)
class OrderPage(Record):
    """A page of orders, newest first; `next_before` lists the page after it (None at the
    end), `counts` is how many orders each state holds (of the bot asked for, or all)."""

    items: tuple[Order, ...]
    next_before: int | None
    counts: dict[str, int]


@dataclass(frozen=True, slots=True)
class PaymentPage(Record):
    """A page of payments, newest first; `next_before` lists the page after it."""

    items: tuple[Payment, ...]
    next_before: int | None


@dataclass(frozen=True, slots=True)
class Stuck(Record):
    """An order whose ad is not out a while after it should be: paid but not started (the
    clock keeps trying; `start_tries` says how often), or running as a broadcast never sent."""

    id: int
    bot_id: int
    state: str
    kind: str
    start_tries: int
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Attention(Record):
    """What the owner should look at (the dashboard's notice): the stuck orders, and how many
    transfers wait for them to assign or send back."""

    stuck: tuple[Stuck, ...]
    waiting_transfers: int
