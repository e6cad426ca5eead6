"""Flood limits, injected faults, latency, the call log and seeded reproducibility."""

from __future__ import annotations

import asyncio
import time

from tests.simulator.conftest import Scene, Sim, SimFactory


async def test_more_than_five_a_second_to_one_chat_is_429(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    for i in range(5):
        await sim.ok(scene.token, "sendMessage", chat_id=uid, text=str(i))
    reply = await sim.api(scene.token, "sendMessage", chat_id=uid, text="6th")
    assert reply.status == 429
    assert reply.body == {
        "ok": False,
        "error_code": 429,
        "description": "Too Many Requests: retry after 1",
        "parameters": {"retry_after": 1},
    }
    assert reply.headers["Retry-After"] == "1"
    await asyncio.sleep(1.05)
    await sim.ok(scene.token, "sendMessage", chat_id=uid, text="later")


async def test_per_bot_limit_across_chats(sim: Sim, scene: Scene) -> None:
    await sim.control.set_limits(per_bot_per_second=4)
    users = [(await sim.control.create_user(f"U{i}"))["id"] for i in range(5)]
    for uid in users:
        await sim.control.open_link(uid, "gate_bot")
    replies = [await sim.api(scene.token, "sendMessage", chat_id=u, text="x") for u in users]
    assert [r.status for r in replies] == [200, 200, 200, 200, 429]
    assert replies[-1].body["parameters"]["retry_after"] >= 1


async def test_forced_429_and_5xx_faults(sim: Sim, scene: Scene) -> None:
    await sim.control.set_fault("getChatMember", force_429_next=2, retry_after=7)
    args = {"chat_id": scene.channel["id"], "user_id": scene.user["id"]}
    statuses = [(await sim.api(scene.token, "getChatMember", **args)).status for _ in range(3)]
    assert statuses == [429, 429, 200]
    await sim.control.set_fault("*", error_rate=1.0, status=502)
    assert await sim.error(scene.token, "getMe") == (502, "Bad Gateway")
    await sim.control.clear_faults()
    await sim.ok(scene.token, "getMe")


async def test_timeout_fault_hangs(sim: Sim, scene: Scene) -> None:
    await sim.control.set_fault("getMe", timeout_rate=1.0, hang_seconds=0.3)
    started = time.monotonic()
    code, _ = await sim.error(scene.token, "getMe")
    assert code == 504 and time.monotonic() - started >= 0.3


async def test_latency_applies_to_every_call(sim: Sim, scene: Scene) -> None:
    await sim.control.set_latency(100, 50)
    started = time.monotonic()
    await asyncio.gather(*(sim.ok(scene.token, "getMe") for _ in range(20)))
    elapsed = time.monotonic() - started
    # Concurrent calls wait side by side (asyncio.sleep, not a blocking wait).
    assert 0.1 <= elapsed < 0.6


async def test_call_log_pages_with_since(sim: Sim, scene: Scene) -> None:
    before = time.time()
    uid = scene.user["id"]
    async with sim.http.post(
        f"{sim.url}/bot{scene.token}/sendMessage", data={"chat_id": str(uid), "text": "hi"}
    ) as resp:
        sent = (await resp.json())["result"]
    await sim.api(scene.token, "getChatMember", chat_id=-1, user_id=uid)
    calls = await sim.control.call_log()
    seqs = [c["seq"] for c in calls]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    send, failed = calls[-2], calls[-1]
    assert send["method"] == "sendMessage" and send["ok"] is True
    assert send["chat_id"] == uid and send["bot_id"] == scene.bot["id"]
    assert send["message_id"] == sent["message_id"]
    assert before <= send["ts"] <= time.time()
    assert failed["ok"] is False and failed["error_code"] == 400
    assert await sim.control.call_log(since=send["seq"]) == [failed]
    assert await sim.control.call_log(since=failed["seq"]) == []


async def test_same_seed_same_world(make_sim: SimFactory) -> None:
    worlds = []
    for _ in range(2):
        sim = await make_sim(seed=42)
        bot = await sim.control.create_bot("seed_bot")
        user = await sim.control.create_user("Dee")
        await sim.control.open_link(user["id"], "seed_bot")
        file = await sim.control.send_file(user["id"], "seed_bot", "document")
        worlds.append((bot["token"], user["id"], file["file_id"]))
    assert worlds[0] == worlds[1]
    other = await make_sim(seed=43)
    assert (await other.control.create_bot("seed_bot"))["token"] != worlds[0][0]


async def test_reset_empties_the_world(sim: Sim, scene: Scene) -> None:
    await sim.control.reset()
    assert await sim.error(scene.token, "getMe") == (401, "Unauthorized")
    again = await sim.control.create_bot("gate_bot")
    assert again["token"] == scene.token  # same seed, same ids
