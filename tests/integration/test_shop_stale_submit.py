"""An old summary keeps its Submit and Cancel buttons in the chat. Pressed again, Submit says
which order that summary already became, or that the summary is closed; no second order."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from sponsorbot.features.shop.products import ProductDraft
from tests.integration.shopkit import is_summary, shop


async def test_submit_pressed_again_says_the_order_is_already_submitted(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        await s.features.shop.create_product(s.bot["id"], ProductDraft("broadcast", "Post", "20"))
        ada = await s.advertiser()
        summary = await s.offer(ada, "Post", "Our new shop opens today", is_summary)
        before = len(await s.messages(ada))
        await s.press(ada, summary, "✅")
        await s.next_message(ada, before)
        order = await s.order_of(ada)
        before = len(await s.messages(ada))
        await s.press(ada, summary, "✅")
        again = await s.next_message(ada, before)
        assert again["text"] == (
            f"Order #{order['id']} is already submitted. /orders shows where it stands."
        )
        count = await pool.fetchval("SELECT count(*) FROM shop_orders WHERE user_id = $1", ada)
        assert count == 1

        # A summary cancelled before it was submitted is closed, not "nothing to cancel".
        bea = await s.advertiser("fa")
        dropped = await s.offer(bea, "Post", "Another post", is_summary)
        before = len(await s.messages(bea))
        await s.press(bea, dropped, "لغو")
        await s.next_message(bea, before)
        before = len(await s.messages(bea))
        await s.press(bea, dropped, "✅")
        closed = await s.next_message(bea, before)
        assert "این خلاصه بسته شده است" in closed["text"]
        assert await pool.fetchval("SELECT count(*) FROM shop_orders WHERE user_id = $1", bea) == 0
