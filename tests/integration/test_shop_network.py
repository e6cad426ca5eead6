"""A shop on mainnet whose TronGrid node serves Nile never credits what it sees there (ADR 0018):
the verifier checks the node's block 0 first, and the owner sees why the hash waits."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from tests.integration.shopkit import shop
from tests.kit import eventually


async def test_a_node_serving_nile_never_credits_a_mainnet_shop(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        ada, approved = await s.approved_banner("0.25")
        assert approved["network"] == "mainnet"
        # The node behind SPONSORBOT_TRONGRID_URL now serves Nile, where TRX is free: the exact
        # TRX amount paid there would pass every other check as a mainnet payment.
        await s.tg.sim.tron_set_network("nile")
        free = await s.tg.sim.tron_trx(s.payer, s.address, approved["due_trx"], solidify="now")
        await s.say(ada, free["hash"])

        async def error() -> str | None:
            found: str | None = await pool.fetchval(
                "SELECT last_error FROM shop_payments WHERE tx_hash = $1", free["hash"]
            )
            return found

        async def checks() -> int:
            return int(
                await pool.fetchval(
                    "SELECT checks FROM shop_payments WHERE tx_hash = $1", free["hash"]
                )
                or 0
            )

        async def refused() -> bool:
            return "serves nile, not mainnet" in (await error() or "")

        await eventually(refused)
        # Asked again (the runner retries a TronGrid error): refused again, never judged.
        before = await checks()
        await pool.execute("UPDATE shop_payments SET next_check_at = now()")

        async def checked_again() -> bool:
            return await checks() > before and await refused()

        await eventually(checked_again)
        assert "SPONSORBOT_TRONGRID_URL_MAINNET" in (await error() or "")
        still = await s.features.shop.order(approved["id"])
        assert still["state"] == "awaiting_payment" and still["paid_usdt"] == "0"
        assert [p["status"] for p in still["payments"]] == ["checking"]
        assert await pool.fetchval("SELECT count(*) FROM shop_transfers") == 0

        # The node put back on mainnet is believed again; there the Nile hash is unknown.
        await s.tg.sim.tron_set_network("mainnet")
        await pool.execute("UPDATE shop_payments SET next_check_at = now()")

        async def unknown() -> bool:
            return await error() == "waiting: unknown"

        await eventually(unknown)
        assert (await s.features.shop.order(approved["id"]))["state"] == "awaiting_payment"
        # A real mainnet payment of the same amount is credited as ever.
        paid = await s.tg.sim.tron_trx(s.payer, s.address, approved["due_trx"], solidify="now")
        await s.say(ada, paid["hash"])
        running = await s.state_of(approved["id"], "running")
        credited = [p for p in running["payments"] if p["status"] == "credited"]
        assert [p["tx_hash"] for p in credited] == [paid["hash"]]
