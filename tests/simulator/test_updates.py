"""getUpdates semantics, conflicts, allowed_updates, and webhook delivery."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from typing import Any

import pytest

from sponsorbot.simulator import botapi
from tests.processes import free_port
from tests.simulator.conftest import Receiver, Scene, Sim


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


@pytest.mark.parametrize("multipart", [False, True])
async def test_a_method_in_the_answer_to_a_delivery_is_run(
    sim: Sim, scene: Scene, receiver: Receiver, multipart: bool
) -> None:
    # WebhookActor: a 2xx answer naming a method runs it for the bot (the result goes nowhere);
    # setWebhook, deleteWebhook and get* methods are not run from there.
    uid = scene.user["id"]
    receiver.answer = {"method": "sendMessage", "chat_id": uid, "text": "Welcome"}
    receiver.answer_multipart = multipart
    await sim.ok(scene.token, "setWebhook", url=receiver.url)
    await sim.control.send_text(uid, "gate_bot", "hi")
    async with asyncio.timeout(5):
        while not any(c["method"] == "sendMessage" for c in await sim.control.all_calls()):
            await asyncio.sleep(0.01)
    messages = await sim.control.read_chat(uid, "gate_bot")
    assert [m["text"] for m in messages] == ["/start hello", "hi", "Welcome"]
    receiver.answers["again"] = {"method": "deleteWebhook"}
    await sim.control.send_text(uid, "gate_bot", "again")
    await sim.control.send_text(uid, "gate_bot", "after")
    # One chat's updates go one after another: "after" (answered with sendMessage again) is
    # delivered once the answer to "again" was dealt with.
    await until_called(sim, "sendMessage", 2)
    assert [c["method"] for c in await sim.control.all_calls()].count("deleteWebhook") == 0
    assert (await sim.ok(scene.token, "getWebhookInfo"))["url"] == receiver.url


async def until_called(sim: Sim, method: str, times: int = 1) -> list[dict[str, Any]]:
    """The call log, once ``method`` is in it ``times`` times."""
    async with asyncio.timeout(5):
        while True:
            calls = await sim.control.all_calls()
            if [c["method"] for c in calls].count(method) >= times:
                return calls
            await asyncio.sleep(0.01)


# Answers to a delivery the simulator cannot read, or whose method cannot be run: the update
# was delivered all the same and must not come again.
UNREADABLE_ANSWERS: list[tuple[str, dict[str, Any] | tuple[str, bytes]]] = [
    (
        "multipart without a boundary",
        (
            "multipart/form-data",
            b'--x\r\nContent-Disposition: form-data; name="method"\r\n\r\nsendMessage\r\n--x--\r\n',
        ),
    ),
    (
        "multipart with an unknown charset",
        (
            "multipart/form-data; boundary=x",
            b"--x\r\nContent-Type: text/plain; charset=nope\r\n"
            b'Content-Disposition: form-data; name="method"\r\n\r\nsendMessage\r\n--x--\r\n',
        ),
    ),
    (
        "multipart that is not UTF-8",
        (
            "multipart/form-data; boundary=x",
            b'--x\r\nContent-Disposition: form-data; name="method"\r\n\r\n\xff\r\n--x--\r\n',
        ),
    ),
    ("a form that is not UTF-8", ("application/x-www-form-urlencoded", b"method=\xff")),
    (
        "a form with an unknown charset",
        ("application/x-www-form-urlencoded; charset=nope", b"method=sendMessage&chat_id=1"),
    ),
    ("JSON cut short", ("application/json", b'{"method": "sendMe')),
    ("JSON that is no object", ("application/json", b"[1]")),
    ("a chat id in superscript", {"method": "sendMessage", "chat_id": "²", "text": "x"}),
    ("a chat id with two minus signs", {"method": "sendMessage", "chat_id": "--5", "text": "x"}),
    ("a chat id of 5000 digits", {"method": "sendMessage", "chat_id": "1" * 5000, "text": "x"}),
]


async def deliver_then_sentinel(
    sim: Sim, scene: Scene, receiver: Receiver, answer: dict[str, Any] | tuple[str, bytes]
) -> None:
    """Deliver a message answered with ``answer``, then one answered with a sendMessage that
    works; return once that one was run (one chat's updates go one after another)."""
    uid = scene.user["id"]
    receiver.answers["bad"] = answer
    receiver.answers["next"] = {"method": "sendMessage", "chat_id": uid, "text": "sentinel"}
    await sim.ok(scene.token, "setWebhook", url=receiver.url)
    await sim.control.send_text(uid, "gate_bot", "bad")
    await sim.control.send_text(uid, "gate_bot", "next")
    async with asyncio.timeout(5):
        while not any(
            c["method"] == "sendMessage" and c["ok"] for c in await sim.control.all_calls()
        ):
            await asyncio.sleep(0.01)


@pytest.mark.parametrize(
    ("case", "answer"), UNREADABLE_ANSWERS, ids=[a[0] for a in UNREADABLE_ANSWERS]
)
async def test_an_answer_that_cannot_be_run_does_not_bring_the_update_again(
    sim: Sim,
    scene: Scene,
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
    case: str,
    answer: dict[str, Any] | tuple[str, bytes],
) -> None:
    caplog.set_level(logging.ERROR)
    await deliver_then_sentinel(sim, scene, receiver, answer)
    assert [u["message"]["text"] for u in receiver.seen] == ["bad", "next"]
    assert receiver.attempts == 2
    messages = await sim.control.read_chat(scene.user["id"], "gate_bot")
    assert messages[-1]["text"] == "sentinel"
    assert not caplog.records, [r.getMessage() for r in caplog.records]


async def test_a_method_that_fails_in_an_answer_is_logged_and_goes_no_further(
    sim: Sim,
    scene: Scene,
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(*args: Any) -> Any:
        raise RuntimeError("a bug in the simulator")

    monkeypatch.setitem(botapi.METHODS, "deletemessage", broken)
    await deliver_then_sentinel(sim, scene, receiver, {"method": "deleteMessage"})
    assert receiver.attempts == 2
    assert "running the method in a webhook answer failed" in caplog.text


async def test_a_method_in_an_answer_meets_the_faults_of_the_endpoint(
    sim: Sim, scene: Scene, receiver: Receiver
) -> None:
    # WebhookActor hands the answer to the client as a new query: limits and faults apply.
    await sim.control.set_fault("sendMessage", force_429_next=1, retry_after=3)
    receiver.answer = {"method": "sendMessage", "chat_id": scene.user["id"], "text": "hey"}
    await sim.ok(scene.token, "setWebhook", url=receiver.url)
    await sim.control.send_text(scene.user["id"], "gate_bot", "hi")
    calls = await until_called(sim, "sendMessage")
    sent = [c for c in calls if c["method"] == "sendMessage"]
    assert [(c["ok"], c["error_code"]) for c in sent] == [(False, 429)]


async def test_updates_go_to_the_webhook_url_as_parse_url_normalises_it(
    sim: Sim, scene: Scene, receiver: Receiver
) -> None:
    # Client::do_set_webhook keeps the URL as given (getWebhookInfo shows it) and WebhookActor
    # delivers to what td::parse_url makes of it: scheme lower-cased, trailing spaces gone.
    given = receiver.url.replace("http://", "HTTP://") + " \t"
    await sim.ok(scene.token, "setWebhook", url=given)
    await sim.control.send_text(scene.user["id"], "gate_bot", "hi")
    await wait_for(lambda: len(receiver.seen) == 1)
    info = await sim.ok(scene.token, "getWebhookInfo")
    assert info["url"] == given and "last_error_date" not in info
