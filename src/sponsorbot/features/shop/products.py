"""The shop's products: a draft as the owner describes one and its checks, and the typed, frozen
results of the service's product methods (the list, one product, one just added or changed).

The price is a decimal string (`rules.show`), as the panel and the owner API show it; a
`Record`'s fields still read by name (`product["title"]`) for the callers written when the
results were dicts (the tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sponsorbot.features.errors import Invalid
from sponsorbot.features.service import Record
from sponsorbot.features.shop.rules import KINDS, MoneyError, parse_price, show

MAX_TITLE = 100
MAX_DESCRIPTION = 1000


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


@dataclass(frozen=True, slots=True)
class ProductDraft:
    """A product as the owner describes it."""

    kind: str
    title: str
    price_usdt: str | Decimal
    description: str = ""
    joins: int | None = None
    days: int | None = None
    active: bool = True
    position: int = 0
    # In Persian, both optional: a Persian advertiser reads these where they are given.
    title_fa: str = ""
    description_fa: str = ""


def check_product(draft: ProductDraft) -> tuple[Any, ...]:
    """The product's columns; Invalid, with a code, for anything unusable."""
    if draft.kind not in KINDS:
        raise Invalid(f"a product is one of {', '.join(KINDS)}", code="product_kind")
    title = draft.title.strip()
    if not 1 <= len(title) <= MAX_TITLE:
        raise Invalid(f"the title is 1 to {MAX_TITLE} characters", code="product_title")
    if len(draft.description) > MAX_DESCRIPTION:
        raise Invalid(f"the description is at most {MAX_DESCRIPTION} characters")
    title_fa = draft.title_fa.strip()
    if len(title_fa) > MAX_TITLE:
        raise Invalid(
            f"the Persian title is at most {MAX_TITLE} characters", code="product_title_fa"
        )
    if len(draft.description_fa) > MAX_DESCRIPTION:
        raise Invalid(f"the Persian description is at most {MAX_DESCRIPTION} characters")
    try:
        price = parse_price(draft.price_usdt)
    except MoneyError as exc:
        raise Invalid(str(exc), code="product_price") from None
    joins = draft.joins if draft.kind == "gate_slot" else None
    days = draft.days if draft.kind == "banner" else None
    if draft.kind == "gate_slot" and not (joins and 1 <= joins <= 10_000_000):
        raise Invalid("a gate slot delivers 1 to 10,000,000 joins", code="product_joins")
    if draft.kind == "banner" and not (days and 1 <= days <= 365):
        raise Invalid("a banner is shown for 1 to 365 days", code="product_days")
    return (
        draft.kind,
        title,
        draft.description.strip(),
        price,
        joins,
        days,
        draft.active,
        draft.position,
        title_fa,
        draft.description_fa.strip(),
    )
