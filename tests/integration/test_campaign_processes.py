"""Campaign crediting with two real worker processes: a burst of joins through two bots'
links is credited exactly once per person, whichever process handles which update."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import asyncpg
import pytest

from sponsorbot.features.all import install
from sponsorbot.features.campaigns.service import Draft
from sponsorbot.web.deps import Services
from tests.kit import SECRET, eventually, make_settings, running_engine, simulated_telegram
from tests.processes import clean_environ, start

pytestmark = pytest.mark.slow

JOINS = 1000


async def test_a_thousand_joins_in_ten_seconds_are_credited_once_each(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bots = [await tg.sim.create_bot(f"burst{i}_bot") for i in range(2)]
        owner = await tg.sim.create_user("Sponsor")
        channel = await tg.sim.create_channel("Burst", username="burstnews", owner_id=owner["id"])
        for bot in bots:
            await tg.sim.make_admin(channel["id"], bot["id"])
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn, worker=False) as run:
            features = Services.of(install(run.engine))
            for bot in bots:
                await run.engine.bots.add(bot["token"], "polling")
            campaign = await features.campaigns.create(
                Draft(
                    name="Burst",
                    channel="@burstnews",
                    bot_ids=tuple(b["id"] for b in bots),
                    goal_joins=JOINS * 10,
                    goal_kind="joins",
                ),
                "test",
            )
        links = {link["bot_id"]: link["invite_link"] for link in campaign["links"]}
        users = await tg.sim.create_users(JOINS)
        # Each person opened one of the two bots (the gate showed them its link).
        via = {user: bots[i % 2]["id"] for i, user in enumerate(users)}
        await pool.executemany(
            "INSERT INTO people (bot_id, user_id) VALUES ($1, $2)",
            [(bot_id, user) for user, bot_id in via.items()],
        )
        env = clean_environ(
            SPONSORBOT_DATABASE_URL=db_dsn,
            SPONSORBOT_TELEGRAM_API=tg.url,
            SPONSORBOT_SECRET_KEY=SECRET,
            SPONSORBOT_DATA_DIR=str(tmp_path),
        )
        workers = [
            start("run", "--role", "worker", env=env, log=tmp_path / f"w{i}.log") for i in range(2)
        ]
        try:

            async def polling() -> bool:
                listed = await tg.sim.bots()
                return all("chat_member" in b["allowed_updates"] for b in listed)

            await eventually(polling, timeout=60)
            started = time.monotonic()
            # 1,000 joins at 100 a second; every tenth person leaves and joins again.
            for second in range(10):
                batch = users[second * 100 : (second + 1) * 100]
                await asyncio.gather(*(tg.sim.join(u, invite_link=links[via[u]]) for u in batch))
                for u in batch[::10]:
                    await tg.sim.leave(u, channel["id"])
                    await tg.sim.join(u, invite_link=links[via[u]])
                await asyncio.sleep(max(0.0, started + second + 1 - time.monotonic()))

            # Every chat_member update (both bots see every join and leave) handled.
            expected = 2 * (JOINS + 2 * (JOINS // 10))

            async def handled() -> bool:
                n = await pool.fetchval(
                    "SELECT count(*) FROM inbox WHERE kind = 'chat_member' AND status = 'done'"
                )
                return bool(n == expected)

            await eventually(handled, timeout=60)
        finally:
            for w in workers:
                w.terminate()
            for w in workers:
                w.wait(timeout=30)
    rows = await pool.fetch("SELECT * FROM campaign_members WHERE campaign_id = $1", campaign["id"])
    assert len(rows) == JOINS
    assert all(r["gate_joined_at"] is not None for r in rows)
    assert {r["user_id"]: r["bot_id"] for r in rows} == via
    assert sum(r["left_at"] is not None for r in rows) == JOINS // 10
    assert all(w.returncode == 0 for w in workers)
    # Both processes took a share of the updates.
    for i in range(2):
        log = (tmp_path / f"w{i}.log").read_text()
        share = re.search(r"worker stopped after handling (\d+) updates", log)
        assert share is not None and int(share.group(1)) > 0
