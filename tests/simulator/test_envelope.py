"""The envelope, authentication, method names and the ways parameters may arrive."""

from __future__ import annotations

import aiohttp
import orjson

from tests.simulator.conftest import Scene, Sim


async def test_get_me_envelope_exactly(sim: Sim, scene: Scene) -> None:
    async with sim.http.get(f"{sim.url}/bot{scene.token}/getMe") as resp:
        assert resp.status == 200
        assert resp.content_type == "application/json"
        body = orjson.loads(await resp.read())
    assert set(body) == {"ok", "result"}
    assert body["ok"] is True
    me = body["result"]
    assert me["id"] == scene.bot["id"] and me["is_bot"] is True
    assert me["username"] == "gate_bot"
    assert "last_name" not in me  # optional fields are left out, not null


async def test_token_format_and_revocation(sim: Sim, scene: Scene) -> None:
    digits, _, secret = scene.token.partition(":")
    assert int(digits) == scene.bot["id"]
    assert len(secret) == 35 and all(c.isalnum() or c in "-_" for c in secret)
    new = await sim.control.revoke_token("gate_bot")
    assert new != scene.token
    reply = await sim.api(scene.token, "getMe")
    assert reply.status == 401
    assert reply.body == {"ok": False, "error_code": 401, "description": "Unauthorized"}
    assert (await sim.ok(new, "getMe"))["id"] == scene.bot["id"]


async def test_unknown_token_and_method(sim: Sim, scene: Scene) -> None:
    assert await sim.error("123:nope", "getMe") == (401, "Unauthorized")
    reply = await sim.api(scene.token, "getMeNow")
    assert reply.body == {"ok": False, "error_code": 404, "description": "Not Found"}


async def test_method_names_are_case_insensitive(sim: Sim, scene: Scene) -> None:
    for name in ("getme", "GETME", "GetMe"):
        assert (await sim.ok(scene.token, name))["id"] == scene.bot["id"]


async def test_query_form_json_and_multipart_bodies(sim: Sim, scene: Scene) -> None:
    chat = scene.user["id"]
    base = f"{sim.url}/bot{scene.token}/sendMessage"
    texts = []
    async with sim.http.get(base, params={"chat_id": str(chat), "text": "by query"}) as r:
        texts.append((await r.json())["result"]["text"])
    async with sim.http.post(base, data={"chat_id": str(chat), "text": "by form"}) as r:
        texts.append((await r.json())["result"]["text"])
    async with sim.http.post(base, json={"chat_id": chat, "text": "by json"}) as r:
        texts.append((await r.json())["result"]["text"])
    form = aiohttp.FormData()
    form.add_field("chat_id", str(chat))
    form.add_field("text", "by multipart")
    form.add_field(
        "reply_markup",
        orjson.dumps({"inline_keyboard": [[{"text": "x", "callback_data": "x"}]]}).decode(),
    )
    async with sim.http.post(base, data=form) as r:
        result = (await r.json())["result"]
        texts.append(result["text"])
        assert result["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "x"
    assert texts == ["by query", "by form", "by json", "by multipart"]


async def test_errors_carry_parameters_only_with_content(sim: Sim, scene: Scene) -> None:
    reply = await sim.api(scene.token, "getChat", chat_id=-100999)
    assert reply.body == {
        "ok": False,
        "error_code": 400,
        "description": "Bad Request: chat not found",
    }
    await sim.control.set_fault("getChat", force_429_next=1, retry_after=3)
    reply = await sim.api(scene.token, "getChat", chat_id=scene.channel["id"])
    assert reply.status == 429
    assert reply.body["parameters"] == {"retry_after": 3}
    assert reply.body["description"] == "Too Many Requests: retry after 3"
    assert reply.headers["Retry-After"] == "3"


async def test_missing_required_parameter(sim: Sim, scene: Scene) -> None:
    assert await sim.error(scene.token, "sendMessage", text="x") == (
        400,
        "Bad Request: chat_id is empty",
    )
    assert await sim.error(scene.token, "sendMessage", chat_id=scene.user["id"]) == (
        400,
        "Bad Request: message text is empty",
    )
