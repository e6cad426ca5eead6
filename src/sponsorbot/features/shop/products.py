"""The shop's products as the owner reads them: typed, frozen results of the service's product
methods (the list, one product, one just added or changed) instead of dicts.

The price is a decimal string (`rules.show`), as the panel and the owner API show it; a
`Record`'s fields still read by name (`product["title"]`) for the callers written when the
results were dicts (the tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sponsorbot.features.service import Record
from sponsorbot.features.shop.rules import show


@dataclass(frozen=True, slots=True)
class Product(Record):
    """What advertisers book in a bot, priced in USDT: a gate slot for `joins` joins, a
    broadcast post, or a banner shown for `days` days; on sale while `active`, listed by
    `position`. The Persian title and description are empty where the owner gave none."""

    id: int
    bot_id: int
    kind: str
    title: str
    description: str
    price_usdt: str
    joins: int | None
    days: int | None
    active: bool
    position: int
    title_fa: str
    description_fa: str

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Product:
        """A product from its row (queries.PRODUCT or PRODUCTS), its price as a string."""
        return cls(**{**cls.values_of(row), "price_usdt": show(row["price_usdt"])})
