"""The engine across real worker processes: order, crashes, polling, leases, shutdown."""

from __future__ import annotations

import asyncio
import collections
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sponsorbot.engine.bots import BotService
from sponsorbot.engine.inbox import store_update
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.telegram import BotApi
from tests.kit import SECRET, Telegram, eventually, simulated_telegram
from tests.processes import clean_environ
from tests.worker_proc import TABLE

pytestmark = pytest.mark.slow


def start_worker(dsn: str, tg: Telegram, log: Path, **env: str) -> subprocess.Popen[bytes]:
    environ = clean_environ(
        SPONSORBOT_DATABASE_URL=dsn,
        SPONSORBOT_TELEGRAM_API=tg.url,
        SPONSORBOT_SECRET_KEY=SECRET,
        SPONSORBOT_DATA_DIR=str(log.parent),
        SPONSORBOT_LOG_LEVEL="DEBUG",
        **env,
    )
    out = log.open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "tests.worker_proc"], env=environ, stdout=out, stderr=out
    )


def stop(*procs: subprocess.Popen[bytes]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


async def add_bots(pool: asyncpg.Pool, tg: Telegram, count: int) -> list[dict[str, Any]]:
    api = BotApi(tg.url)
    service = BotService(pool, api, TokenBox(SECRET.encode()), None)
    bots = []
    try:
        for n in range(count):
            made = await tg.sim.create_bot(f"order{n}_bot")
            await service.add(made["token"], "polling")
            bots.append(made)
    finally:
        await api.close()
    return bots


async def drain(tg: Telegram, token: str) -> None:
    """Confirm every update waiting at the simulator, so only the test's own get handled."""
    api = BotApi(tg.url)
    try:
        got = await api.bot(token).get_updates(timeout=0)
        if got:
            await api.bot(token).get_updates(offset=got[-1]["update_id"] + 1, timeout=0)
    finally:
        await api.close()


def message(update_id: int, user_id: int, text: str = "hi") -> dict[str, Any]:
    user = {"id": user_id, "is_bot": False, "first_name": "U"}
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "from": user,
            "chat": {"id": user_id, "type": "private", "first_name": "U"},
            "date": 1,
            "text": text,
        },
    }


async def test_updates_of_each_person_are_handled_in_order_exactly_once(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    await pool.execute(TABLE)
    async with simulated_telegram() as tg:
        bots = await add_bots(pool, tg, 10)
        next_id: collections.Counter[int] = collections.Counter()
        # 2,000 updates: 100 people (10 per bot), 20 each, interleaved across everyone.
        for _round in range(20):
            for b, bot in enumerate(bots):
                for person in range(10):
                    next_id[bot["id"]] += 1
                    user = 1_000_000 + b * 100 + person
                    await store_update(pool, bot["id"], message(next_id[bot["id"]], user))
        workers = [
            start_worker(db_dsn, tg, tmp_path / f"w{i}.log", TEST_DELAY_S="0.002") for i in range(2)
        ]
        try:

            async def all_done() -> bool:
                n = await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'done'")
                return bool(n == 2000)

            await eventually(all_done, timeout=120)
        finally:
            stop(*workers)
    rows = await pool.fetch("SELECT bot_id, chat_key, update_id, pid FROM test_record ORDER BY seq")
    assert len(rows) == 2000
    assert len({(r["bot_id"], r["update_id"]) for r in rows}) == 2000
    seen: dict[tuple[int, int], list[int]] = collections.defaultdict(list)
    for r in rows:
        seen[(r["bot_id"], r["chat_key"])].append(r["update_id"])
    assert len(seen) == 100
    for ids in seen.values():
        assert ids == sorted(ids)
    assert all(w.returncode == 0 for w in workers)


async def test_a_killed_worker_s_updates_are_finished_by_another(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    await pool.execute(TABLE)
    async with simulated_telegram() as tg:
        (bot,) = await add_bots(pool, tg, 1)
        users = []
        for n in range(30):
            users.append((await tg.sim.create_user(f"P{n}"))["id"])
            await tg.sim.open_link(users[-1], bot["username"])
        await drain(tg, bot["token"])
        for n in range(60):
            await store_update(pool, bot["id"], message(n + 1, users[n % 30]))
        env = {
            "TEST_DELAY_S": "1.0",
            "TEST_REPLY": "1",
            "SPONSORBOT_LOCK_TIMEOUT_S": "2",
            "SPONSORBOT_LEASE_S": "3",
        }
        first = start_worker(db_dsn, tg, tmp_path / "first.log", **env)

        async def holding() -> bool:
            n = await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'processing'")
            return bool(n >= 10)

        try:
            await eventually(holding, timeout=30)
            in_flight = await pool.fetchval(
                "SELECT count(*) FROM inbox WHERE status = 'processing'"
            )
            first.kill()
            first.wait()
        finally:
            stop(first)
        second = start_worker(db_dsn, tg, tmp_path / "second.log", **env)
        try:

            async def finished() -> bool:
                done = await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'done'")
                sent = await pool.fetchval("SELECT count(*) FROM outbox WHERE status = 'sent'")
                return bool(done == 60 and sent == 60)

            await eventually(finished, timeout=90)
        finally:
            stop(second)
        calls = await tg.sim.call_log()
    replies = [c for c in calls if c["method"] == "sendMessage" and c["ok"]]
    assert len(await pool.fetch("SELECT DISTINCT update_id FROM test_record")) == 60
    assert 60 <= len(replies) <= 60 + in_flight


async def test_a_poller_killed_before_its_commit_gets_the_same_updates_again(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    await pool.execute(TABLE)
    async with simulated_telegram() as tg:
        (bot,) = await add_bots(pool, tg, 1)
        user = await tg.sim.create_user("Poll")
        for n in range(5):
            await tg.sim.send_text(user["id"], bot["username"], f"m{n}")
        # Hold the bot's row so the poller's offset update waits inside its transaction.
        blocker = await pool.acquire()
        tx = blocker.transaction()
        await tx.start()
        await blocker.execute("SELECT 1 FROM bots WHERE id = $1 FOR UPDATE", bot["id"])
        first = start_worker(db_dsn, tg, tmp_path / "first.log", SPONSORBOT_LEASE_S="3")
        try:

            async def polled() -> bool:
                calls = await tg.sim.call_log()
                return any(c["method"] == "getUpdates" and c["ok"] for c in calls)

            await eventually(polled, timeout=30)
            await asyncio.sleep(1.0)
            first.kill()
            first.wait()
        finally:
            await tx.rollback()
            await pool.release(blocker)
            stop(first)
        assert await pool.fetchval("SELECT count(*) FROM inbox") == 0
        second = start_worker(db_dsn, tg, tmp_path / "second.log", SPONSORBOT_LEASE_S="3")
        try:

            async def handled() -> bool:
                n = await pool.fetchval("SELECT count(*) FROM test_record")
                return bool(n >= 5)

            await eventually(handled, timeout=60)
            await asyncio.sleep(0.5)
        finally:
            stop(second)
    assert await pool.fetchval("SELECT count(*) FROM inbox") == 5
    assert await pool.fetchval("SELECT count(DISTINCT update_id) FROM test_record") == 5
    assert await pool.fetchval("SELECT count(*) FROM test_record") == 5


async def test_sigterm_finishes_updates_in_hand_and_claims_no_more(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    await pool.execute(TABLE)
    async with simulated_telegram() as tg:
        (bot,) = await add_bots(pool, tg, 1)
        for n in range(100):
            await store_update(pool, bot["id"], message(n + 1, 3_000_000 + n))
        worker = start_worker(db_dsn, tg, tmp_path / "w.log", TEST_DELAY_S="2.0")
        try:

            async def holding() -> bool:
                # All 32 slots taken: no claim can happen until a 2 s handler finishes.
                n = await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'processing'")
                return bool(n == 32)

            await eventually(holding, timeout=30)
            in_hand = {
                r["id"]
                for r in await pool.fetch("SELECT id FROM inbox WHERE status = 'processing'")
            }
            began = time.monotonic()
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=15)
            took = time.monotonic() - began
        finally:
            stop(worker)
    assert worker.returncode == 0
    assert took < 10
    done = {r["id"] for r in await pool.fetch("SELECT id FROM inbox WHERE status = 'done'")}
    assert in_hand <= done
    assert done == in_hand, "claimed new updates after SIGTERM"
    assert await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'processing'") == 0


async def test_one_sender_per_bot_and_a_dead_holder_is_replaced_within_the_lease(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bots = await add_bots(pool, tg, 10)
        users: dict[int, list[int]] = {}
        for bot in bots:
            users[bot["id"]] = []
            for n in range(3):
                user = await tg.sim.create_user(f"L{n}")
                await tg.sim.open_link(user["id"], bot["username"])
                users[bot["id"]].append(user["id"])
            await drain(tg, bot["token"])
        env = {"SPONSORBOT_LEASE_S": "3"}
        a = start_worker(db_dsn, tg, tmp_path / "a.log", **env)
        b = start_worker(db_dsn, tg, tmp_path / "b.log", **env)
        try:

            async def all_leased() -> bool:
                n = await pool.fetchval("SELECT count(*) FROM leases WHERE name LIKE 'send:%'")
                return bool(n == 10)

            await eventually(all_leased, timeout=30)

            async def balanced() -> bool:
                rows = await pool.fetch("SELECT owner FROM leases WHERE name LIKE 'send:%'")
                return len(rows) == 10 and len({r["owner"] for r in rows}) == 2

            await eventually(balanced, timeout=30)

            async def wave(tag: str) -> None:
                for bot in bots:
                    for k in range(5):
                        chat = users[bot["id"]][k % 3]
                        await pool.execute(
                            "INSERT INTO outbox (bot_id, chat_id, method, params) "
                            "VALUES ($1, $2, 'sendMessage', $3)",
                            bot["id"],
                            chat,
                            {"chat_id": chat, "text": f"{tag}{k}"},
                        )

                async def sent() -> bool:
                    n = await pool.fetchval("SELECT count(*) FROM outbox WHERE status = 'sent'")
                    total = await pool.fetchval("SELECT count(*) FROM outbox")
                    return bool(n == total)

                await eventually(sent, timeout=60)

            await wave("a")
            victim_pid = a.pid
            victim = [
                r["name"]
                for r in await pool.fetch("SELECT name, owner FROM leases")
                if f":{victim_pid}:" in r["owner"] and r["name"].startswith("send:")
            ]
            a.kill()
            a.wait()
            killed_at = time.monotonic()

            async def taken_over() -> bool:
                rows = await pool.fetch("SELECT owner FROM leases WHERE name LIKE 'send:%'")
                return len(rows) == 10 and all(f":{b.pid}:" in r["owner"] for r in rows)

            await eventually(taken_over, timeout=30)
            takeover_s = time.monotonic() - killed_at
            await wave("b")
        finally:
            stop(a, b)
        calls = [c for c in await tg.sim.call_log() if c["method"] == "sendMessage" and c["ok"]]
    # Both workers held some bots; everything was sent once; the survivor took over in time.
    assert victim
    assert len(calls) == 100
    texts = await pool.fetch("SELECT bot_id, params->>'text' AS t, chat_id FROM outbox")
    assert len({(r["bot_id"], r["t"], r["chat_id"]) for r in texts}) == 100
    assert takeover_s < 3 + 2 + 2.5, takeover_s
