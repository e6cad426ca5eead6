"""Broadcasts end to end on the simulator: each person once, outcomes recorded, pause, resume,
cancel, replies first, a refused token."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from tests.integration.broadcastkit import audience


async def test_a_broadcast_reaches_everyone_once_and_records_who_blocked_the_bot(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with audience(pool, db_dsn, tmp_path, 120) as a:
        blocked = a.people[:5]
        for user in blocked:
            await a.tg.sim.block_bot(user, a.sim_bot["username"])
        b = await a.broadcast()
        assert b["status"] == "scheduled"
        done = await a.finished(b["id"])
        assert done["recipients"] == 120
        assert (done["sent"], done["blocked"], done["failed"], done["unknown"]) == (115, 5, 0, 0)
        assert done["progress"]["percent"] == 100.0
        assert [f["status"] for f in done["failures"]] == ["blocked"]
        counts = await a.deliveries()
        assert set(counts) == set(a.people) - set(blocked)
        assert set(counts.values()) == {1}
        marked = await pool.fetchval(
            "SELECT count(*) FROM people WHERE bot_id = $1 AND blocked_at IS NOT NULL",
            a.bot["id"],
        )
        assert marked == 5
        chat = await a.tg.sim.read_chat(a.people[-1], a.sim_bot["username"])
        assert chat[-1]["text"] == "News of the week"
        assert chat[-1]["buttons"] == [[{"text": "Read", "url": "https://example.com/news"}]]
