"""The shop's money under real worker processes: 2 and 4 workers, a slow TronGrid, every hash
sent twice for two people's orders, and one worker killed (SIGKILL) mid-run. The sum of the
credits equals the sum of the transfers that are some order's exact amount, nothing else is
credited, and no paid ad starts twice."""

from __future__ import annotations

import os
import signal
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sponsorbot.features.all import install
from sponsorbot.features.shop.fulfil import maker
from sponsorbot.features.shop.orders import Order
from sponsorbot.features.shop.products import ProductDraft
from sponsorbot.features.shop.settings import ShopConfig
from sponsorbot.web.deps import Services
from tests.integration.shopkit import add_order
from tests.kit import (
    SECRET,
    eventually,
    make_settings,
    running_engine,
    simulated_telegram,
    tron_urls,
)
from tests.processes import clean_environ, start

pytestmark = pytest.mark.slow

ORDERS = 12
# Two transfers that are no order's exact amount: they must wait for the owner.
STRAY = ("3", "7.5")
CHECKING = "SELECT count(*) FROM shop_payments WHERE status = 'checking'"


@pytest.mark.parametrize("workers", [2, 4])
async def test_racing_workers_and_a_killed_one_credit_each_transfer_once(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, workers: int
) -> None:
    async with simulated_telegram() as tg:
        sim_bot = await tg.sim.create_bot("race_shop_bot")
        shop_wallet = await tg.sim.tron_create_wallet()
        payer = await tg.sim.tron_create_wallet()
        await tg.sim.tron_set_network(solidify_blocks=0)
        urls = tron_urls(tg.url)
        settings = make_settings(db_dsn, tg.url, tmp_path, **urls)
        async with running_engine(settings, pool, db_dsn, worker=False) as run:
            features = Services.of(install(run.engine))
            bot = await run.engine.bots.add(sim_bot["token"], "polling")
            await features.shop.save_settings(
                bot["id"], ShopConfig(enabled=True, address=shop_wallet["address"])
            )
            products = [
                await features.shop.create_product(
                    bot["id"], ProductDraft("banner", "Banner", "5", days=7)
                ),
                await features.shop.create_product(
                    bot["id"], ProductDraft("broadcast", "Post", "9")
                ),
            ]
            people = await tg.sim.create_users(ORDERS, started="race_shop_bot")
            orders: list[Order] = []
            for n, person in enumerate(people):
                product = products[n % 4 == 3]
                material: dict[str, Any] = (
                    {"post": {"text": f"Sale {n}", "buttons": []}}
                    if product["kind"] == "broadcast"
                    else {"text": f"Ad {n}", "url": f"https://ad{n}.example"}
                )
                order_id = await add_order(pool, bot["id"], product["kind"], person, material)
                orders.append(await features.shop.approve(order_id, "owner"))
            # Half pay in USDT, half in TRX, each its order's exact amount.
            paid = []
            for n, order in enumerate(orders):
                if n % 2:
                    tx = await tg.sim.tron_trx(
                        payer["address"], shop_wallet["address"], order["due_trx"]
                    )
                else:
                    tx = await tg.sim.tron_usdt(
                        payer["address"], shop_wallet["address"], order["due_usdt"]
                    )
                paid.append(tx)
            stray = [
                await tg.sim.tron_usdt(payer["address"], shop_wallet["address"], amount)
                for amount in STRAY
            ]
            # Every hash is sent for two people's orders.
            for n, tx in enumerate(paid + stray):
                for order in (orders[n % ORDERS], orders[(n + 1) % ORDERS]):
                    await features.shop.add_hash(order["id"], tx["hash"], "test")
        # A slow TronGrid: a round of checks outlasts the runner's interval.
        await tg.sim.tron_set_network(delay_s=0.4)

        env = clean_environ(
            SPONSORBOT_DATABASE_URL=db_dsn,
            SPONSORBOT_TELEGRAM_API=tg.url,
            SPONSORBOT_SECRET_KEY=SECRET,
            SPONSORBOT_DATA_DIR=str(tmp_path),
            SPONSORBOT_TRONGRID_URL=tg.url,
            SPONSORBOT_PRICE_COINGECKO_URL=tg.url,
            SPONSORBOT_PRICE_KRAKEN_URL=tg.url,
            SPONSORBOT_PRICE_BINANCE_URL=tg.url,
        )
        procs: list[subprocess.Popen[bytes]] = [
            start("run", "--role", "worker", env=env, log=tmp_path / f"w{i}.log")
            for i in range(workers)
        ]
        try:

            async def some_credited() -> bool:
                return bool(await pool.fetchval("SELECT count(*) FROM shop_transfers") >= 2)

            await eventually(some_credited, timeout=60, every=0.1)
            # Killed mid-run: its claimed hashes come back to the others when the claim ends.
            os.kill(procs[0].pid, signal.SIGKILL)
            procs[0].wait(timeout=10)

            async def settled() -> bool:
                return not await pool.fetchval(CHECKING)

            await eventually(settled, timeout=120, every=0.5)

            async def started() -> bool:
                states = await pool.fetch(
                    "SELECT state FROM shop_orders WHERE id = ANY($1::bigint[])",
                    [o["id"] for o in orders],
                )
                return all(r["state"] in ("running", "completed") for r in states)

            await eventually(started, timeout=60, every=0.5)
        finally:
            for proc in procs[1:]:
                proc.terminate()
            for proc in procs[1:]:
                proc.wait(timeout=30)

    credits = await pool.fetch(
        "SELECT tx_hash, order_id, coin, amount, credited_usdt FROM shop_transfers"
        " WHERE state = 'credited'"
    )
    expected = {tx["hash"]: order["id"] for tx, order in zip(paid, orders, strict=True)}
    assert {r["tx_hash"]: r["order_id"] for r in credits} == expected
    held = await pool.fetch("SELECT tx_hash FROM shop_transfers WHERE state = 'unattributed'")
    assert {r["tx_hash"] for r in held} == {tx["hash"] for tx in stray}
    # The sum of the credits is the sum of what the attributed transfers are worth.
    total = await pool.fetchval("SELECT sum(paid_usdt) FROM shop_orders")
    assert total == sum(r["credited_usdt"] for r in credits)
    for order in orders:
        row = await pool.fetchrow(
            "SELECT o.paid_usdt, o.price_usdt,"
            " (SELECT count(*) FROM shop_order_log l WHERE l.bot_id = o.bot_id"
            "  AND l.order_id = o.id AND l.kind = 'started') AS starts,"
            " (SELECT count(*) FROM shop_order_log l WHERE l.bot_id = o.bot_id"
            "  AND l.order_id = o.id AND l.kind = 'paid') AS paid_steps,"
            " (SELECT count(*) FROM broadcasts b WHERE b.created_by = $2) AS broadcasts"
            " FROM shop_orders o WHERE o.id = $1",
            order["id"],
            maker(order["id"]),
        )
        assert row["paid_usdt"] >= row["price_usdt"]
        assert (row["starts"], row["paid_steps"]) == (1, 1)
        assert row["broadcasts"] == (1 if order["kind"] == "broadcast" else 0)
    claims = await pool.fetch(
        "SELECT tx_hash, count(*) FILTER (WHERE status = 'credited') AS n FROM shop_payments"
        " GROUP BY tx_hash"
    )
    assert all(c["n"] <= 1 for c in claims) and len(claims) == ORDERS + len(STRAY)
    assert sum(Decimal(r["amount"]) > 0 for r in credits) == ORDERS
