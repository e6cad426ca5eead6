"""Fast failover: SIGKILL of a worker under load, with the default lease and lock times (30 s
and 120 s); the other worker answers the dead one's bots within 3 s (engine/liveness.py)."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import asyncpg
import pytest

from sponsorbot.engine.inbox import store_update
from tests.integration.test_engine_processes import add_bots, drain, message, start_worker, stop
from tests.kit import eventually, simulated_telegram
from tests.worker_proc import TABLE

pytestmark = pytest.mark.slow

BOTS = 4
PEOPLE = 20
RATE = 10  # updates a second, over every bot and person
# Kill to the last reply of a dead worker's bots that came late: 1.8-2.3 s in 7 runs here
# (5.3-6.0 s before the beat went to twice a second and the take-over lost its waits).
BOUND_S = 3.0

# Each reply's moment at Telegram, with the update it answers: outbox rows joined with the
# simulator's log of accepted sends (bot, chat, message id) passed in as arrays.
REPLIES = """
SELECT o.bot_id, i.update_id, i.received_at, c.ts AS sent_at
FROM outbox o JOIN inbox i ON i.id = o.inbox_id
JOIN unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::float8[]) AS c (bot_id, chat_id, mid, ts)
  ON c.bot_id = o.bot_id AND c.chat_id = o.chat_id AND c.mid = o.result_message_id
WHERE o.status = 'sent'
"""


async def test_sigkill_of_a_worker_is_taken_over_within_three_seconds(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """Fast failover (issue 15): the rest of the killed worker's bot was answered 47 s later;
    then 5 s; every reply of the dead worker's bots now goes out within 3 s of the kill (or of
    the update's arrival, if later)."""
    await pool.execute(TABLE)
    async with simulated_telegram() as tg:
        bots = await add_bots(pool, tg, BOTS)
        users = []
        for n in range(PEOPLE):
            users.append((await tg.sim.create_user(f"F{n}"))["id"])
            for bot in bots:
                await tg.sim.open_link(users[-1], bot["username"])
        for bot in bots:
            await drain(tg, bot["token"])
        env = {"TEST_DELAY_S": "0.3", "TEST_REPLY": "1"}
        workers = [start_worker(db_dsn, tg, tmp_path / f"w{n}.log", **env) for n in range(2)]
        try:

            async def spread() -> bool:
                owners = await pool.fetch(
                    "SELECT owner, count(*) FROM leases"
                    " WHERE name LIKE 'send:%' AND expires_at > now() GROUP BY owner"
                )
                n = await pool.fetchval("SELECT count(*) FROM workers")
                return n == 2 and sorted(r["count"] for r in owners) == [BOTS // 2] * 2

            await eventually(spread, timeout=30)
            update_id = 0
            stop_feeding = asyncio.Event()

            async def feed() -> None:
                nonlocal update_id
                pairs = itertools.cycle(itertools.product(users, bots))
                while not stop_feeding.is_set():
                    update_id += 1
                    user, bot = next(pairs)
                    await store_update(pool, bot["id"], message(update_id, user))
                    # As the webhook and the poller do: wake the workers.
                    await pool.execute("SELECT pg_notify('sponsorbot', 'test/inbox')")
                    await asyncio.sleep(1 / RATE)

            feeder = asyncio.create_task(feed())
            await asyncio.sleep(3)
            owner = await pool.fetchval(
                "SELECT owner FROM leases WHERE name = $1", f"send:{bots[0]['id']}"
            )
            victim = next(w for w in workers if f":{w.pid}:" in owner)
            its_bots = {
                int(r[0])
                for r in await pool.fetch(
                    "SELECT substr(name, 6) FROM leases WHERE name LIKE 'send:%' AND owner = $1",
                    owner,
                )
            }
            victim.kill()
            victim.wait()
            killed_at = float(await pool.fetchval("SELECT extract(epoch FROM clock_timestamp())"))
            killed = time.monotonic()
            await asyncio.sleep(6)
            stop_feeding.set()
            await feeder

            async def finished() -> bool:
                n = await pool.fetchval("SELECT count(*) FROM inbox WHERE status <> 'done'")
                unsent = await pool.fetchval("SELECT count(*) FROM outbox WHERE status <> 'sent'")
                return bool(n == 0 and unsent == 0)

            await eventually(finished, timeout=60)
            finished_s = time.monotonic() - killed
        finally:
            stop(*workers)
        calls = [c for c in await tg.sim.all_calls() if c["method"] == "sendMessage" and c["ok"]]
    replies = await pool.fetch(
        REPLIES,
        [c["bot_id"] for c in calls],
        [c["chat_id"] for c in calls],
        [c["message_id"] for c in calls],
        [c["ts"] for c in calls],
    )
    # For each reply of the dead worker's bots sent after the kill: how long after the kill,
    # or after its update came if that was later, it reached Telegram.
    late = sorted(
        (
            r["sent_at"] - max(r["received_at"].timestamp(), killed_at),
            r["update_id"],
        )
        for r in replies
        if r["bot_id"] in its_bots and r["sent_at"] > killed_at
    )
    first = min(
        r["sent_at"] for r in replies if r["bot_id"] in its_bots and r["sent_at"] > killed_at
    )
    print(
        f"answering again {first - killed_at:.2f} s after the kill;"
        f" the latest reply {late[-1][0]:.2f} s; all done in {finished_s:.1f} s"
    )
    assert len(its_bots) == BOTS // 2
    assert late[-1][0] < BOUND_S, (late[-5:], finished_s)
    recorded = await pool.fetchval("SELECT count(DISTINCT update_id) FROM test_record")
    assert recorded == update_id
    # At most the replies the victim had sent but not yet recorded come twice.
    assert update_id <= len(calls) <= update_id + 40
