"""The shop's lists through the owner API, a page at a time, newest first: orders, payments and
transfers each hand back the id to list below (`next_before`) while more follow, none on the
last page."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.tron.address import parse_address
from tests.integration.test_api_owner import Api, connect_bot, owner_api

ADDRESS = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


async def pages(api: Api, path: str, limit: int, **params: Any) -> list[list[int]]:
    """Every page of the list, following `next_before` to the end: the ids on each."""
    found: list[list[int]] = []
    before: int | None = None
    while True:
        query = {**params, "limit": limit, **({"before": before} if before else {})}
        answer = await api.http.get(path, params=query)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        found.append([item["id"] for item in body["items"]])
        before = body["next_before"]
        if before is None:
            return found
        assert before == found[-1][-1]


async def test_orders_payments_and_transfers_are_listed_a_page_at_a_time(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api, "shop_pages_bot")
        orders = [
            await pool.fetchval(
                "INSERT INTO shop_orders (bot_id, kind, title, days, user_id, price_usdt)"
                " VALUES ($1, 'banner', 'Banner', 3, 42, 5) RETURNING id",
                bot["id"],
            )
            for _ in range(5)
        ]
        payments = [
            await pool.fetchval(
                "INSERT INTO shop_payments (order_id, bot_id, tx_hash, source)"
                " VALUES ($1, $2, $3, 'api') RETURNING id",
                order_id,
                bot["id"],
                f"{n:02x}" * 32,
            )
            for n, order_id in enumerate(orders)
        ]
        transfers = [
            await pool.fetchval(
                "INSERT INTO shop_transfers (network, tx_hash, coin, amount, to_address,"
                " block_time) VALUES ('mainnet', $1, 'USDT', 5, $2, $3) RETURNING id",
                f"{n + 16:02x}" * 32,
                parse_address(ADDRESS),
                datetime(2026, 12, 1, tzinfo=UTC),
            )
            for n in range(5)
        ]
        newest = orders[::-1]
        assert await pages(api, "/api/v1/shop/orders", 2, bot_id=bot["id"]) == [
            newest[:2],
            newest[2:4],
            newest[4:],
        ]
        assert await pages(api, "/api/v1/shop/orders", 5) == [newest]
        assert await pages(api, "/api/v1/shop/payments", 3) == [
            payments[::-1][:3],
            payments[::-1][3:],
        ]
        assert await pages(api, "/api/v1/shop/transfers", 4, state="unattributed") == [
            transfers[::-1][:4],
            transfers[::-1][4:],
        ]
        empty = await api.http.get("/api/v1/shop/orders", params={"state": "paid"})
        assert empty.json() == {"items": [], "next_before": None, "counts": {"submitted": 5}}
