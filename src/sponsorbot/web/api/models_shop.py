"""The owner API's shop bodies (they make the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sponsorbot.features.shop.rules import Kind, PaymentStatus, State, TransferState
from sponsorbot.web.api.models import BIGINT, Strict

Network = Literal["mainnet", "nile", "shasta"]
# A decimal as a string ("12.5"): money never goes through a float.
Money = str


class ShopSettingsIn(Strict):
    """A bot's shop. `api_key`: omit (or null) to keep the stored TronGrid key, "" to remove it."""

    enabled: bool = False
    network: Network = "mainnet"
    address: str = Field(default="", max_length=64, description="the shop's TRON address (T...)")
    accept_usdt: bool = True
    accept_trx: bool = True
    api_key: str | None = Field(default=None, max_length=200)
    pay_within_h: int = Field(default=24, ge=1, le=720, description="hours to pay once approved")


class ShopSettingsOut(BaseModel):
    """A bot's shop; the TronGrid key only as its last 4 characters."""

    model_config = ConfigDict(from_attributes=True)

    bot_id: int
    enabled: bool
    network: Network
    address: str | None
    accept_usdt: bool
    accept_trx: bool
    api_key_tail: str | None
    key_unreadable: bool = Field(
        default=False,
        description="a TronGrid key is stored but SPONSORBOT_SECRET_KEY no longer opens it: "
        "the server's key is used until a new one is set",
    )
    pay_within_h: int
    trongrid_calls: int = Field(0, description="TronGrid calls made for this shop this hour")
    trongrid_budget: int = Field(
        description="TronGrid calls a shop may make in an hour; hashes wait for the next hour "
        "once it is spent"
    )


class ProductIn(Strict):
    """A product, priced in USDT: a gate slot for `joins` joins, a broadcast post, or a banner
    shown after delivered content for `days` days."""

    kind: Kind
    title: str = Field(min_length=1, max_length=100)
    price_usdt: Money = Field(max_length=20, examples=["25", "12.5"])
    description: str = Field(default="", max_length=1000)
    joins: int | None = Field(default=None, ge=1, le=10_000_000)
    days: int | None = Field(default=None, ge=1, le=365)
    active: bool = True
    position: int = Field(default=0, ge=0, le=1000)
    title_fa: str = Field(default="", max_length=100, description="The title in Persian (optional)")
    description_fa: str = Field(
        default="", max_length=1000, description="The description in Persian (optional)"
    )


class ProductOut(BaseModel):
    """A product."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    bot_id: int
    kind: Kind
    title: str
    description: str
    price_usdt: Money
    joins: int | None
    days: int | None
    active: bool
    position: int
    title_fa: str
    description_fa: str


class PaymentOut(BaseModel):
    """A submitted transaction hash and what the verifier made of it."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    order_id: int
    bot_id: int
    tx_hash: str
    source: str
    status: PaymentStatus
    reason: str | None
    coin: str | None
    amount: Money | None
    from_address: str | None
    to_address: str | None
    credited_usdt: Money | None
    block_time: datetime | None
    checks: int
    last_error: str | None
    submitted_at: datetime
    decided_at: datetime | None


class StepOut(BaseModel):
    """One line of an order's timeline."""

    model_config = ConfigDict(from_attributes=True)

    at: datetime
    kind: str
    actor: str
    data: dict[str, Any]


class OrderOut(BaseModel):
    """An order; amounts in USDT as decimal strings, addresses in Base58."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    bot_id: int
    product_id: int | None
    kind: Kind
    title: str
    joins: int | None
    days: int | None
    user_id: int
    user_name: str
    language: str
    material: dict[str, Any]
    price_usdt: Money
    paid_usdt: Money
    left_usdt: Money
    due_usdt: Money | None = Field(
        None, description="the exact USDT this order asks for now (its own last digits)"
    )
    due_trx: Money | None = Field(None, description="the exact TRX it asks for now, if any")
    extra_usdt: Money
    state: State
    note: str | None
    network: Network | None
    address: str | None
    accept_usdt: bool | None
    accept_trx: bool | None
    approved_at: datetime | None
    usdt_per_trx: Money | None
    rate_source: str | None
    expires_at: datetime | None
    due_at: datetime | None
    campaign_id: int | None
    broadcast_id: int | None
    started_at: datetime | None
    ends_at: datetime | None
    ended_at: datetime | None
    report: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime
    payment_count: int | None = Field(default=None, description="in lists: hashes submitted")
    payments: list[PaymentOut] = Field(default_factory=list, description="one order only")
    timeline: list[StepOut] = Field(default_factory=list, description="one order only")


class OrderPage(BaseModel):
    """A page of orders, newest first; pass `next_before` as `before` for the next."""

    model_config = ConfigDict(from_attributes=True)

    items: list[OrderOut]
    next_before: int | None
    counts: dict[str, int]


class PaymentPage(BaseModel):
    """A page of payments, newest first."""

    model_config = ConfigDict(from_attributes=True)

    items: list[PaymentOut]
    next_before: int | None


class ReasonIn(Strict):
    """Why, in words the advertiser gets (required to reject, ask for a change, mark paid)."""

    reason: str = Field(default="", max_length=500)


class HashIn(Strict):
    """A transaction hash (64 hex characters) or its TronScan link."""

    tx_hash: str = Field(min_length=1, max_length=300)


class ClaimOut(BaseModel):
    """An order whose advertiser (or the owner) sent this transfer's hash."""

    model_config = ConfigDict(from_attributes=True)

    order_id: int
    bot_id: int
    status: PaymentStatus
    reason: str | None
    submitted_at: datetime


class TransferOut(BaseModel):
    """One transfer into a shop's address, as the chain showed it, and where it went."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    network: str
    tx_hash: str
    coin: str
    amount: Money
    from_address: str | None
    to_address: str
    block_time: datetime
    state: TransferState
    reason: str | None = Field(
        description="why it waits for the owner: no_match, ambiguous or too_early"
    )
    order_bot_id: int | None
    order_id: int | None
    credited_usdt: Money | None
    matched_by: str | None = Field(description="amount, owner, or hash (before exact amounts)")
    seen_at: datetime
    decided_at: datetime | None
    decided_by: str | None
    note: str | None
    claims: list[ClaimOut]


class TransferPage(BaseModel):
    """A page of transfers, newest first."""

    model_config = ConfigDict(from_attributes=True)

    items: list[TransferOut]
    next_before: int | None


class AssignIn(Strict):
    """The order to credit a transfer to."""

    order_id: int = Field(ge=1, le=BIGINT)


class NoteIn(Strict):
    """Why, for the record."""

    note: str = Field("", max_length=500)
