"""Events by month: rows go to their month's partition; the default one only catches strays."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from sponsorbot.db.migrate import load_migrations, migrate
from sponsorbot.features.stats.events import prepare_months

BOT = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
VALUES (3, 'events_bot', '', 'xxxx', 'polling', 'p', '')
"""
ADD = "INSERT INTO events (bot_id, at, kind, user_id) VALUES (3, $1, 'started', $2) RETURNING id"
WHERE = "SELECT tableoid::regclass::text FROM events WHERE user_id = $1"


async def test_rows_land_in_their_months_partition(pool: asyncpg.Pool) -> None:
    await pool.execute(BOT)
    await prepare_months(pool)
    now = await pool.fetchval("SELECT now()")
    await pool.fetchval(ADD, now, 1)
    assert await pool.fetchval(WHERE, 1) == f"events_{now.astimezone(UTC):%Y%m}"


async def test_a_stray_row_moves_out_of_the_default_partition_when_its_month_is_made(
    pool: asyncpg.Pool,
) -> None:
    await pool.execute(BOT)
    old = datetime(2019, 3, 31, 23, 30, tzinfo=UTC)
    kept_id = await pool.fetchval(ADD, old, 2)
    assert await pool.fetchval(WHERE, 2) == "events_default"
    for _ in range(2):  # making a month twice is a no-op
        assert await pool.fetchval("SELECT sponsorbot_events_month($1)", old) == "events_201903"
    assert await pool.fetchval(WHERE, 2) == "events_201903"
    assert await pool.fetchval("SELECT id FROM events WHERE user_id = 2") == kept_id
    assert await pool.fetchval("SELECT count(*) FROM events_default") == 0
    # Months are UTC months, whatever the session's time zone: in Tehran this row is already
    # in April, and April's partition must not claim it.
    async with pool.acquire() as conn:
        await conn.execute("SET TIME ZONE 'Asia/Tehran'")
        april = datetime(2019, 4, 15, tzinfo=UTC)
        assert await conn.fetchval("SELECT sponsorbot_events_month($1)", april) == "events_201904"
        assert await conn.fetchval(WHERE, 2) == "events_201903"
        await conn.execute("RESET TIME ZONE")


async def test_partitioning_keeps_the_rows_and_ids_of_an_existing_table(empty_dsn: str) -> None:
    migrations = load_migrations()
    before = [m for m in migrations if m.version < 7]
    conn = await asyncpg.connect(empty_dsn)
    try:
        await migrate(conn, before)
        await conn.execute(BOT)
        for user, at in enumerate(
            [datetime(2024, 1, 5, tzinfo=UTC), datetime(2024, 2, 9, tzinfo=UTC)], start=10
        ):
            await conn.fetchval(ADD, at, user)
        ids = await conn.fetch("SELECT id, user_id FROM events ORDER BY id")
        await migrate(conn, migrations)
        assert await conn.fetch("SELECT id, user_id FROM events ORDER BY id") == ids
        assert await conn.fetchval(WHERE, 10) == "events_202401"
        assert await conn.fetchval(WHERE, 11) == "events_202402"
        newest = await conn.fetchval(ADD, datetime.now(UTC), 12)
        assert newest > max(r["id"] for r in ids)
    finally:
        await conn.close()
