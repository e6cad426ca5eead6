"""getUpdates semantics, conflicts, allowed_updates, and webhook delivery."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from tests.processes import free_port
from tests.simulator.conftest import Scene, Sim


async def test_offset_confirms_and_negative_offset_counts_from_end(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    for text in ("one", "two", "three"):
        await sim.control.send_text(uid, "gate_bot", text)
    got = await sim.updates(scene.token)
    ids = [u["update_id"] for u in got]
    assert [u["message"]["text"] for u in got] == ["one", "two", "three"]
    assert ids == list(range(ids[0], ids[0] + 3))
    # Not confirmed: the same updates come again.
    assert await sim.updates(scene.token) == got
    assert [u["update_id"] for u in await sim.updates(scene.token, limit=1)] == ids[:1]
    assert [u["update_id"] for u in await sim.updates(scene.token, offset=ids[1])] == ids[1:]
    # Confirmed ones are gone for good.
    assert [u["update_id"] for u in await sim.updates(scene.token)] == ids[1:]
    assert [u["update_id"] for u in await sim.updates(scene.token, offset=-1)] == ids[2:]
    assert [u["update_id"] for u in await sim.updates(scene.token)] == ids[2:]
    assert await sim.updates(scene.token, offset=ids[2] + 1) == []


async def test_long_poll_returns_when_an_update_arrives(sim: Sim, scene: Scene) -> None:
    poll = asyncio.create_task(sim.updates(scene.token, timeout=5))
    await asyncio.sleep(0.1)
    assert not poll.done()
    await sim.control.send_text(scene.user["id"], "gate_bot", "wake")
    got = await asyncio.wait_for(poll, 2)
    assert [u["message"]["text"] for u in got] == ["wake"]


async def test_long_poll_times_out_empty(sim: Sim, scene: Scene) -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await sim.updates(scene.token, timeout=1) == []
    assert 0.9 <= loop.time() - started < 2


async def test_newer_poll_ends_older_with_conflict(sim: Sim, scene: Scene) -> None:
    older = asyncio.create_task(sim.api(scene.token, "getUpdates", timeout=5))
    await asyncio.sleep(0.1)
    await sim.updates(scene.token)
    reply = await asyncio.wait_for(older, 2)
    assert reply.status == 409
    assert reply.body["description"].startswith("Conflict: terminated by other getUpdates")


async def test_allowed_updates_filter(sim: Sim, scene: Scene) -> None:
    await sim.updates(scene.token, allowed_updates=["callback_query"])
    await sim.control.send_text(scene.user["id"], "gate_bot", "ignored")
    assert await sim.updates(scene.token) == []


async def test_get_updates_conflicts_with_webhook(sim: Sim, scene: Scene) -> None:
    reply = await sim.api(scene.token, "setWebhook", url="http://127.0.0.1:9/hook")
    assert reply.body == {"ok": True, "result": True, "description": "Webhook was set"}
    assert await sim.error(scene.token, "getUpdates") == (
        409,
        "Conflict: can't use getUpdates method while webhook is active; "
        "use deleteWebhook to delete the webhook first",
    )
    reply = await sim.api(scene.token, "deleteWebhook")
    assert reply.body["description"] == "Webhook was deleted"
    assert await sim.updates(scene.token) == []


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

    async def handle(self, request: web.Request) -> web.Response:
        self.attempts += 1
        body = await request.json()
        if self.attempts <= self.fail_first:
            return web.Response(status=500)
        kind = next(k for k in body if k != "update_id")
        chat = body[kind]["chat"]["id"]
        self.in_flight[chat] += 1
        self.overlap_in_chat |= self.in_flight[chat] > 1
        self.max_parallel = max(self.max_parallel, sum(self.in_flight.values()))
        await asyncio.sleep(self.delay)
        self.in_flight[chat] -= 1
        self.seen.append(body)
        self.secrets.append(request.headers.get("X-Telegram-Bot-Api-Secret-Token"))
        return web.Response(text="ok")


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
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


async def wait_for(condition: Any, seconds: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_webhook_order_per_chat_parallel_across_chats(
    sim: Sim, scene: Scene, receiver: Receiver
) -> None:
    receiver.delay = 0.05
    bo = (await sim.control.create_user("Bo"))["id"]
    ann = scene.user["id"]
    await sim.ok(scene.token, "setWebhook", url=receiver.url, secret_token="s3cret_-X")
    for i in range(4):
        await sim.control.send_text(ann, "gate_bot", f"a{i}")
        await sim.control.send_text(bo, "gate_bot", f"b{i}")
    await wait_for(lambda: len(receiver.seen) == 8)
    by_chat: dict[int, list[str]] = defaultdict(list)
    for update in receiver.seen:
        by_chat[update["message"]["chat"]["id"]].append(update["message"]["text"])
    assert by_chat == {ann: ["a0", "a1", "a2", "a3"], bo: ["b0", "b1", "b2", "b3"]}
    assert not receiver.overlap_in_chat
    assert receiver.max_parallel == 2
    assert set(receiver.secrets) == {"s3cret_-X"}
    info = await sim.ok(scene.token, "getWebhookInfo")
    assert info["url"] == receiver.url and info["pending_update_count"] == 0
    assert "last_error_date" not in info


async def test_webhook_max_connections_one_is_serial(
    sim: Sim, scene: Scene, receiver: Receiver
) -> None:
    receiver.delay = 0.02
    bo = (await sim.control.create_user("Bo"))["id"]
    await sim.ok(scene.token, "setWebhook", url=receiver.url, max_connections=1)
    for user in (scene.user["id"], bo, scene.user["id"], bo):
        await sim.control.send_text(user, "gate_bot", "x")
    await wait_for(lambda: len(receiver.seen) == 4)
    assert receiver.max_parallel == 1


async def test_webhook_retries_and_reports_errors(
    sim: Sim, scene: Scene, receiver: Receiver
) -> None:
    receiver.fail_first = 2
    await sim.control.send_text(scene.user["id"], "gate_bot", "before")
    await sim.ok(scene.token, "setWebhook", url=receiver.url)
    await wait_for(lambda: receiver.attempts >= 1)
    await sim.control.send_text(scene.user["id"], "gate_bot", "after")
    await wait_for(lambda: len(receiver.seen) == 2)
    assert [u["message"]["text"] for u in receiver.seen] == ["before", "after"]
    info = await sim.ok(scene.token, "getWebhookInfo")
    assert (
        info["last_error_message"] == "Wrong response from the webhook: 500 Internal Server Error"
    )
    assert isinstance(info["last_error_date"], int)
    assert info["pending_update_count"] == 0


async def test_webhook_pending_count_and_drop(sim: Sim, scene: Scene) -> None:
    url = f"http://127.0.0.1:{free_port()}/nobody"
    await sim.ok(scene.token, "setWebhook", url=url)
    for _ in range(3):
        await sim.control.send_text(scene.user["id"], "gate_bot", "x")
    await asyncio.sleep(0.2)
    info = await sim.ok(scene.token, "getWebhookInfo")
    assert info["pending_update_count"] == 3
    assert info["last_error_message"] == "Connection refused"
    await sim.ok(scene.token, "deleteWebhook", drop_pending_updates=True)
    assert await sim.updates(scene.token) == []
