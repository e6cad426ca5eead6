"""The worker's count of updates in hand adapts: with slow handlers and a backlog it holds
more than it started with, still one update per person and each handled once."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from sponsorbot.engine import inbox
from sponsorbot.engine.bots import ActiveBot
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.routing import Router
from sponsorbot.engine.unit import BotInfo, Context
from sponsorbot.engine.worker import Worker
from sponsorbot.telegram import BotApi

BOT = 11
PEOPLE = 300
# A handler's wait, as for two Telegram round trips far away.
HANDLER_S = 0.08


async def _backlog(pool: asyncpg.Pool) -> None:
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES ($1, 'inhand_bot', '', 'xxxx', 'polling', 'p', '')",
        BOT,
    )
    for user in range(1, PEOPLE + 1):
        update = {"update_id": user, "message": {"from": {"id": user}, "chat": {"id": user}}}
        assert await inbox.store_update(pool, BOT, update)


async def test_a_backlog_with_slow_handlers_raises_the_count(pool: asyncpg.Pool) -> None:
    await _backlog(pool)
    router = Router()
    seen: list[int] = []
    holding = {"now": 0, "most": 0}

    @router.message()
    async def slow(event: Any, ctx: Context) -> None:
        holding["now"] += 1
        holding["most"] = max(holding["most"], holding["now"])
        try:
            await asyncio.sleep(HANDLER_S)
            seen.append(event["from"]["id"])
        finally:
            holding["now"] -= 1

    bot = ActiveBot(BotInfo(BOT, "inhand_bot", "polling", "active"), "1:x")
    notifier = Notifier()
    worker = Worker(
        pool,
        router,
        notifier,
        BotApi("http://127.0.0.1:9"),
        lambda: {BOT: bot},
        slots=4,
        slots_max=64,
    )
    stop = asyncio.Event()
    run = asyncio.create_task(worker.run(stop))
    try:
        async with asyncio.timeout(60):
            while await pool.fetchval("SELECT count(*) FROM inbox WHERE status <> 'done'"):
                await asyncio.sleep(0.05)
    finally:
        stop.set()
        await run
        await notifier.close()
    assert sorted(seen) == list(range(1, PEOPLE + 1))
    # Started at 4; a fixed 4 would need PEOPLE / 4 * HANDLER_S = 6 s.
    assert worker.limit.limit > 4
    assert holding["most"] > 4
    assert holding["most"] <= 64
