"""A polling bot on the simulator with an audience who started it earlier, and the features
running: what the broadcast tests start from."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.features.all import install
from sponsorbot.features.base import Options
from sponsorbot.features.broadcasts.post import Button, Post
from sponsorbot.features.broadcasts.service import Audience, Broadcast, Draft
from sponsorbot.simulator.client import SimulatorClient
from sponsorbot.web.deps import Services
from tests.kit import RunningEngine, Telegram, eventually, make_settings, running_engine
from tests.kit import simulated_telegram as simulated_telegram

FAST = Options(config_ttl_s=60.0, broadcast_every_s=0.2)
POST = Post(
    text="<b>News</b> of the week",
    buttons=((Button("Read", "https://example.com/news"),),),
)


@dataclass
class Audiences:
    """A bot, its audience, and the services."""

    tg: Telegram
    run: RunningEngine
    features: Services
    bot: dict[str, Any]
    sim_bot: dict[str, Any]
    people: list[int]
    pool: asyncpg.Pool

    async def broadcast(
        self, post: Post = POST, audience: Audience | None = None, title: str = "Weekly news"
    ) -> Broadcast:
        """Create a draft and send it now."""
        draft = Draft(title, post, audience or Audience())
        created = await self.features.broadcasts.create(self.bot["id"], draft, "test")
        return await self.features.broadcasts.send(self.bot["id"], created["id"])

    async def get(self, broadcast_id: int) -> Broadcast:
        return await self.features.broadcasts.get(self.bot["id"], broadcast_id)

    async def finished(self, broadcast_id: int, timeout: float = 60.0) -> Broadcast:
        """Wait for the broadcast to be done."""

        async def done() -> bool:
            status: str = (await self.get(broadcast_id))["status"]
            return status == "done"

        await eventually(done, timeout=timeout, every=0.2)
        return await self.get(broadcast_id)

    async def deliveries(self) -> dict[int, int]:
        """How many broadcast messages each chat got, from the simulator's call log."""
        counts: dict[int, int] = {}
        since = 0
        while True:
            calls = await self.tg.sim.call_log(since)
            if not calls:
                return counts
            for call in calls:
                since = max(since, call["seq"])
                if call["method"] in ("sendMessage", "sendPhoto") and call["ok"]:
                    chat = call["chat_id"]
                    if chat in self.people:
                        counts[chat] = counts.get(chat, 0) + 1


async def add_people(
    sim: SimulatorClient,
    pool: asyncpg.Pool,
    bot_id: int,
    username: str,
    count: int,
    language: str = "en",
) -> list[int]:
    """People who started the bot earlier: a chat in the simulator, a row in `people`."""
    users = await sim.create_users(count, language_code=language, started=username)
    await pool.execute(
        "INSERT INTO people (bot_id, user_id, language)"
        " SELECT $1, u, $3 FROM unnest($2::bigint[]) u",
        bot_id,
        users,
        language,
    )
    return users


@contextlib.asynccontextmanager
async def audience(
    pool: asyncpg.Pool,
    db_dsn: str,
    tmp_path: Path,
    count: int,
    *,
    options: Options = FAST,
    **settings: Any,
) -> AsyncIterator[Audiences]:
    """One polling bot with `count` people who started it."""
    async with simulated_telegram() as tg:
        sim_bot = await tg.sim.create_bot("news_bot")
        async with running_engine(
            make_settings(db_dsn, tg.url, tmp_path, **settings), pool, db_dsn
        ) as run:
            features = Services.of(install(run.engine, options=options))
            bot = await run.engine.bots.add(sim_bot["token"], "polling")
            people = await add_people(tg.sim, pool, bot["id"], sim_bot["username"], count)
            yield Audiences(tg, run, features, bot, sim_bot, people, pool)
