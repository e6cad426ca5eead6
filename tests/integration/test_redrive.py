"""Re-drive (ADR 0005): a cancelled broadcast's given-up messages stay failed while every
other given-up message goes back to the queue, whichever door asks (the engine with the
features' holds, the owner API, the command), and without `since` only what gave up in the
last 24 hours is queued again."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest

from sponsorbot.engine.redrive import Redriven, redrive, waiting
from sponsorbot.engine.sender import GAVE_UP
from sponsorbot.features.all import redrive_holds
from tests.integration.test_api_owner import connect_bot, owner_api
from tests.integration.test_janitor import BOT, add_bot

# A message that gave up: queued `age` ago, given up `gave_up` ago (a background row, as a
# broadcast's are, when the priority is 10). Answers its id.
FAILED = """
INSERT INTO outbox (bot_id, chat_id, method, params, priority, status, error, taken_at,
                    created_at, sent_at)
VALUES ($1, $2, 'sendMessage', '{}', $3, 'failed', $4, now(), now() - $5::text::interval,
        now() - $6::text::interval)
RETURNING id
"""
BROADCAST = """
INSERT INTO broadcasts (bot_id, title, method, params, post, audience, status, created_by)
VALUES ($1, $2, 'sendMessage', '{}', '{}', '{}', 'sending', 'test')
RETURNING id
"""
# The producer's bookkeeping once it harvested the row: the recipient failed, with its row.
RECIPIENT = """
INSERT INTO broadcast_recipients (bot_id, broadcast_id, user_id, status, outbox_id, error)
VALUES ($1, $2, $3, 'failed', $4, $5)
"""
DEAD = """
INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, status, error, received_at,
                   handled_at)
VALUES ($1, $2, 'message', $2, '{}', 'dead', 'ServerError: 502', now() - $3::text::interval,
        now() - $4::text::interval)
"""


async def failed(
    pool: asyncpg.Pool,
    bot_id: int,
    chat_id: int,
    *,
    priority: int = 0,
    age: str = "2h",
    gave_up: str = "1h",
) -> int:
    row_id: int = await pool.fetchval(FAILED, bot_id, chat_id, priority, GAVE_UP, age, gave_up)
    return row_id


async def status_of(pool: asyncpg.Pool, row_id: int) -> str:
    status: str = await pool.fetchval("SELECT status FROM outbox WHERE id = $1", row_id)
    return status


async def broadcast_message(
    pool: asyncpg.Pool, bot_id: int, broadcast_id: int, user_id: int
) -> int:
    """A message of the broadcast that gave up, as the producer recorded it."""
    row_id = await failed(pool, bot_id, user_id, priority=10)
    await pool.execute(RECIPIENT, bot_id, broadcast_id, user_id, row_id, GAVE_UP)
    return row_id


async def cancelled_since(pool: asyncpg.Pool, bot_id: int) -> dict[str, list[int]]:
    """Two broadcasts whose messages gave up, one of them cancelled since (cancelling takes
    back only the rows still pending and unclaimed, so these stay), and a reply that gave up.
    Answers the outbox rows: `held` must stay failed, `queued` go back to the queue."""
    cancelled = await pool.fetchval(BROADCAST, bot_id, "Cancelled since")
    sending = await pool.fetchval(BROADCAST, bot_id, "Still sending")
    held = [await broadcast_message(pool, bot_id, cancelled, user) for user in (11, 12)]
    queued = [await broadcast_message(pool, bot_id, sending, 11), await failed(pool, bot_id, 13)]
    await pool.execute("UPDATE broadcasts SET status = 'cancelled' WHERE id = $1", cancelled)
    return {"held": held, "queued": queued}


async def statuses(pool: asyncpg.Pool, rows: dict[str, list[int]]) -> dict[str, list[str]]:
    return {k: [await status_of(pool, row_id) for row_id in ids] for k, ids in rows.items()}


async def test_a_cancelled_broadcasts_messages_are_not_redriven(pool: asyncpg.Pool) -> None:
    await add_bot(pool)
    rows = await cancelled_since(pool, BOT)
    holds = redrive_holds()

    assert (await waiting(pool, BOT, holds=holds)).messages == 2
    assert (await redrive(pool, BOT, holds=holds)).messages == 2
    assert await statuses(pool, rows) == {
        "held": ["failed", "failed"],
        "queued": ["pending", "pending"],
    }
    # Nothing is left to queue: the cancelled broadcast's rows stay as they are.
    assert (await waiting(pool, BOT, holds=holds)).messages == 0


async def test_the_owner_api_holds_them_back_too(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """The bots service, which the API and the panel's button call, has the features' holds."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api, "redrive_bot")
        rows = await cancelled_since(pool, bot["id"])
        counted = await api.http.get("/api/v1/redrive", params={"bot_id": bot["id"]})
        assert counted.json() == {"updates": 0, "messages": 2}
        done = await api.http.post("/api/v1/redrive", json={"bot_id": bot["id"]})
        assert done.json() == {"updates": 0, "messages": 2}
        after = await statuses(pool, rows)
        assert after["held"] == ["failed", "failed"]
        # Queued again; the engine's sender may already have sent them to the simulator.
        assert "failed" not in after["queued"]


@pytest.mark.slow
async def test_the_command_holds_them_back_and_defaults_to_a_day(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    await add_bot(pool)
    rows = await cancelled_since(pool, BOT)
    stale = await failed(pool, BOT, 14, age="3 days", gave_up="2 days")
    env = {**os.environ, "SPONSORBOT_DATABASE_URL": db_dsn, "SPONSORBOT_DATA_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "sponsorbot", "redrive", "--bot", str(BOT)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    assert "queued 0 dead update(s) and 2 message(s) again" in done.stdout
    assert await statuses(pool, rows) == {
        "held": ["failed", "failed"],
        "queued": ["pending", "pending"],
    }
    assert await status_of(pool, stale) == "failed"
    help_text = subprocess.run(
        [*command[:4], "--help"], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "last 24 hours" in " ".join(help_text.split())


async def test_without_since_only_the_last_days_failures_are_redriven(pool: asyncpg.Pool) -> None:
    await add_bot(pool)
    # Retried for a whole day before giving up an hour ago: recent, whatever its age.
    recent = await failed(pool, BOT, 21, age="25h", gave_up="1h")
    stale = await failed(pool, BOT, 22, age="3 days", gave_up="2 days")
    await pool.execute(DEAD, BOT, 1, "25h", "1h")
    await pool.execute(DEAD, BOT, 2, "3 days", "2 days")

    assert await waiting(pool, BOT) == Redriven(1, 1)
    done = await redrive(pool, BOT)
    assert (done.updates, done.messages) == (1, 1)
    assert await status_of(pool, recent) == "pending"
    assert await status_of(pool, stale) == "failed"
    dead = await pool.fetch("SELECT update_id FROM inbox WHERE status = 'dead'")
    assert [r["update_id"] for r in dead] == [2]

    # An explicit `since` reaches as far back as it says (by arrival).
    since = datetime.now(UTC) - timedelta(days=4)
    assert await waiting(pool, BOT, since) == Redriven(1, 1)
    further = await redrive(pool, BOT, since)
    assert (further.updates, further.messages) == (1, 1)
    assert await status_of(pool, stale) == "pending"
