"""A running gate on the simulator: a bot with channels, a gate and one content item."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.features.all import install
from sponsorbot.features.content.service import NewContent
from sponsorbot.web.deps import Services
from tests.kit import RunningEngine, Telegram, eventually, make_settings, running_engine
from tests.kit import simulated_telegram as simulated_telegram

BOT = "gate_bot"
FILE = "https://files.example/report.pdf"


@dataclass
class Gate:
    """Everything a gate test touches."""

    tg: Telegram
    run: RunningEngine
    features: Services
    bot: dict[str, Any]
    owner: dict[str, Any]
    channels: list[dict[str, Any]]
    content: dict[str, Any]

    async def visitor(self, language: str | None = "en") -> int:
        user = await self.tg.sim.create_user("Visitor", language_code=language)
        return int(user["id"])

    async def bot_messages(self, user: int) -> list[dict[str, Any]]:
        chat = await self.tg.sim.read_chat(user, BOT)
        return [m for m in chat if m["from"] == "bot" and not m["deleted"]]

    async def wait_for(self, user: int, check: Any, timeout: float = 20.0) -> list[dict[str, Any]]:
        """Wait until check(live bot messages) is true; return them."""
        seen: list[dict[str, Any]] = []

        async def ok() -> bool:
            seen[:] = await self.bot_messages(user)
            return bool(check(seen))

        await eventually(ok, timeout=timeout)
        return seen


def gate_of(messages: list[dict[str, Any]]) -> Any:
    """The open gate message, if any (None)."""
    gates = [m for m in messages if any("callback_data" in b for r in m["buttons"] for b in r)]
    assert len(gates) <= 1, "more than one gate message is open"
    return gates[0] if gates else None


def join_urls(message: dict[str, Any]) -> list[str]:
    """The join buttons' URLs of a gate message."""
    return [b["url"] for row in message["buttons"] for b in row if "url" in b]


def joined_button(message: dict[str, Any]) -> str:
    """The callback data of "I've joined"."""
    return str(
        next(b["callback_data"] for r in message["buttons"] for b in r if "callback_data" in b)
    )


async def members_and_strangers(g: Gate, count: int) -> tuple[list[int], list[int]]:
    """Members of every gate channel (they pass at once) and strangers (asked about)."""
    members, strangers = [], []
    for n in range(count):
        visitor = await g.visitor()
        if n % 2:
            for channel in g.channels:
                await g.tg.sim.join(visitor, channel["id"])
            members.append(visitor)
        else:
            strangers.append(visitor)
    return members, strangers


@contextlib.asynccontextmanager
async def running_gate(
    pool: asyncpg.Pool,
    db_dsn: str,
    tmp_path: Path,
    *,
    channels: int = 2,
    private: bool = False,
    request_counts: bool = False,
    content: dict[str, Any] | None = None,
    **settings: Any,
) -> AsyncIterator[Gate]:
    """A bot in polling mode with `channels` gate channels and one document."""
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot(BOT)
        owner = await tg.sim.create_user("Owner")
        made = []
        for i in range(channels):
            channel = await tg.sim.create_channel(
                f'Channel <{i}> & "co"',
                username=None if private else f"gatechan{i}",
                private=private,
                owner_id=owner["id"],
            )
            await tg.sim.make_admin(channel["id"], bot["id"])
            made.append(channel)
        async with running_engine(
            make_settings(db_dsn, tg.url, tmp_path, **settings), pool, db_dsn
        ) as run:
            features = Services.of(install(run.engine))
            await run.engine.bots.add(bot["token"], "polling")

            # Until the poller's first getUpdates names allowed_updates, Telegram (and the
            # simulator) drops chat_member updates: a join made before that is never seen.
            async def polling() -> bool:
                bots = await tg.sim.bots()
                return any("chat_member" in b["allowed_updates"] for b in bots)

            await eventually(polling)
            for channel in made:
                await features.channels.add(bot["id"], str(channel["id"]))
            await features.bot_settings.set_gate(
                bot["id"], [(c["id"], request_counts) for c in made]
            )
            options: dict[str, Any] = {
                "kind": "document",
                "items": [{"kind": "document", "file_id": FILE}],
            }
            options.update(content or {})
            item = await features.contents.create(
                bot["id"], NewContent(created_by="test", **options)
            )

            # The channels' periodic re-check runs first at start, then every 10 minutes; if
            # its first run comes after the channels were added, it asks getChatMember about
            # the bot in each. Tests count those calls and inject faults into them, so they
            # begin only once it has run.
            async def rechecked() -> bool:
                return run.engine.scheduler.runs.get("channel_watch", 0) >= 1

            await eventually(rechecked)
            yield Gate(tg, run, features, bot, owner, made, item)
