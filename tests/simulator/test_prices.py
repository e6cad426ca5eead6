"""The simulated price sources: real paths and shapes, per-source prices, outages, reset."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from sponsorbot.simulator.client import SimulatorError
from tests.simulator.conftest import Sim, SimFactory

COINGECKO = "/api/v3/simple/price"
KRAKEN = "/0/public/Ticker"
BINANCE = "/api/v3/ticker/price"


async def fetch(sim: Sim, path: str, **params: str) -> tuple[int, bytes]:
    async with sim.http.get(sim.url + path, params=params) as response:
        return response.status, await response.read()


def decimal_json(body: bytes) -> Any:
    """Parse as a careful client does: numbers as Decimal, never float."""
    return json.loads(body, parse_float=Decimal)


async def rates(sim: Sim) -> tuple[Decimal, Decimal, Decimal]:
    """The TRX price each source shows, read from each API's own shape."""
    _, gecko = await fetch(sim, COINGECKO, ids="tron", vs_currencies="usd")
    _, kraken = await fetch(sim, KRAKEN, pair="TRXUSD")
    _, binance = await fetch(sim, BINANCE, symbol="TRXUSDT")
    return (
        decimal_json(gecko)["tron"]["usd"],
        Decimal(decimal_json(kraken)["result"]["TRXUSD"]["c"][0]),
        Decimal(decimal_json(binance)["price"]),
    )


async def test_default_price_in_each_shape(sim: Sim) -> None:
    status, body = await fetch(sim, COINGECKO, ids="tron", vs_currencies="usd")
    assert status == 200 and body == b'{"tron":{"usd":0.2873}}'
    status, body = await fetch(sim, KRAKEN, pair="TRXUSD")
    kraken = decimal_json(body)
    assert status == 200 and kraken["error"] == []
    ticker = kraken["result"]["TRXUSD"]
    assert ticker["c"][0] == "0.287300" and set(ticker) == set("abcvptlho")
    assert Decimal(ticker["b"][0]) < Decimal(ticker["c"][0]) < Decimal(ticker["a"][0])
    status, body = await fetch(sim, BINANCE, symbol="TRXUSDT")
    assert status == 200 and decimal_json(body) == {"symbol": "TRXUSDT", "price": "0.28730000"}
    assert await rates(sim) == (Decimal("0.2873"),) * 3


async def test_prices_set_together_or_apart(sim: Sim) -> None:
    await sim.control.set_price("0.3141592")
    assert await rates(sim) == (Decimal("0.3141592"), Decimal("0.314159"), Decimal("0.31415920"))
    state = await sim.control.set_price("0.3150", source="kraken")
    assert state["kraken"] == {"price": "0.315", "down": None}
    assert state["coingecko"]["price"] == "0.3141592"
    gecko, kraken, binance = await rates(sim)
    assert kraken == Decimal("0.315") and gecko == Decimal("0.3141592") == binance
    for bad in ("-1", "abc", "0"):
        with pytest.raises(SimulatorError) as error:
            await sim.control.set_price(bad)
        assert error.value.status == 400
    with pytest.raises(SimulatorError):
        await sim.control.set_price("0.3", source="bitstamp")


async def test_unknown_coins_pairs_and_symbols(sim: Sim) -> None:
    assert await fetch(sim, COINGECKO, ids="nocoin", vs_currencies="usd") == (200, b"{}")
    assert await fetch(sim, COINGECKO, ids="tron", vs_currencies="xyz") == (200, b'{"tron":{}}')
    status, body = await fetch(sim, COINGECKO, ids="tron")
    assert status == 400 and b"vs_currencies" in body
    status, body = await fetch(sim, KRAKEN, pair="FOOBAR")
    assert status == 200 and decimal_json(body) == {"error": ["EQuery:Unknown asset pair"]}
    status, body = await fetch(sim, BINANCE, symbol="FOOUSDT")
    assert status == 400 and decimal_json(body) == {"code": -1121, "msg": "Invalid symbol."}
    status, body = await fetch(sim, BINANCE)
    assert status == 200 and decimal_json(body)[0]["symbol"] == "TRXUSDT"


async def test_sources_go_down_and_come_back(sim: Sim) -> None:
    await sim.control.price_down("coingecko")
    status, body = await fetch(sim, COINGECKO, ids="tron", vs_currencies="usd")
    assert status == 500 and body.startswith(b"<html>")
    await sim.control.price_down("kraken", mode="garbage")
    status, body = await fetch(sim, KRAKEN, pair="TRXUSD")
    assert status == 200
    with pytest.raises(json.JSONDecodeError):
        decimal_json(body)
    await sim.control.price_down("binance", mode="429")
    status, body = await fetch(sim, BINANCE, symbol="TRXUSDT")
    assert status == 429 and decimal_json(body)["code"] == -1003
    state = await sim.control.prices()
    assert [state[s]["down"] for s in ("coingecko", "kraken", "binance")] == [
        "500",
        "garbage",
        "429",
    ]
    await sim.control.price_up("kraken")
    assert (await fetch(sim, KRAKEN, pair="TRXUSD"))[0] == 200
    await sim.control.price_up()
    assert await rates(sim) == (Decimal("0.2873"),) * 3
    with pytest.raises(SimulatorError):
        await sim.control.price_down(mode="teapot")


async def test_start_price_and_reset(make_sim: SimFactory) -> None:
    sim = await make_sim(trx_price="0.25")
    assert await rates(sim) == (Decimal("0.25"), Decimal("0.250000"), Decimal("0.25"))
    await sim.control.set_price("0.3")
    await sim.control.price_down()
    await sim.control.reset()
    state = await sim.control.prices()
    assert state == {s: {"price": "0.25", "down": None} for s in ("coingecko", "kraken", "binance")}
