"""The owner API over real HTTP (uvicorn on a free port) against the simulator."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from openapi_spec_validator import validate
from typer.testing import CliRunner

from sponsorbot.cli import app as cli
from sponsorbot.db.database import Database
from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.features.all import install
from sponsorbot.web.app import create_app
from tests.kit import (
    SECRET,
    Telegram,
    make_settings,
    running_engine,
    serving,
    simulated_telegram,
)


@dataclass
class Api:
    tg: Telegram
    http: httpx.AsyncClient
    token: str


@contextlib.asynccontextmanager
async def owner_api(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, role: str = "owner"
) -> AsyncIterator[Api]:
    async with simulated_telegram() as tg:
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn, worker=False) as run:
            features = install(run.engine)
            app = create_app(settings, Database(db_dsn, pool, None), features)
            _, token = await features.get(TokenService).create("test", role)
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                serving(app) as url,
                httpx.AsyncClient(base_url=url, headers=headers) as http,
            ):
                yield Api(tg, http, token)


async def connect_bot(api: Api, name: str = "api_bot") -> dict[str, Any]:
    bot = await api.tg.sim.create_bot(name)
    answer = await api.http.post("/api/v1/bots", json={"token": bot["token"], "mode": "polling"})
    assert answer.status_code == 201, answer.text
    return {**bot, **answer.json()}


async def test_bots_are_added_checked_and_never_show_their_token(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        assert bot["username"] == "api_bot" and bot["id"] > 0
        again = await api.http.post("/api/v1/bots", json={"token": bot["token"]})
        assert again.status_code == 409
        bad = await api.http.post("/api/v1/bots", json={"token": "not a token"})
        assert bad.status_code == 422 and bad.json()["error"]
        refused = await api.http.post(
            "/api/v1/bots", json={"token": "123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}
        )
        assert refused.status_code == 400 and "401" in refused.json()["error"]
        listed = await api.http.get("/api/v1/bots", params={"limit": 1})
        assert listed.json()["total"] == 1
        assert bot["token"] not in listed.text
        assert bot["token"].split(":")[1] not in str(await pool.fetch("SELECT * FROM bots"))
        webhook = await api.http.get(f"/api/v1/bots/{bot['id']}/webhook")
        assert webhook.status_code == 200 and webhook.json()["info"]["url"] == ""
        paused = await api.http.post(f"/api/v1/bots/{bot['id']}/pause")
        assert paused.json()["status"] == "paused"
        gone = await api.http.delete(f"/api/v1/bots/{bot['id']}")
        assert gone.status_code == 204
        assert (await api.http.get(f"/api/v1/bots/{bot['id']}")).status_code == 404


async def test_channel_refs_in_five_forms_resolve_to_one_channel(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        owner = await api.tg.sim.create_user("Owner")
        channel = await api.tg.sim.create_channel("News", "newsroom", owner_id=owner["id"])
        await api.tg.sim.make_admin(channel["id"], bot["id"])
        url = f"/api/v1/bots/{bot['id']}/channels"
        forms = ["@newsroom", "https://t.me/newsroom", "t.me/newsroom/123", str(channel["id"])]
        for ref in forms:
            answer = await api.http.post(url, json={"ref": ref})
            assert answer.status_code == 201, (ref, answer.text)
            assert answer.json()["chat_id"] == channel["id"]
            assert answer.json()["status"] == "ok"
        assert (await api.http.get(url)).json()["total"] == 1

        # The fifth form: the owner forwards a post of the channel to the bot (an uploader).
        from sponsorbot.engine.inbox import store_update

        user = await api.tg.sim.create_user("Uploader")
        await api.http.post(f"/api/v1/bots/{bot['id']}/uploaders", json={"user_id": user["id"]})
        forward = {
            "update_id": 1,
            "message": {
                "message_id": 5,
                "date": 0,
                "chat": {"id": user["id"], "type": "private"},
                "from": {"id": user["id"], "is_bot": False, "first_name": "U"},
                "forward_origin": {"type": "channel", "chat": {"id": channel["id"]}, "date": 0},
            },
        }
        await api.tg.sim.send_text(user["id"], "api_bot", "hi")  # open the dialog
        await store_update(pool, bot["id"], forward)
        settings = make_settings(db_dsn, api.tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn) as run:
            install(run.engine)

            async def replied() -> bool:
                chat = await api.tg.sim.read_chat(user["id"], "api_bot")
                return any("Channel added" in (m["text"] or "") for m in chat)

            from tests.kit import eventually

            await eventually(replied)
        assert (await api.http.get(url)).json()["total"] == 1

        stranger = await api.tg.sim.create_channel("Other", "otherroom", owner_id=owner["id"])
        refused = await api.http.post(url, json={"ref": "@otherroom"})
        assert refused.status_code == 400
        assert "not an administrator" in refused.json()["error"]
        await api.tg.sim.make_admin(stranger["id"], bot["id"], can_invite_users=False)
        refused = await api.http.post(url, json={"ref": "@otherroom"})
        assert refused.status_code == 400
        assert "can_invite_users" in refused.json()["error"]
        assert refused.json()["missing"] == ["can_invite_users"]
        invite = await api.http.post(url, json={"ref": "https://t.me/+abcdef"})
        assert invite.status_code == 422


async def test_content_from_file_id_and_upload_with_link(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        base = f"/api/v1/bots/{bot['id']}"
        made = await api.http.post(
            f"{base}/contents",
            json={"kind": "document", "file_id": "BQACAgIAAxkabcdefgh", "auto_delete_minutes": 5},
        )
        assert made.status_code == 201, made.text
        body = made.json()
        assert body["link"] == f"https://t.me/api_bot?start={body['code']}"
        assert len(body["code"]) >= 10 and body["code"].isalnum()
        assert body["auto_delete_minutes"] == 5

        files = {"file": ("a.pdf", b"%PDF-1.4 hello", "application/pdf")}
        no_storage = await api.http.post(f"{base}/contents", files=files)
        assert no_storage.status_code == 409
        owner = await api.tg.sim.create_user("Owner")
        storage = await api.tg.sim.create_channel("Storage", private=True, owner_id=owner["id"])
        await api.tg.sim.make_admin(storage["id"], bot["id"])
        patched = await api.http.patch(base, json={"storage_chat_id": storage["id"]})
        assert patched.json()["storage_chat_id"] == storage["id"]
        uploaded = await api.http.post(f"{base}/contents", files=files, data={"caption": "Hi"})
        assert uploaded.status_code == 201, uploaded.text
        assert uploaded.json()["items"][0]["file_id"]
        disabled = await api.http.patch(f"{base}/contents/{body['id']}", json={"enabled": False})
        assert disabled.json()["enabled"] is False
        assert (await api.http.get(f"{base}/contents")).json()["total"] == 2


async def test_roles_limit_what_a_token_may_do(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path, role="analyst") as api:
        assert (await api.http.get("/api/v1/bots")).status_code == 200
        denied = await api.http.post("/api/v1/bots", json={"token": "1:x"})
        assert denied.status_code == 403 and denied.json()["error"]
        anonymous = await api.http.get("/api/v1/bots", headers={"Authorization": ""})
        assert anonymous.status_code == 401
        wrong = await api.http.get("/api/v1/bots", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401


MALFORMED: list[bytes] = [b"{not json", b"[]", b'"text"', b'{"unexpected": 1}', b"null", b""]


async def test_openapi_is_valid_and_every_endpoint_answers_bad_input_with_json_4xx(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        spec = (await api.http.get("/api/openapi.json")).json()
        validate(spec)
        checked = 0
        for path, operations in spec["paths"].items():
            if not path.startswith("/api/v1"):
                continue
            for method, operation in operations.items():
                concrete = (
                    path.replace("{bot_id}", str(bot["id"]))
                    .replace("{decision}", "decline")
                    .replace("{chat_id}", "-1001")
                    .replace("{user_id}", "42")
                    .replace("{content_id}", "1")
                    .replace("{token_id}", "999")
                    .replace("{campaign_id}", "1")
                    .replace("{action}", "pause")
                )
                cases: list[tuple[str, bytes]] = []
                if "requestBody" in operation:
                    cases += [(concrete, body) for body in MALFORMED]
                if "{" in path:
                    bad = path.replace("{bot_id}", "abc").replace("{chat_id}", "x")
                    cases.append((bad.replace("{", "").replace("}", ""), b"{}"))
                if any(p["name"] == "limit" for p in operation.get("parameters", [])):
                    cases.append((concrete + "?limit=0", b""))
                for target, body in cases:
                    answer = await api.http.request(
                        method.upper(),
                        target,
                        content=body,
                        headers={"Content-Type": "application/json"},
                    )
                    assert 400 <= answer.status_code < 500, (method, target, body, answer)
                    assert isinstance(answer.json()["error"], str)
                    checked += 1
        assert checked > 60


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_token_create_prints_the_token_last_and_stores_its_hash(
    db_dsn: str, tmp_path: Path
) -> None:
    env = {
        "SPONSORBOT_DATABASE_URL": db_dsn,
        "SPONSORBOT_DATA_DIR": str(tmp_path),
        "SPONSORBOT_SECRET_KEY": SECRET,
    }
    result = CliRunner().invoke(
        cli, ["token", "create", "--name", "ci", "--role", "editor"], env=env
    )
    assert result.exit_code == 0, result.output
    token = result.stdout.strip().splitlines()[-1]
    assert token.startswith("sbt_") and " " not in token

    async def stored() -> list[Any]:
        conn = await asyncpg.connect(db_dsn)
        try:
            return list(await conn.fetch("SELECT name, role, token_hash FROM api_tokens"))
        finally:
            await conn.close()

    rows = asyncio.run(stored())
    assert [(r["name"], r["role"]) for r in rows] == [("ci", "editor")]
    assert token.encode() not in bytes(rows[0]["token_hash"])
    bad = CliRunner().invoke(cli, ["token", "create", "--name", "x", "--role", "king"], env=env)
    assert bad.exit_code != 0
