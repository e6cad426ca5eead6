"""A new monthly `events` partition, made the way the statistics job makes it: each call on a
new connection (the job runs every 6 hours; its pool drops connections idle for 5 minutes),
with stray rows of that month moved out of the default partition.

On a Citus cluster (SPONSORBOT_TEST_POSTGRES=citus) this is the case Citus cancelled as a
distributed deadlock until `migrate` set sequential mode on the function
(db/citus_schema.py); on one server it is the same function, unchanged.
"""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

BOTS = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
SELECT b, 'months_bot_' || b, '', 'xxxx', 'polling', 'months-' || b, ''
FROM generate_series(1, 8) b
"""
# One stray row a bot, so that the move touches every shard.
STRAYS = """
INSERT INTO events (bot_id, at, kind, user_id)
SELECT b, $1, 'started', 1000 + b FROM generate_series(1, 8) b
"""
MAKE = "SELECT sponsorbot_events_month($1)"
# On Citus: a connection per shard, as a table's 32 shards in production take several a node
# (the test tier's 4 fit in one each, and never deadlocked). Any server accepts the option.
MANY_CONNECTIONS = {"citus.force_max_query_parallelization": "on"}
# Counted by partition name: on Citus a row's tableoid is its shard's, on a worker.
IN_PARTITION = "SELECT count(*) FROM {name}"
DEFAULT_ROWS = "SELECT count(*) FROM events_default WHERE at >= $1 AND at < $2"


async def test_new_months_are_made_with_their_stray_rows_moved(
    pool: asyncpg.Pool, db_dsn: str
) -> None:
    await pool.execute(BOTS)
    months = [datetime(2018, m, 10, tzinfo=UTC) for m in (1, 2, 3, 4)]
    for day in months:
        await pool.execute(STRAYS, day)
    for day in months:
        name = f"events_{day:%Y%m}"
        conn = await asyncpg.connect(db_dsn, server_settings=MANY_CONNECTIONS)
        try:
            assert await conn.fetchval(MAKE, day) == name
        finally:
            await conn.close()
        assert await pool.fetchval(IN_PARTITION.format(name=name)) == 8
        start = day.replace(day=1)
        end = start.replace(month=start.month + 1)
        assert await pool.fetchval(DEFAULT_ROWS, start, end) == 0
        # Made twice is a no-op.
        assert await pool.fetchval(MAKE, day) == name
    assert await pool.fetchval("SELECT count(*) FROM events WHERE user_id > 1000") == 32
