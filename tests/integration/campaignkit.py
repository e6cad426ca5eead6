"""Two bots on the simulator sharing a sponsor channel, with content each, and the features
running: what the campaign tests start from."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.features.all import install
from sponsorbot.features.base import Options
from sponsorbot.features.campaigns.queries import Campaign
from sponsorbot.features.campaigns.service import Draft
from sponsorbot.features.content.service import NewContent
from sponsorbot.web.deps import Services
from tests.kit import RunningEngine, Telegram, eventually, make_settings, running_engine
from tests.kit import simulated_telegram as simulated_telegram

FILE = "https://files.example/report.pdf"
FAST = Options(config_ttl_s=60.0, campaign_check_every_s=0.5)


@dataclass
class Network:
    """Two bots, a sponsor channel both administer, one content item per bot."""

    tg: Telegram
    run: RunningEngine
    features: Services
    bots: list[dict[str, Any]]
    owner: dict[str, Any]
    channel: dict[str, Any]
    contents: list[dict[str, Any]]

    async def campaign(self, **fields: Any) -> Campaign:
        """Create a campaign on the sponsor channel through both bots (fields override)."""
        values: dict[str, Any] = {
            "name": "Winter sponsor",
            "channel": "@" + self.channel["username"],
            "bot_ids": tuple(b["id"] for b in self.bots),
        }
        values.update(fields)
        return await self.features.campaigns.create(Draft(**values), "test")

    async def visitor(self, language: str | None = "en") -> int:
        user = await self.tg.sim.create_user("Visitor", language_code=language)
        return int(user["id"])

    async def gate(self, user: int, bot: int = 0) -> dict[str, Any]:
        """Open bot `bot`'s content link and wait for its gate message."""
        username = self.bots[bot]["username"]
        await self.tg.sim.open_link(user, username, self.contents[bot]["code"])
        found: list[dict[str, Any]] = []

        async def shown() -> bool:
            chat = await self.tg.sim.read_chat(user, username)
            found[:] = [
                m
                for m in chat
                if m["from"] == "bot"
                and not m["deleted"]
                and any("callback_data" in b for r in m["buttons"] for b in r)
            ]
            return bool(found)

        await eventually(shown)
        return found[-1]


def urls(message: dict[str, Any]) -> list[str]:
    """The join buttons of a gate message."""
    return [b["url"] for row in message["buttons"] for b in row if "url" in b]


@contextlib.asynccontextmanager
async def network(
    pool: asyncpg.Pool,
    db_dsn: str,
    tmp_path: Path,
    *,
    join_request: bool = False,
    options: Options = FAST,
    **settings: Any,
) -> AsyncIterator[Network]:
    """Two polling bots, both admins of one public sponsor channel, each with a document."""
    async with simulated_telegram() as tg:
        bots = [await tg.sim.create_bot(f"net{i}_bot") for i in range(2)]
        owner = await tg.sim.create_user("Sponsor")
        channel = await tg.sim.create_channel(
            "Sponsor news",
            username="sponsornews",
            join_request=join_request,
            owner_id=owner["id"],
        )
        for bot in bots:
            await tg.sim.make_admin(channel["id"], bot["id"])
        async with running_engine(
            make_settings(db_dsn, tg.url, tmp_path, **settings), pool, db_dsn
        ) as run:
            features = Services.of(install(run.engine, options=options))
            added = [await run.engine.bots.add(b["token"], "polling") for b in bots]

            async def polling() -> bool:
                listed = await tg.sim.bots()
                return all("chat_member" in b["allowed_updates"] for b in listed)

            await eventually(polling)
            contents = [
                await features.contents.create(
                    b["id"],
                    NewContent(
                        created_by="test",
                        kind="document",
                        items=[{"kind": "document", "file_id": FILE}],
                    ),
                )
                for b in added
            ]
            yield Network(tg, run, features, added, owner, channel, contents)
