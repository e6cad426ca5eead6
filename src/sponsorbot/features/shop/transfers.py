"""The shop's transfers as the owner reads them: typed, frozen results of the service's transfer
methods (a page of transfers, one transfer, one just assigned or sent back) instead of dicts.

A transfer is what the chain showed coming into a shop's address; its claims are the orders
whose advertiser (or the owner) sent its hash. Addresses are in Base58 and money is a decimal
string, as for payments (`orders.moved`); a `Record`'s fields still read by name
(`transfer["state"]`) for the callers written when the results were dicts (the tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sponsorbot.features.service import Record
from sponsorbot.features.shop.orders import moved


@dataclass(frozen=True, slots=True)
class Claim(Record):
    """An order whose advertiser (or the owner) sent a transfer's hash, and what the verifier
    made of that hash."""

    order_id: int
    bot_id: int
    status: str
    reason: str | None
    submitted_at: datetime

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Claim:
        """A claim from its JSON object (queries.CLAIMS builds one per hash submitted, which
        carries its time as ISO 8601 text)."""
        values = cls.values_of(data)
        values["submitted_at"] = datetime.fromisoformat(data["submitted_at"])
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Transfer(Record):
    """One transfer into a shop's address, as the chain showed it, and where it went: credited
    to an order (`matched_by` its exact amount, the owner, or its hash), waiting for the owner
    (`reason` why), or sent back; with the orders that claimed it."""

    id: int
    network: str
    tx_hash: str
    coin: str
    amount: str
    from_address: str | None
    to_address: str
    block_time: datetime
    state: str
    reason: str | None
    order_bot_id: int | None
    order_id: int | None
    credited_usdt: str | None
    matched_by: str | None
    seen_at: datetime
    decided_at: datetime | None
    decided_by: str | None
    note: str | None
    claims: tuple[Claim, ...]

    @classmethod
    def of(cls, row: Mapping[str, Any], claims: tuple[Claim, ...]) -> Transfer:
        """A transfer from its row (queries.TRANSFER or TRANSFERS), with its claims."""
        return cls(**moved(cls, row), claims=claims)


@dataclass(frozen=True, slots=True)
class TransferPage(Record):
    """A page of transfers, newest first; `next_before` lists the page after it (None at the
    end)."""

    items: tuple[Transfer, ...]
    next_before: int | None
