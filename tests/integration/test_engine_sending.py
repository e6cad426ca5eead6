"""The sender against the simulator: limits, 429, 401, 403, references."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.engine.handlers import UnitOfWork
from tests.kit import Telegram, eventually, make_settings, running_engine, simulated_telegram


async def enqueue(
    pool: asyncpg.Pool, bot_id: int, rows: list[tuple[int, str, dict[str, Any]]], **kw: Any
) -> None:
    uow = UnitOfWork(bot_id)
    for chat_id, method, params in rows:
        uow.send(chat_id, method, params, **kw)
    async with pool.acquire() as conn, conn.transaction():
        for write in uow.writes:
            await write(conn)


async def outbox_counts(pool: asyncpg.Pool) -> dict[str, int]:
    rows = await pool.fetch("SELECT status, count(*) AS n FROM outbox GROUP BY status")
    return {r["status"]: r["n"] for r in rows}


async def people(tg: Telegram, n: int, bot: str) -> list[int]:
    """People who have opened the bot (a bot cannot write first)."""
    ids = []
    for i in range(n):
        user = await tg.sim.create_user(f"P{i}")
        await tg.sim.open_link(user["id"], bot)
        ids.append(user["id"])
    return ids


async def test_queued_messages_are_sent_in_order_per_chat(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("send_bot")
        users = await people(tg, 5, "send_bot")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn) as run:
            await run.engine.bots.add(bot["token"], "polling")
            rows = [(u, "sendMessage", {"text": f"{u}:{k}"}) for k in range(6) for u in users]
            await enqueue(pool, bot["id"], rows)
            run.engine.notifier.wake(f"outbox:{bot['id']}")

            async def all_sent() -> bool:
                return (await outbox_counts(pool)).get("sent") == 30

            await eventually(all_sent, timeout=30)
        for u in users:
            chat = await tg.sim.read_chat(u, "send_bot")
            texts = [m["text"] for m in chat if m["from"] == "bot"]
            assert texts == [f"{u}:{k}" for k in range(6)]
