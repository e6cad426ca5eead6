"""The TRX price each simulated source shows, and which sources are down (and how)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sponsorbot.simulator.readers import read_decimal

SOURCES = ("coingecko", "kraken", "binance")
DOWN_MODES = ("500", "429", "garbage")
DEFAULT_PRICE = "0.2873"


def parse_price(value: Any) -> Decimal:
    """A positive decimal string such as "0.2873" (floats are refused: no binary rounding)."""
    price = read_decimal(value, "price", "0.2873")
    if not price.is_finite() or not 0 < price < 1_000_000:
        raise ValueError(f"price {value!r} must be above zero and below a million")
    return price


def plain(price: Decimal) -> str:
    """The price with the digits it was set with, never in exponent form."""
    return format(price.normalize(), "f")


@dataclass(slots=True)
class Prices:
    """The price of one TRX in USD at each source, and which sources are down (and how)."""

    default: str = DEFAULT_PRICE
    price: dict[str, Decimal] = field(default_factory=dict)
    down: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        start = parse_price(self.default)
        self.price = dict.fromkeys(SOURCES, start)

    def set(self, price: Any, source: str | None = None) -> None:
        """Set the price at ``source``, or at every source when None."""
        value = parse_price(price)
        for name in _sources(source):
            self.price[name] = value

    def take_down(self, mode: str, source: str | None = None) -> None:
        """``source`` (or every source) answers with ``mode``: 500, 429 or garbage."""
        if mode not in DOWN_MODES:
            raise ValueError(f"mode must be one of {', '.join(DOWN_MODES)}")
        for name in _sources(source):
            self.down[name] = mode

    def bring_up(self, source: str | None = None) -> None:
        """``source`` (or every source) answers normally again."""
        for name in _sources(source):
            self.down.pop(name, None)

    def json(self) -> dict[str, Any]:
        """Every source's price and state, as the control API shows them."""
        return {
            name: {"price": plain(self.price[name]), "down": self.down.get(name)}
            for name in SOURCES
        }


def _sources(source: str | None) -> tuple[str, ...]:
    if source in (None, "", "*"):
        return SOURCES
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}")
    return (str(source),)
