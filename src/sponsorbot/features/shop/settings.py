"""A bot's shop settings: what the owner sets (`ShopConfig`, checked and stored by
ShopService.save_settings) and what they read back (`ShopSettings`, a typed, frozen result
instead of a dict).

Read back, the TronGrid key shows only as its last 4 characters and the address in Base58; a
`Record`'s fields still read by name (`settings["address"]`) for the callers written when the
results were dicts (the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

from sponsorbot.features.service import Record

# TronGrid calls one shop may make in an hour: a check is two, and an advertiser's junk hashes
# must not use up the key (or the server's) for every other shop.
CALLS_PER_HOUR = 3000


@dataclass(frozen=True, slots=True)
class ShopConfig:
    """The shop settings an owner sets on a bot. `api_key`: None keeps the stored key, an
    empty string removes it."""

    enabled: bool = False
    network: str = "mainnet"
    address: str = ""
    accept_usdt: bool = True
    accept_trx: bool = True
    api_key: str | None = None
    pay_within_h: int = 24


@dataclass(frozen=True, slots=True)
class ShopSettings(Record):
    """A bot's shop as the owner reads it: the TronGrid key only as its last 4 characters, and
    `key_unreadable` when the stored key can no longer be decrypted; the TronGrid calls made
    this hour against the shop's budget."""

    bot_id: int
    enabled: bool
    network: str
    address: str | None
    accept_usdt: bool
    accept_trx: bool
    api_key_tail: str | None
    key_unreadable: bool
    pay_within_h: int
    trongrid_calls: int
    trongrid_budget: int = CALLS_PER_HOUR
