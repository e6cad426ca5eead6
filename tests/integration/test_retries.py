"""Retries bounded by age, Telegram's wait honoured, and the re-drive (docs/adr/0005-retries.md).

Timings come from settings: the outage here lasts seconds, the retry budget is shrunk to match.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.integration.gatekit import BOT, gate_of, members_and_strangers, running_gate
from tests.kit import eventually

# What a visitor's answer needs from Telegram; getUpdates keeps working, as intake does in an
# outage of the Bot API's sending side.
ANSWERING = (
    "getChatMember",
    "sendMessage",
    "sendDocument",
    "deleteMessage",
    "answerCallbackQuery",
    "editMessageText",
)


def has_file(messages: list[dict[str, Any]]) -> bool:
    return any(m["media"] and m["media"]["kind"] == "document" for m in messages)


async def test_an_outage_longer_than_the_old_retry_budget_loses_no_visitor(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """H3: with 8 attempts at 1 s, updates went dead in about two minutes of 502s; now
    transient failures are retried for `retry_for_h`, and every visitor is answered once."""
    # retry_base_s is 0.02 in the test engine: 8 counted attempts would end in about 5 s.
    async with running_gate(pool, db_dsn, tmp_path, retry_cap_s=0.5, max_attempts=8) as g:
        members, strangers = await members_and_strangers(g, 6)
        for method in ANSWERING:
            await g.tg.sim.set_fault(method, error_rate=1.0, status=502)
        loop = asyncio.get_running_loop()
        outage_ends = loop.time() + 8.0
        for visitor in [*members, *strangers]:
            await g.tg.sim.open_link(visitor, BOT, g.content["code"])
            await asyncio.sleep(0.5)

        # Members pass at once (their joins were seen) and their files wait in the sender;
        # strangers' updates fail in the read phase, asking Telegram who joined.
        async def failing() -> bool:
            n = await pool.fetchval("SELECT count(*) FROM inbox WHERE error LIKE '%502%'")
            return bool(n >= len(strangers))

        await eventually(failing)
        await asyncio.sleep(max(0.0, outage_ends - loop.time()))
        assert await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'dead'") == 0
        await g.tg.sim.clear_faults()

        for visitor in members:
            messages = await g.wait_for(visitor, has_file, timeout=30)
            documents = [m for m in messages if m["media"]]
            assert len(documents) == 1
        for visitor in strangers:
            messages = await g.wait_for(visitor, gate_of, timeout=30)
            assert not has_file(messages)
            assert len(messages) == 1
        counts = await pool.fetchrow(
            "SELECT count(*) FILTER (WHERE status = 'dead') AS dead,"
            " max(failures) AS failures FROM inbox"
        )
        assert counts["dead"] == 0 and counts["failures"] == 0
        failed = await pool.fetchval("SELECT count(*) FROM outbox WHERE status = 'failed'")
        assert failed == 0


async def test_a_429_in_the_read_phase_waits_as_told_and_spends_no_attempt(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """H3: each 429 of getChatMember used up an attempt and retry_after was ignored."""
    async with running_gate(pool, db_dsn, tmp_path, max_attempts=2) as g:
        visitor = await g.visitor()
        since = (await g.tg.sim.call_log())[-1]["seq"]
        await g.tg.sim.set_fault("getChatMember", force_429_next=3, retry_after=1)
        await g.tg.sim.open_link(visitor, BOT, g.content["code"])
        await g.wait_for(visitor, gate_of, timeout=30)
        row = await pool.fetchrow(
            "SELECT status, failures, attempts FROM inbox"
            " WHERE payload->'message'->'from'->>'id' = $1::text",
            str(visitor),
        )
        assert row["status"] == "done" and row["failures"] == 0
        assert row["attempts"] >= 2
        calls = [c for c in await g.tg.sim.call_log(since) if c["method"] == "getChatMember"]
        refused = [c for c in calls if c["error_code"] == 429]
        assert len(refused) == 3
        # The two channels are asked at once; each retry came the second Telegram asked for
        # after the refusal before it.
        moments = sorted(c["ts"] for c in calls)
        gaps = [b - a for a, b in itertools.pairwise(moments) if b - a > 0.2]
        assert len(gaps) >= 2 and min(gaps) >= 0.95


@pytest.mark.slow
async def test_updates_dead_after_the_retry_time_are_redriven_by_the_command(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """H3: nothing re-queued dead updates; `sponsorbot redrive` does, and they are answered."""
    async with running_gate(pool, db_dsn, tmp_path, retry_for_h=1 / 3600, retry_cap_s=0.2) as g:
        visitor = await g.visitor()
        await g.tg.sim.set_fault("getChatMember", error_rate=1.0, status=502)
        await g.tg.sim.open_link(visitor, BOT, g.content["code"])

        async def dead() -> bool:
            return bool(await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'dead'"))

        await eventually(dead)
        assert await g.bot_messages(visitor) == []
        await g.tg.sim.clear_faults()
        env = {
            **os.environ,
            "SPONSORBOT_DATABASE_URL": db_dsn,
            "SPONSORBOT_DATA_DIR": str(tmp_path),
        }
        command = [sys.executable, "-m", "sponsorbot", "redrive", "--bot", str(g.bot["id"])]
        counted = subprocess.run(
            [*command, "--dry-run"], env=env, capture_output=True, text=True, check=True
        )
        assert "would queue 1 dead update(s) and 0 message(s)" in counted.stdout
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        assert "queued 1 dead update(s)" in done.stdout
        await g.wait_for(visitor, gate_of, timeout=30)
        assert await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'dead'") == 0


async def test_the_owner_api_counts_and_redrives_dead_updates(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """H3: a re-drive from the owner API as well as the command (an editor may only count)."""
    from tests.integration.test_api_owner import connect_bot, owner_api

    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        await pool.execute(
            "INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, status, handled_at,"
            " error) VALUES ($1, 9, 'message', 5, '{}', 'dead', now(), 'ServerError: 502')",
            bot["id"],
        )
        counted = await api.http.get("/api/v1/redrive", params={"bot_id": bot["id"]})
        assert counted.json() == {"updates": 1, "messages": 0}
        unknown = await api.http.post("/api/v1/redrive", json={"bot_id": 999_999})
        assert unknown.status_code == 404
        done = await api.http.post("/api/v1/redrive", json={"bot_id": bot["id"]})
        assert done.json() == {"updates": 1, "messages": 0}
        status = await pool.fetchval("SELECT status FROM inbox WHERE update_id = 9")
        assert status in ("pending", "processing", "done")
    async with owner_api(pool, db_dsn, tmp_path, role="editor") as api:
        refused = await api.http.post("/api/v1/redrive", json={})
        assert refused.status_code == 403


async def test_a_redriven_broadcast_message_is_claimable_again(pool: asyncpg.Pool) -> None:
    """H3: a background row that gave up keeps its claim mark; re-driven, it must lose it,
    or no sender would ever claim it (and the next start would call it unknown)."""
    from sponsorbot.engine.redrive import redrive
    from sponsorbot.engine.sender import GAVE_UP
    from tests.integration.test_janitor import BOT, add_bot

    await add_bot(pool)
    await pool.execute(
        "INSERT INTO outbox (bot_id, chat_id, method, params, priority, status, error, taken_at,"
        " sent_at) VALUES ($1, 5, 'sendMessage', '{}', 10, 'failed', $2, now(), now())",
        BOT,
        GAVE_UP,
    )
    assert (await redrive(pool, BOT)).messages == 1
    row = await pool.fetchrow("SELECT status, taken_at FROM outbox WHERE bot_id = $1", BOT)
    assert row["status"] == "pending" and row["taken_at"] is None
