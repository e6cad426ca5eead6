"""Start the simulator in-process on a free loopback port and talk to it over real HTTP.

Every answer the tests receive is checked against the table of Bot API types
(:mod:`sponsorbot.simulator.types`): a result that lacks a required field or carries one the
type does not have fails the test that received it. Every object the simulator builds is
checked too, as it is built (``check_shapes``, which the simulator itself leaves off).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web

from sponsorbot.simulator.client import SimulatorClient
from sponsorbot.simulator.types import RESULTS, check_shapes, problems
from tests.kit import simulated_telegram
from tests.processes import free_port

RESULT_KINDS = {method.lower(): kind for method, kind in RESULTS.items()}
ERROR_FIELDS = {"ok", "error_code", "description", "parameters"}


def check_answer(method: str, body: dict[str, Any]) -> None:
    """Fail unless ``body`` is a Bot API answer whose result fits the method's return type."""
    if body["ok"] is True:
        assert set(body) <= {"ok", "result", "description"}, body
        found = problems(RESULT_KINDS[method.lower()], body["result"])
        assert not found, f"{method} answered a malformed result: {found}"
    else:
        assert set(body) <= ERROR_FIELDS, body
        assert isinstance(body["error_code"], int) and isinstance(body["description"], str)


def check_update(update: dict[str, Any]) -> None:
    """Fail unless ``update`` (delivered to a webhook) is a well-formed Update."""
    found = problems("Update", update)
    assert not found, f"malformed update: {found}"


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
            reply = Reply(resp.status, orjson.loads(await resp.read()), resp.headers)
        if method.lower() in RESULT_KINDS:
            check_answer(method, reply.body)
        return reply

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


@pytest.fixture(autouse=True)
def checked_shapes() -> Iterator[None]:
    """Every object the simulator builds is checked against the table while a test runs."""
    previous = check_shapes(True)
    yield
    check_shapes(previous)


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


@dataclass
class Receiver:
    """A tiny webhook endpoint that records what arrives and can fail on purpose."""

    url: str = ""
    fail_first: int = 0
    delay: float = 0.0
    seen: list[dict[str, Any]] = field(default_factory=list)
    secrets: list[str | None] = field(default_factory=list)
    attempts: int = 0
    in_flight: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    max_parallel: int = 0
    overlap_in_chat: bool = False
    # What to answer a delivery with: a Bot API call the simulator then makes for the bot,
    # as JSON or, as aiogram sends it, as multipart/form-data.
    answer: dict[str, Any] | None = None
    answer_multipart: bool = False
    # Answers to the delivery of a message with this text, before ``answer``: a call as JSON,
    # or a raw body with its Content-Type.
    answers: dict[str, dict[str, Any] | tuple[str, bytes]] = field(default_factory=dict)

    async def handle(self, request: web.Request) -> web.Response:
        self.attempts += 1
        body = await request.json()
        if self.attempts <= self.fail_first:
            return web.Response(status=500)
        check_update(body)
        payload = next(v for k, v in body.items() if k != "update_id")
        # A callback query has no chat of its own: its message's chat, or whoever pressed.
        chat = (payload.get("chat") or payload.get("message", {}).get("chat") or payload["from"])[
            "id"
        ]
        self.in_flight[chat] += 1
        self.overlap_in_chat |= self.in_flight[chat] > 1
        self.max_parallel = max(self.max_parallel, sum(self.in_flight.values()))
        await asyncio.sleep(self.delay)
        self.in_flight[chat] -= 1
        self.seen.append(body)
        self.secrets.append(request.headers.get("X-Telegram-Bot-Api-Secret-Token"))
        by_text = self.answers.get(payload.get("text", ""))
        if isinstance(by_text, tuple):
            return web.Response(body=by_text[1], headers={"Content-Type": by_text[0]})
        if by_text is not None:
            return web.json_response(by_text)
        if self.answer is None:
            return web.Response(text="ok")
        if not self.answer_multipart:
            return web.json_response(self.answer)
        with aiohttp.MultipartWriter("form-data") as writer:
            for key, value in self.answer.items():
                part = writer.append(str(value))
                part.set_content_disposition("form-data", name=key)
        return web.Response(body=writer)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    """A webhook endpoint on a free loopback port; every update it receives is checked."""
    rec = Receiver()
    app = web.Application()
    app.router.add_post("/hook", rec.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    rec.url = f"http://127.0.0.1:{port}/hook"
    yield rec
    await runner.cleanup()
