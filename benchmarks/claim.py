"""Time one inbox claim with 1,000 and with 1,000,000 waiting updates, side by side.

    python benchmarks/claim.py [--small 1000] [--large 1000000] [--repeat 200]

Runs on a throwaway embedded PostgreSQL (or SPONSORBOT_DATABASE_URL's server, in a new
database: scratch.py). Each claim runs in a transaction that is rolled back, so every claim sees
the same queue. The claim should cost the same whatever the queue length: the ratio should be
near 1.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import asyncpg
from scratch import scratch_database

from sponsorbot.db.migrate import migrate
from sponsorbot.db.pool import connect
from sponsorbot.engine.inbox import CLAIM

FILL = """
INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload)
SELECT 1, g, 'message', g % 50000, '{"update_id": 1}'::jsonb FROM generate_series(1, $1) g
"""


async def time_claims(conn: asyncpg.Connection, repeat: int) -> list[float]:
    """Milliseconds per claim of 32 updates, `repeat` times."""
    times = []
    for _ in range(repeat):
        tx = conn.transaction()
        await tx.start()
        began = time.perf_counter()
        rows = await conn.fetch(CLAIM, 64, 32, [1], 120.0, 1)
        times.append((time.perf_counter() - began) * 1000)
        await tx.rollback()
        assert len(rows) == 32
    return times


async def measure(dsn: str, waiting: int, repeat: int) -> list[float]:
    """Fill a fresh queue with `waiting` rows and time the claim."""
    conn = await connect(dsn)
    try:
        await conn.execute("TRUNCATE inbox")
        await conn.execute(FILL, waiting)
        await conn.execute("VACUUM ANALYZE inbox")
        await time_claims(conn, 20)  # warm the plan cache and the buffers
        return await time_claims(conn, repeat)
    finally:
        await conn.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    async with scratch_database("sponsorbot_bench") as dsn:
        conn = await connect(dsn)
        await migrate(conn)
        await conn.execute(
            "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
            " webhook_secret_hash) VALUES (1, 'bench', '', 'xxxx', 'polling', 'p', '')"
        )
        await conn.close()
        small = await measure(dsn, args.small, args.repeat)
        large = await measure(dsn, args.large, args.repeat)
    print(f"{'waiting rows':>14} {'median ms':>10} {'p95 ms':>8}")
    for n, times in ((args.small, small), (args.large, large)):
        p95 = statistics.quantiles(times, n=20)[18]
        print(f"{n:>14,} {statistics.median(times):>10.3f} {p95:>8.3f}")
    print(
        f"ratio (large / small, median): {statistics.median(large) / statistics.median(small):.2f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
