"""The TRX price in USDT: CoinGecko, Kraken and Binance asked together, kept five minutes.

The rate is locked into an order when it is approved, so it must be exact: every number is a
``Decimal`` parsed from the answer's text (JSON floats included), never a float. The USD price
of TRX stands for USDT per TRX.

One source is never enough (docs/adr/0018-tron-trust.md): an outage page that still parses or a
delisted pair would be locked into an order for weeks. A quote needs two sources whose prices
agree within :data:`AGREEMENT`; otherwise there is no price, and the owner approves later.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import statistics
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, Final

import aiohttp

__all__ = ["AGREEMENT", "PriceSources", "PriceUnavailable", "Quote", "agreeing"]

log = logging.getLogger("sponsorbot.tron")

DEFAULT_TTL: Final = timedelta(minutes=5)
# The most two sources may differ, as a fraction of the lower price. USD and USDT prices of
# TRX differ by far less; a wider gap means one of them is wrong or stale.
AGREEMENT: Final = Decimal("0.03")
_MAX_REASON_CHARS: Final = 120


@dataclass(frozen=True)
class Quote:
    """A rate (USDT per TRX), the agreeing sources it came from ("coingecko+kraken"), and
    when it was fetched."""

    rate: Decimal
    source: str
    at: datetime


class PriceUnavailable(Exception):
    """No two sources agreed on a price; the message says why and names each failure."""


class _BadAnswer(Exception):
    """One source's answer was unusable (caught per source, never leaves this module)."""


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _price(value: object) -> Decimal:
    """A positive finite price from a JSON number (already Decimal) or a decimal string."""
    if isinstance(value, bool) or not isinstance(value, (Decimal, int, str)):
        raise _BadAnswer(f"not a price: {value!r}"[:_MAX_REASON_CHARS])
    try:
        price = Decimal(value)
    except InvalidOperation:
        raise _BadAnswer(f"not a price: {value!r}"[:_MAX_REASON_CHARS]) from None
    if not price.is_finite() or price <= 0:
        raise _BadAnswer(f"not a positive price: {value!r}"[:_MAX_REASON_CHARS])
    return price


def _coingecko(answer: Any) -> Decimal:
    # {"tron": {"usd": 0.2873}}
    tron = answer.get("tron") if isinstance(answer, Mapping) else None
    if not isinstance(tron, Mapping) or "usd" not in tron:
        raise _BadAnswer("no tron.usd in the answer")
    return _price(tron["usd"])


def _kraken(answer: Any) -> Decimal:
    # {"error": [], "result": {"TRXUSD": {"c": ["0.287300", "123.4"], ...}}}; "c" is the last
    # trade: [price, lot volume].
    if not isinstance(answer, Mapping):
        raise _BadAnswer("the answer is not a JSON object")
    errors = answer.get("error")
    if errors:
        raise _BadAnswer(f"error {errors!r}"[:_MAX_REASON_CHARS])
    result = answer.get("result")
    if not isinstance(result, Mapping):
        raise _BadAnswer("no result in the answer")
    # Kraken may key the result by its own pair name; one pair was asked for, so take it.
    ticker = result.get("TRXUSD")
    if ticker is None and len(result) == 1:
        ticker = next(iter(result.values()))
    last = ticker.get("c") if isinstance(ticker, Mapping) else None
    if not isinstance(last, list) or not last:
        raise _BadAnswer("no TRXUSD last trade in the answer")
    return _price(last[0])


def _binance(answer: Any) -> Decimal:
    # {"symbol": "TRXUSDT", "price": "0.28730000"}
    if not isinstance(answer, Mapping) or answer.get("symbol") != "TRXUSDT":
        raise _BadAnswer("no TRXUSDT price in the answer")
    return _price(answer.get("price"))


@dataclass(frozen=True)
class _Source:
    name: str
    base_url: str
    path: str
    params: Mapping[str, str]
    read: Callable[[Any], Decimal]


class PriceSources:
    """The three public price sources over the process's shared HTTP session."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        coingecko_url: str,
        kraken_url: str,
        binance_url: str,
        *,
        ttl: timedelta = DEFAULT_TTL,
        timeout_s: float = 5.0,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        """Ask the sources at these base URLs; ``clock`` gives aware datetimes (tests fake it)."""
        self._session = session
        self._ttl = ttl
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._clock = clock
        self._sources = (
            _Source(
                "coingecko",
                coingecko_url.rstrip("/"),
                "/api/v3/simple/price",
                {"ids": "tron", "vs_currencies": "usd"},
                _coingecko,
            ),
            _Source(
                "kraken", kraken_url.rstrip("/"), "/0/public/Ticker", {"pair": "TRXUSD"}, _kraken
            ),
            _Source(
                "binance",
                binance_url.rstrip("/"),
                "/api/v3/ticker/price",
                {"symbol": "TRXUSDT"},
                _binance,
            ),
        )
        self._quote: Quote | None = None
        # One fetch at a time: callers arriving meanwhile get its result from the cache.
        self._lock = asyncio.Lock()

    def _fresh(self) -> Quote | None:
        quote = self._quote
        if quote is not None and timedelta(0) <= self._clock() - quote.at < self._ttl:
            return quote
        return None

    async def usdt_per_trx(self) -> Quote:
        """The current rate, from the cache if under five minutes old.

        All sources are asked at once. The rate is the median of the largest group that
        agrees (see :func:`agreeing`): of two sources their mean, of three the middle one.
        Raises :class:`PriceUnavailable` when fewer than two answer or no two agree; failures
        are not cached.
        """
        quote = self._fresh()
        if quote is not None:
            return quote
        async with self._lock:
            quote = self._fresh()
            if quote is not None:
                return quote
            # At once: an approval waits for the slowest source, not for three in a row.
            answers = await asyncio.gather(
                *(self._ask(source) for source in self._sources), return_exceptions=True
            )
            rates: dict[str, Decimal] = {}
            failures = []
            for source, answer in zip(self._sources, answers, strict=True):
                if isinstance(answer, _BadAnswer):
                    log.info("TRX price from %s failed: %s", source.name, answer)
                    failures.append(f"{source.name}: {answer}")
                elif isinstance(answer, BaseException):
                    raise answer  # a bug, not an outage: not a reason to refuse quietly
                else:
                    rates[source.name] = answer
            group = agreeing(rates)
            if not group:
                reason = _refusal(rates, failures)
                log.warning("%s", reason)
                raise PriceUnavailable(reason)
            rate = statistics.median(rates[name] for name in group)
            self._quote = Quote(rate, "+".join(group), self._clock())
            return self._quote

    async def _ask(self, source: _Source) -> Decimal:
        body = await _guarded(self._get(source))
        try:
            # parse_float keeps CoinGecko's JSON numbers exact.
            answer = json.loads(body, parse_float=Decimal)
        except (ValueError, RecursionError):
            raise _BadAnswer("the answer is not JSON") from None
        return source.read(answer)

    async def _get(self, source: _Source) -> bytes:
        async with self._session.get(
            source.base_url + source.path, params=dict(source.params), timeout=self._timeout
        ) as resp:
            if resp.status != 200:
                raise _BadAnswer(f"HTTP {resp.status}")
            return await resp.read()


def agreeing(rates: Mapping[str, Decimal]) -> tuple[str, ...]:
    """The names of the largest group of sources whose prices all agree: the highest at most
    :data:`AGREEMENT` above the lowest. Of equal groups, the one with the smallest spread
    (then the first in order); none, when no two agree. So one wrong source among three is
    outvoted, and a source alone is never a price."""
    for size in range(len(rates), 1, -1):
        spreads = {
            group: _spread([rates[name] for name in group])
            for group in itertools.combinations(rates, size)
        }
        # The tightest group of this size (the first of equals) agrees if any does.
        tightest = min(spreads, key=spreads.__getitem__)
        if spreads[tightest] <= AGREEMENT:
            return tightest
    return ()


def _spread(prices: Sequence[Decimal]) -> Decimal:
    return (max(prices) - min(prices)) / min(prices)


def _refusal(rates: Mapping[str, Decimal], failures: Sequence[str]) -> str:
    """Why there is no price, on one line: too few answers, or how far apart they are."""
    failed = f" ({'; '.join(failures)})" if failures else ""
    if not rates:
        return f"no TRX price: no source answered{failed}"
    if len(rates) == 1:
        only = next(iter(rates))
        return f"no TRX price: only {only} answered, and a price needs two that agree{failed}"
    seen = ", ".join(f"{name} {rate}" for name, rate in rates.items())
    return f"no TRX price: the sources disagree by more than {AGREEMENT:.0%} ({seen}){failed}"


async def _guarded(call: Awaitable[bytes]) -> bytes:
    """Turn transport failures into :class:`_BadAnswer` with a short reason."""
    try:
        return await call
    except TimeoutError:
        raise _BadAnswer("timed out") from None
    except (aiohttp.ClientError, OSError) as exc:
        reason = " ".join(str(exc).split())[:_MAX_REASON_CHARS]
        raise _BadAnswer(
            f"{type(exc).__name__}: {reason}" if reason else type(exc).__name__
        ) from None
