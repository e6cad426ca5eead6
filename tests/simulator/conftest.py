"""Start the simulator in-process on a free loopback port and talk to it over real HTTP."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest

from sponsorbot.simulator.client import SimulatorClient
from tests.kit import simulated_telegram


@dataclass
class Reply:
    """One Bot API answer."""

    status: int
    body: dict[str, Any]
    headers: Any

    @property
    def result(self) -> Any:
        assert self.body["ok"] is True, self.body
        return self.body["result"]


@dataclass
class Sim:
    """A running simulator: its URL, a control client and a raw HTTP session."""

    url: str
    control: SimulatorClient
    http: aiohttp.ClientSession

    async def api(self, token: str, method: str, **params: Any) -> Reply:
        """Call a Bot API method with a JSON body."""
        async with self.http.post(f"{self.url}/bot{token}/{method}", json=params) as resp:
            return Reply(resp.status, orjson.loads(await resp.read()), resp.headers)

    async def ok(self, token: str, method: str, **params: Any) -> Any:
        """Call a method that must succeed and return its result."""
        return (await self.api(token, method, **params)).result

    async def error(self, token: str, method: str, **params: Any) -> tuple[int, str]:
        """Call a method that must fail; return (error_code, description)."""
        reply = await self.api(token, method, **params)
        assert reply.body["ok"] is False, reply.body
        assert reply.status == reply.body["error_code"]
        return reply.body["error_code"], reply.body["description"]

    async def updates(self, token: str, **params: Any) -> list[dict[str, Any]]:
        """getUpdates, confirming nothing beyond what ``params`` say."""
        result: list[dict[str, Any]] = await self.ok(token, "getUpdates", **params)
        return result

    async def drain(self, token: str) -> list[dict[str, Any]]:
        """All pending updates, confirmed."""
        got = await self.updates(token)
        if got:
            await self.updates(token, offset=got[-1]["update_id"] + 1)
        return got


SimFactory = Callable[..., Awaitable[Sim]]


@pytest.fixture
async def make_sim() -> AsyncIterator[SimFactory]:
    """Start simulators with given options; all are stopped after the test."""
    async with contextlib.AsyncExitStack() as stack:

        async def start(**options: Any) -> Sim:
            options.setdefault("seed", None)
            telegram = await stack.enter_async_context(simulated_telegram(**options))
            http = await stack.enter_async_context(aiohttp.ClientSession())
            return Sim(telegram.url, telegram.sim, http)

        yield start


@pytest.fixture
async def sim(make_sim: SimFactory) -> Sim:
    """A simulator with default options and seed 7."""
    return await make_sim(seed=7)


@dataclass
class Scene:
    """A bot, a visitor who opened it, and a public channel where the bot is admin."""

    bot: dict[str, Any]
    token: str
    user: dict[str, Any]
    channel: dict[str, Any]


@pytest.fixture
async def scene(sim: Sim) -> Scene:
    """The usual cast, with the bot's pending updates drained."""
    bot = await sim.control.create_bot("gate_bot")
    user = await sim.control.create_user("Ann", "Lee", "ann", "en")
    channel = await sim.control.create_channel("News", username="news")
    await sim.control.make_admin(channel["id"], bot["id"])
    await sim.control.open_link(user["id"], "gate_bot", "hello")
    await sim.drain(bot["token"])
    return Scene(bot, bot["token"], user, channel)
