"""TRX price sources over real HTTP: two that agree make a price (ADR 0018), the five-minute cache,
Decimal only."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from sponsorbot.config import SettingsError, load_settings
from sponsorbot.tron import PriceSources, PriceUnavailable, Quote
from sponsorbot.tron.prices import agreeing
from tests.loopback import served

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

COINGECKO = "/api/v3/simple/price"
KRAKEN = "/0/public/Ticker"
BINANCE = "/api/v3/ticker/price"


def _json(text: str, status: int = 200) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(text=text, status=status, content_type="application/json")

    return handler


# What each source answers when it is up (shapes of the public APIs).
GOOD = {
    COINGECKO: _json('{"tron":{"usd":0.2873}}'),
    KRAKEN: _json(
        '{"error":[],"result":{"TRXUSD":{"a":["0.287400","1","1.000"],"b":["0.287200","1",'
        '"1.000"],"c":["0.287100","123.4"],"v":["1","2"],"p":["0.28","0.28"],"t":[1,2],'
        '"l":["0.28","0.28"],"h":["0.29","0.29"],"o":"0.2850"}}}'
    ),
    BINANCE: _json('{"symbol":"TRXUSDT","price":"0.28700000"}'),
}


@dataclass
class FakeSources:
    base_url: str = ""
    handlers: dict[str, Handler] = field(default_factory=lambda: dict(GOOD))
    hits: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def paths(self) -> list[str]:
        return [path for path, _ in self.hits]


@pytest.fixture
async def sources() -> AsyncIterator[FakeSources]:
    state = FakeSources()

    async def dispatch(request: web.Request) -> web.StreamResponse:
        state.hits.append((request.path, dict(request.query)))
        return await state.handlers[request.path](request)

    app = web.Application()
    for path in GOOD:
        app.router.add_get(path, dispatch)
    async with served(app) as state.base_url:
        yield state


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client_session:
        yield client_session


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _prices(
    sources: FakeSources, session: aiohttp.ClientSession, clock: Clock, timeout_s: float = 2.0
) -> PriceSources:
    base = sources.base_url
    return PriceSources(session, base, base + "/", base, clock=clock, timeout_s=timeout_s)


def _gecko(price: str) -> Handler:
    return _json('{"tron":{"usd":' + price + "}}")


def _kraken(price: str) -> Handler:
    return _json('{"error":[],"result":{"TRXUSD":{"c":["' + price + '","1"]}}}')


def _binance(price: str) -> Handler:
    return _json('{"symbol":"TRXUSDT","price":"' + price + '"}')


async def test_all_three_are_asked_and_the_median_is_an_exact_decimal(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    clock = Clock()
    quote = await _prices(sources, session, clock).usdt_per_trx()
    # 0.2873, 0.287100 and 0.28700000 agree: the middle one is the rate.
    assert quote == Quote(Decimal("0.287100"), "coingecko+kraken+binance", clock.now)
    assert isinstance(quote.rate, Decimal)
    assert sorted(sources.hits) == sorted(
        [
            (COINGECKO, {"ids": "tron", "vs_currencies": "usd"}),
            (KRAKEN, {"pair": "TRXUSD"}),
            (BINANCE, {"symbol": "TRXUSDT"}),
        ]
    )


async def test_two_that_agree_are_enough_and_their_mean_is_the_rate(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    sources.handlers[COINGECKO] = _json('{"status":{"error_code":429}}', 429)
    quote = await _prices(sources, session, Clock()).usdt_per_trx()
    assert (quote.rate, quote.source) == (Decimal("0.28705"), "kraken+binance")


async def test_one_wrong_source_is_outvoted(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    """L2: an outage page that still parses, a delisted pair: one source far off is not used."""
    sources.handlers[KRAKEN] = _kraken("0.5")
    quote = await _prices(sources, session, Clock()).usdt_per_trx()
    assert (quote.rate, quote.source) == (Decimal("0.28715"), "coingecko+binance")


async def test_a_source_alone_is_no_price(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    sources.handlers[COINGECKO] = _json("<html>gateway</html>")
    sources.handlers[KRAKEN] = _json('{"error":["EQuery:Unknown asset pair"]}')
    with pytest.raises(PriceUnavailable) as caught:
        await _prices(sources, session, Clock()).usdt_per_trx()
    message = str(caught.value)
    assert message.startswith("no TRX price: only binance answered, and a price needs two")
    assert "coingecko: the answer is not JSON" in message
    assert "kraken: error ['EQuery:Unknown asset pair']" in message


async def test_two_that_disagree_by_more_than_3_percent_are_no_price(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    sources.handlers[KRAKEN] = _kraken("0.296")  # 3.03 % above CoinGecko's 0.2873
    sources.handlers[BINANCE] = _json("", 503)
    with pytest.raises(PriceUnavailable) as caught:
        await _prices(sources, session, Clock()).usdt_per_trx()
    assert str(caught.value) == (
        "no TRX price: the sources disagree by more than 3% (coingecko 0.2873, kraken 0.296)"
        " (binance: HTTP 503)"
    )


async def test_three_that_all_disagree_are_no_price(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    sources.handlers[COINGECKO] = _gecko("0.25")
    sources.handlers[BINANCE] = _binance("0.33")
    with pytest.raises(PriceUnavailable, match=r"disagree by more than 3% \(coingecko 0\.25, "):
        await _prices(sources, session, Clock()).usdt_per_trx()


@pytest.mark.parametrize(
    ("rates", "group"),
    [
        # Exactly 3 % above the lower price still agrees; a hair more does not.
        ({"a": "0.300", "b": "0.309"}, ("a", "b")),
        ({"a": "0.300", "b": "0.30901"}, ()),
        ({"a": "0.309", "b": "0.300"}, ("a", "b")),
        ({"a": "0.3"}, ()),
        ({}, ()),
        ({"a": "0.30", "b": "0.30", "c": "0.30"}, ("a", "b", "c")),
        ({"a": "0.30", "b": "0.40", "c": "0.301"}, ("a", "c")),
        # The middle one agrees with both, the outer two do not: the tighter pair wins...
        ({"a": "0.300", "b": "0.308", "c": "0.316"}, ("b", "c")),
        # ...and of two as tight, the first in order.
        ({"a": "0.300", "b": "0.306", "c": "0.31212"}, ("a", "b")),
    ],
)
def test_the_largest_agreeing_group(rates: dict[str, str], group: tuple[str, ...]) -> None:
    assert agreeing({name: Decimal(rate) for name, rate in rates.items()}) == group


@pytest.mark.parametrize(
    "answer",
    [
        '{"tron":{"usd":0}}',
        '{"tron":{"usd":-0.2}}',
        '{"tron":{"usd":"NaN"}}',
        '{"tron":{"usd":"Infinity"}}',
        '{"tron":{"usd":NaN}}',
        '{"tron":{"usd":true}}',
        '{"tron":{"usd":null}}',
        '{"tron":{"usd":"0.28 USD"}}',
        '{"tron":{}}',
        '{"bitcoin":{"usd":90000}}',
        "[0.2873]",
        '{"tron":{"usd":0.28',
        "",
    ],
)
async def test_a_senseless_coingecko_answer_is_skipped(
    sources: FakeSources, session: aiohttp.ClientSession, answer: str
) -> None:
    sources.handlers[COINGECKO] = _json(answer)
    assert (await _prices(sources, session, Clock()).usdt_per_trx()).source == "kraken+binance"


@pytest.mark.parametrize(
    "answer",
    [
        '{"error":[],"result":{}}',
        '{"error":[],"result":{"TRXUSD":{"c":[]}}}',
        '{"error":[],"result":{"TRXUSD":{"c":["-1","1"]}}}',
        '{"error":[],"result":{"TRXUSD":{"c":"0.28"}}}',
        '{"error":[],"result":{"TRXEUR":{"c":["0.1","1"]},"TRXUSD":"x"}}',
    ],
)
async def test_a_senseless_kraken_answer_is_skipped(
    sources: FakeSources, session: aiohttp.ClientSession, answer: str
) -> None:
    sources.handlers[KRAKEN] = _json(answer)
    assert (await _prices(sources, session, Clock()).usdt_per_trx()).source == "coingecko+binance"


async def test_kraken_under_its_own_pair_name_is_read(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    sources.handlers[COINGECKO] = _json("", 503)
    sources.handlers[KRAKEN] = _json('{"error":[],"result":{"XTRXZUSD":{"c":["0.2874","5"]}}}')
    quote = await _prices(sources, session, Clock()).usdt_per_trx()
    assert (quote.rate, quote.source) == (Decimal("0.2872"), "kraken+binance")


async def test_all_down_names_each_failure(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    sources.handlers[COINGECKO] = _json("", 500)
    sources.handlers[KRAKEN] = _json("not json")
    sources.handlers[BINANCE] = _json('{"symbol":"TRXUSDT","price":"0"}')
    with pytest.raises(PriceUnavailable) as caught:
        await _prices(sources, session, Clock()).usdt_per_trx()
    message = str(caught.value)
    assert message.startswith("no TRX price: no source answered (")
    assert "coingecko: HTTP 500" in message
    assert "kraken: the answer is not JSON" in message
    assert "binance: not a positive price" in message
    assert "\n" not in message


async def test_a_slow_source_times_out_and_the_others_answer(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.4)
        return web.json_response({"tron": {"usd": 1}})

    sources.handlers[COINGECKO] = slow
    quote = await _prices(sources, session, Clock(), timeout_s=0.1).usdt_per_trx()
    assert quote.source == "kraken+binance"


async def test_unreachable_sources_are_price_unavailable(session: aiohttp.ClientSession) -> None:
    prices = PriceSources(session, "http://127.0.0.1:1", "http://127.0.0.1:1", "http://127.0.0.1:1")
    with pytest.raises(PriceUnavailable, match=r"coingecko: .*kraken: .*binance: "):
        await prices.usdt_per_trx()


async def test_a_quote_is_kept_five_minutes(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    clock = Clock()
    prices = _prices(sources, session, clock)
    first = await prices.usdt_per_trx()
    sources.handlers[COINGECKO] = _gecko("0.5")
    sources.handlers[KRAKEN] = _kraken("0.5")
    clock.now += timedelta(minutes=4, seconds=59)
    assert await prices.usdt_per_trx() is first
    assert len(sources.hits) == 3
    clock.now += timedelta(seconds=1)
    second = await prices.usdt_per_trx()
    assert (second.rate, second.source, second.at) == (
        Decimal("0.5"),
        "coingecko+kraken",
        clock.now,
    )
    assert len(sources.hits) == 6


async def test_a_clock_going_backwards_refetches(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    clock = Clock()
    prices = _prices(sources, session, clock)
    await prices.usdt_per_trx()
    clock.now -= timedelta(hours=1)
    await prices.usdt_per_trx()
    assert len(sources.hits) == 6


async def test_failures_and_disagreements_are_not_cached(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    for path in GOOD:
        sources.handlers[path] = _json("", 502)
    prices = _prices(sources, session, Clock())
    with pytest.raises(PriceUnavailable, match="no source answered"):
        await prices.usdt_per_trx()
    sources.handlers[BINANCE] = GOOD[BINANCE]
    sources.handlers[KRAKEN] = _kraken("0.4")
    with pytest.raises(PriceUnavailable, match="disagree"):
        await prices.usdt_per_trx()
    sources.handlers[KRAKEN] = GOOD[KRAKEN]
    assert (await prices.usdt_per_trx()).source == "kraken+binance"


async def test_concurrent_callers_share_one_fetch(
    sources: FakeSources, session: aiohttp.ClientSession
) -> None:
    prices = _prices(sources, session, Clock())
    quotes = await asyncio.gather(*(prices.usdt_per_trx() for _ in range(10)))
    assert len(set(quotes)) == 1
    assert len(sources.hits) == 3


# --- Settings ----------------------------------------------------------------------------


def test_price_source_settings_default_to_the_public_apis(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings()
    assert settings.price_coingecko_url == "https://api.coingecko.com"
    assert settings.price_kraken_url == "https://api.kraken.com"
    assert settings.price_binance_url == "https://api.binance.com"
    monkeypatch.setenv("SPONSORBOT_PRICE_KRAKEN_URL", "http://127.0.0.1:8081/")
    assert load_settings().price_kraken_url == "http://127.0.0.1:8081"


def test_a_price_source_must_be_an_http_url(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPONSORBOT_PRICE_BINANCE_URL", "ftp://prices")
    with pytest.raises(SettingsError, match="SPONSORBOT_PRICE_BINANCE_URL"):
        load_settings()
