"""A person's updates that arrive together are handled one after another without waiting for
the claim loop's poll: finishing one wakes the claim for the next."""

from __future__ import annotations

import time
from pathlib import Path

import asyncpg
import pytest

from tests.integration.test_engine_basics import echo_router
from tests.kit import eventually, make_settings, running_engine, simulated_telegram

MESSAGES = 8


@pytest.mark.slow
async def test_a_burst_from_one_person_is_answered_in_order_without_poll_waits(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("burst_bot")
        user = await tg.sim.create_user("Ann", language_code="en")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn, echo_router()) as run:
            await run.engine.bots.add(bot["token"], "polling")
            # An album, or a quick run of messages: all stored before the first is handled.
            for n in range(MESSAGES):
                await tg.sim.send_text(user["id"], "burst_bot", f"part {n}")
            start = time.monotonic()

            async def answered() -> bool:
                chat = await tg.sim.read_chat(user["id"], "burst_bot")
                return len([m for m in chat if m["from"] == "bot"]) >= MESSAGES

            await eventually(answered, timeout=60)
            took = time.monotonic() - start
        chat = await tg.sim.read_chat(user["id"], "burst_bot")
        texts = [m["text"] for m in chat if m["from"] == "bot"]
        assert texts == [f"echo: part {n}" for n in range(MESSAGES)]
        # Waiting for the claim loop's poll (1 to 2 s) between them would take 7 s at least.
        assert took < MESSAGES - 1, f"{MESSAGES} messages of one person took {took:.1f} s"
