"""Simulated TRX price sources at their real paths: CoinGecko, Kraken and Binance.

Each source keeps its own price (set together or one by one, so they can differ a little) and
can be taken down: a 500 page, a 429, or a body cut off mid-way. Prices are ``Decimal`` from
end to end and printed as each API prints them: CoinGecko a JSON number, Kraken a string with
the pair's 6 decimals, Binance a string with 8.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import orjson
from aiohttp import web

from sponsorbot.simulator.botapi import SIMULATOR_KEY
from sponsorbot.simulator.control import Action, mount
from sponsorbot.simulator.market import Prices, plain
from sponsorbot.simulator.state import Simulator

_JSON = "application/json"
_SERVER_ERROR_PAGE = (
    "<html><head><title>500 Internal Server Error</title></head>"
    "<body><h1>500 Internal Server Error</h1></body></html>"
)
_GARBAGE = b'{"tron":{"us'
_RATE_LIMITED: dict[str, tuple[int, Any]] = {
    "coingecko": (
        429,
        {"status": {"error_code": 429, "error_message": "You've exceeded the Rate Limit."}},
    ),
    # Kraken answers its errors with status 200 and the error in the list.
    "kraken": (200, {"error": ["EGeneral:Too many requests"]}),
    "binance": (429, {"code": -1003, "msg": "Too many requests; IP banned for 60 seconds."}),
}


def _places(price: Decimal, places: int) -> str:
    return str(price.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN))


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type=_JSON)


def _prices(request: web.Request) -> Prices:
    return request.app[SIMULATOR_KEY].prices


def _outage(prices: Prices, source: str) -> web.Response | None:
    mode = prices.down.get(source)
    if mode == "500":
        return web.Response(text=_SERVER_ERROR_PAGE, status=500, content_type="text/html")
    if mode == "429":
        status, body = _RATE_LIMITED[source]
        return _json(body, status)
    if mode == "garbage":
        return web.Response(body=_GARBAGE, content_type=_JSON)
    return None


def _names(text: str) -> list[str]:
    return [part.strip().lower() for part in text.split(",") if part.strip()]


async def coingecko(request: web.Request) -> web.Response:
    """GET /api/v3/simple/price?ids=tron&vs_currencies=usd -> {"tron":{"usd":0.2873}}."""
    prices = _prices(request)
    down = _outage(prices, "coingecko")
    if down is not None:
        return down
    for needed in ("ids", "vs_currencies"):
        if not request.query.get(needed):
            return _json({"error": f"Missing parameter {needed}"}, 400)
    # Unknown coins are left out, unknown currencies too: asking only for those gives {}.
    price = plain(prices.price["coingecko"])
    coins = [
        '"tron":{'
        + ('"usd":' + price if "usd" in _names(request.query["vs_currencies"]) else "")
        + "}"
        for coin in _names(request.query["ids"])
        if coin == "tron"
    ][:1]
    # The price goes out as a JSON number with exactly the digits set, which orjson cannot
    # write from a Decimal: this one fixed shape is written by hand.
    return web.Response(text="{" + ",".join(coins) + "}", content_type=_JSON)


def _kraken_ticker(price: Decimal) -> dict[str, Any]:
    step = Decimal("0.000010")
    volume = "18734521.52716900"
    return {
        "a": [_places(price + step, 6), "5210", "5210.000"],
        "b": [_places(price - step, 6), "11865", "11865.000"],
        "c": [_places(price, 6), "250.00000000"],
        "v": ["6482913.10483300", volume],
        "p": [_places(price, 6), _places(price, 6)],
        "t": [1311, 4176],
        "l": [_places(price * Decimal("0.985"), 6), _places(price * Decimal("0.97"), 6)],
        "h": [_places(price * Decimal("1.012"), 6), _places(price * Decimal("1.02"), 6)],
        "o": _places(price * Decimal("0.995"), 6),
    }


async def kraken(request: web.Request) -> web.Response:
    """GET /0/public/Ticker?pair=TRXUSD -> {"error":[],"result":{"TRXUSD":{"c":[...]...}}}."""
    prices = _prices(request)
    down = _outage(prices, "kraken")
    if down is not None:
        return down
    pairs = [p.upper() for p in _names(request.query.get("pair", "TRXUSD"))]
    if any(pair != "TRXUSD" for pair in pairs):
        return _json({"error": ["EQuery:Unknown asset pair"]})
    return _json({"error": [], "result": {"TRXUSD": _kraken_ticker(prices.price["kraken"])}})


async def binance(request: web.Request) -> web.Response:
    """GET /api/v3/ticker/price?symbol=TRXUSDT -> {"symbol":"TRXUSDT","price":"0.28730000"}."""
    prices = _prices(request)
    down = _outage(prices, "binance")
    if down is not None:
        return down
    ticker = {"symbol": "TRXUSDT", "price": _places(prices.price["binance"], 8)}
    symbol = request.query.get("symbol")
    if symbol is None:
        return _json([ticker])  # no symbol: every ticker Binance has (here, one)
    if symbol != "TRXUSDT":
        return _json({"code": -1121, "msg": "Invalid symbol."}, 400)
    return _json(ticker)


# Control ---------------------------------------------------------------------------------


async def read_prices(sim: Simulator, body: dict[str, Any]) -> Any:
    """Every source's price and whether it is down."""
    return sim.prices.json()


async def set_price(sim: Simulator, body: dict[str, Any]) -> Any:
    """``price`` (decimal string) at ``source`` (coingecko, kraken, binance; all if absent)."""
    sim.prices.set(body["price"], body.get("source"))
    return sim.prices.json()


async def take_down(sim: Simulator, body: dict[str, Any]) -> Any:
    """``source`` (all if absent) answers ``mode``: 500 (default), 429 or garbage."""
    sim.prices.take_down(str(body.get("mode", "500")), body.get("source"))
    return sim.prices.json()


async def bring_up(sim: Simulator, body: dict[str, Any]) -> Any:
    """``source`` (all if absent) answers normally again."""
    sim.prices.bring_up(body.get("source"))
    return sim.prices.json()


CONTROL: dict[str, Action] = {
    "prices": set_price,
    "prices/down": take_down,
    "prices/up": bring_up,
}
READ_CONTROL: dict[str, Action] = {"prices": read_prices}


def setup(app: web.Application) -> None:
    """Add the three price APIs at their real paths, and ``/_sim/prices...``, to ``app``."""
    app.router.add_get("/api/v3/simple/price", coingecko)
    app.router.add_route("*", "/0/public/Ticker", kraken)
    app.router.add_get("/api/v3/ticker/price", binance)
    mount(app, CONTROL, READ_CONTROL)
