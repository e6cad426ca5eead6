"""`sponsorbot payments verify` judges a hash with the runner's own verifier against the
simulated TronGrid, and prints one JSON line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from tests.kit import simulated_telegram

# Every test runs the command as a process.
pytestmark = pytest.mark.slow


async def verify(url: str, *args: str, setting: str = "TRONGRID_URL") -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPONSORBOT_")}
    env[f"SPONSORBOT_{setting}"] = url
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sponsorbot",
        "payments",
        "verify",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


async def test_payments_verify_prints_the_verdict_of_each_kind_of_transaction() -> None:
    async with simulated_telegram() as tg:
        shop = (await tg.sim.tron_create_wallet())["address"]
        payer = (await tg.sim.tron_create_wallet())["address"]
        before = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
        usdt = await tg.sim.tron_usdt(payer, shop, "12.5", solidify="now")
        trx = await tg.sim.tron_trx(payer, shop, "100", solidify="now")
        fake = await tg.sim.tron_lookalike(payer, shop, "12.5", solidify="now")
        waiting = await tg.sim.tron_usdt(payer, shop, "1", solidify="never")
        common = ["--network", "mainnet", "--address", shop, "--approved-at", before]

        code, out, _ = await verify(tg.url, usdt["hash"], *common)
        assert code == 0
        line = json.loads(out)
        assert line["verdict"] == "credit" and line["reason"] is None
        assert line["coin"] == "USDT"
        assert Decimal(line["amount"]) == Decimal(line["credited_usdt"]) == Decimal("12.5")
        assert (line["from"], line["to"]) == (payer, shop)

        code, out, _ = await verify(tg.url, trx["hash"], *common, "--trx-rate", "0.2873333")
        line = json.loads(out)
        assert line["coin"] == "TRX" and Decimal(line["amount"]) == 100
        assert line["credited_usdt"] == "28.733330"

        _, out, _ = await verify(tg.url, fake["hash"], *common)
        assert json.loads(out)["reason"] == "no_usdt"
        _, out, _ = await verify(tg.url, waiting["hash"], *common)
        assert (json.loads(out)["verdict"], json.loads(out)["reason"]) == ("wait", "unconfirmed")
        late = (datetime.now(UTC) + timedelta(minutes=10)).isoformat()
        _, out, _ = await verify(tg.url, usdt["hash"], *common[:-1], late)
        assert json.loads(out)["reason"] == "too_early"

        code, out, err = await verify(tg.url, "not-a-hash", *common)
        assert code == 2 and out == "" and "hash" in err
        code, out, err = await verify(
            tg.url, usdt["hash"], *common[:3], shop[:-1] + "x", *common[4:]
        )
        assert code == 2 and out == ""


async def test_payments_verify_refuses_a_node_of_another_network() -> None:
    async with simulated_telegram() as tg:
        shop = (await tg.sim.tron_create_wallet())["address"]
        payer = (await tg.sim.tron_create_wallet())["address"]
        before = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
        trx = await tg.sim.tron_trx(payer, shop, "100", solidify="now")
        common = ["--network", "mainnet", "--address", shop, "--approved-at", before]
        # The mainnet URL of its own, and the simulator switched to Nile behind it (ADR 0018).
        await tg.sim.tron_set_network("nile")
        free = await tg.sim.tron_trx(payer, shop, "100", solidify="now")
        code, out, err = await verify(
            tg.url, free["hash"], *common, "--trx-rate", "0.25", setting="TRONGRID_URL_MAINNET"
        )
        assert code == 1 and out == ""
        assert "serves nile, not mainnet" in err
        await tg.sim.tron_set_network("mainnet")
        code, out, _ = await verify(
            tg.url, trx["hash"], *common, "--trx-rate", "0.25", setting="TRONGRID_URL_MAINNET"
        )
        assert code == 0 and json.loads(out)["verdict"] == "credit"
