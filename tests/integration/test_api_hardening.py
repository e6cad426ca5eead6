"""The owner API's input and authorization hardening (review findings M1, M7, M12, M14, L9,
L12 and issue 15's "Bad input"), over real HTTP against the simulator."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from sponsorbot.features.accounts.api_tokens import TokenService
from tests.integration.panel_kit import PanelApp, add_member, client, csrf_of, sign_in
from tests.integration.test_api_owner import Api, connect_bot, owner_api

BIG = 2**63  # one past the largest bigint
FILE_ID = "BQACAgIAAxkBAAIBY2ZkZWZn"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_bodies_are_capped_before_authentication(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """M1: an anonymous 2 MB POST is a 413 on its Content-Length, not parsed then refused; a
    token raises the cap to 1 MiB for JSON and to the upload limit on the upload routes."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        huge = b'{"token": "' + b"x" * 2_000_000 + b'"}'
        anonymous = await api.http.post(
            "/api/v1/bots", content=huge, headers={"Authorization": "", "Content-Type": "x"}
        )
        assert anonymous.status_code == 413 and anonymous.json()["code"] == "body_too_large"
        signed = await api.http.post("/api/v1/bots", content=huge)
        assert signed.status_code == 413 and signed.json()["limit"] == 1024 * 1024

        async def streamed() -> Any:
            for _ in range(40):
                yield b"x" * 50_000

        chunked = await api.http.post("/api/v1/bots", content=streamed())
        assert chunked.status_code == 413

        # 2 MB file with a token: past the cap, on to the route (no storage chat: 409).
        files = {"file": ("a.pdf", b"%PDF" + b"x" * 2_000_000, "application/pdf")}
        upload = await api.http.post(f"/api/v1/bots/{bot['id']}/contents", files=files)
        assert upload.status_code == 409
        # The same upload without a token: capped at 64 KiB.
        anonymous_upload = await api.http.post(
            f"/api/v1/bots/{bot['id']}/contents", files=files, headers={"Authorization": ""}
        )
        assert anonymous_upload.status_code == 413
        sign_in_form = await api.http.post("/signin", data={"email": "x" * 100_000})
        assert sign_in_form.status_code == 413 and sign_in_form.text.startswith("413")


async def test_file_ids_are_telegram_file_ids(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """M7: a URL or a file path as file_id is refused wherever a file_id enters."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        contents = f"/api/v1/bots/{bot['id']}/contents"
        for bad in ("file:///etc/shadow", "http://169.254.169.254/latest/meta-data", "short"):
            one = await api.http.post(contents, json={"kind": "document", "file_id": bad})
            assert one.status_code == 422 and one.json()["code"] == "file_id_shape", one.text
            batch = {"kind": "batch", "items": [{"kind": "photo", "file_id": bad}]}
            assert (await api.http.post(contents, json=batch)).status_code == 422
            post = {"title": "T", "post": {"text": "x", "media_kind": "photo", "file_id": bad}}
            broadcast = await api.http.post(f"/api/v1/bots/{bot['id']}/broadcasts", json=post)
            assert broadcast.status_code == 422
        good = await api.http.post(contents, json={"kind": "video", "file_id": FILE_ID})
        assert good.status_code == 201
        assert await pool.fetchval("SELECT count(*) FROM contents") == 1


async def test_auto_delete_stays_within_telegrams_48_hours(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """M12: auto-delete above 2820 minutes (47 h) is refused; 2820 is accepted."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        contents = f"/api/v1/bots/{bot['id']}/contents"
        item = {"kind": "text", "text": "hello"}
        late = await api.http.post(contents, json={**item, "auto_delete_minutes": 2821})
        assert late.status_code == 422 and "47 hours" in late.text
        made = await api.http.post(contents, json={**item, "auto_delete_minutes": 2820})
        assert made.status_code == 201
        patched = await api.http.patch(
            f"{contents}/{made.json()['id']}", json={"auto_delete_minutes": 7 * 24 * 60}
        )
        assert patched.status_code == 422
        schema = (await api.http.get("/api/openapi.json")).json()
        options = schema["components"]["schemas"]["TextContentIn"]["properties"]
        assert options["auto_delete_minutes"]["maximum"] == 2820


async def test_panel_auto_delete_is_capped_too(panel: PanelApp) -> None:
    """M12: the panel's content options refuse 10080 minutes, which it used to offer."""
    sim: Any = panel.sim
    bot = await sim.create_bot("cap_bot")
    added = await panel.engine.bots.add(bot["token"], "polling")
    async with client(panel.app) as http:
        await sign_in(http, await add_member(panel.pool, "owner"))
        csrf = await csrf_of(http, "/bots")
        base = f"/bots/{added['id']}/content"
        week = await http.post(base, data={"csrf": csrf, "text": "Hi", "auto_delete": "10080"})
        assert week.status_code == 422 and "2820" in week.text
        digits = await http.post(base, data={"csrf": csrf, "text": "Hi", "auto_delete": "²"})
        assert digits.status_code == 422
        nul = await http.post(base, data={"csrf": csrf, "text": "a\x00b"})
        assert nul.status_code == 422
        assert await panel.pool.fetchval("SELECT count(*) FROM contents") == 0


async def token_of(pool: asyncpg.Pool, role: str, **options: Any) -> tuple[int, str]:
    row, token = await TokenService(pool).create(f"{role} token", role, **options)
    return int(row["id"]), token


async def test_the_api_follows_the_panels_policy(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """M14: removing a bot is the owner's alone; visitor texts are owner/admin; an admin
    cannot revoke the owner's token; tokens expire; a removed member's tokens stop."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        owner_id = await pool.fetchval("SELECT id FROM api_tokens WHERE role = 'owner'")
        _, admin = await token_of(pool, "admin")
        _, editor = await token_of(pool, "editor")
        remove = await api.http.delete(f"/api/v1/bots/{bot['id']}", headers=bearer(admin))
        assert remove.status_code == 403
        texts: dict[str, Any] = {"overrides": {"en": {}}}
        edited = await api.http.put(
            f"/api/v1/bots/{bot['id']}/texts", json=texts, headers=bearer(editor)
        )
        assert edited.status_code == 403
        assert (
            await api.http.put(f"/api/v1/bots/{bot['id']}/texts", json=texts, headers=bearer(admin))
        ).status_code == 200

        cut_off = await api.http.delete(f"/api/v1/tokens/{owner_id}", headers=bearer(admin))
        assert cut_off.status_code == 409 and cut_off.json()["code"] == "revoke_above_rank"
        assert (await api.http.get("/api/v1/me")).status_code == 200

        made = await api.http.post(
            "/api/v1/tokens", json={"name": "ci", "role": "editor", "expires_in_days": 30}
        )
        assert made.status_code == 201 and made.json()["expires_at"] is not None
        short = made.json()
        assert (await api.http.get("/api/v1/me", headers=bearer(short["token"]))).status_code == 200
        await pool.execute(
            "UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1",
            short["id"],
        )
        expired = await api.http.get("/api/v1/me", headers=bearer(short["token"]))
        assert expired.status_code == 401 and "expired" in expired.json()["error"]

        member = await pool.fetchval(
            "INSERT INTO users (email, name, password_hash, role) "
            "VALUES ('m@example.com', 'M', 'x', 'admin') RETURNING id"
        )
        _, theirs = await token_of(pool, "admin", created_by=member)
        assert (await api.http.get("/api/v1/me", headers=bearer(theirs))).status_code == 200
        await pool.execute("UPDATE users SET role = 'analyst' WHERE id = $1", member)
        demoted = await api.http.post(
            "/api/v1/tokens", json={"name": "x", "role": "analyst"}, headers=bearer(theirs)
        )
        assert demoted.status_code == 403  # acts as the member's current role
        assert await TokenService(pool).revoke_created_by(member) == 1
        assert (await api.http.get("/api/v1/me", headers=bearer(theirs))).status_code == 401

        assert (await api.http.delete(f"/api/v1/bots/{bot['id']}")).status_code == 204


async def test_panel_revocation_is_rank_checked(panel: PanelApp) -> None:
    """M14: an admin in the panel cannot revoke the owner's token; a token they make is
    theirs and may expire."""
    owner_token, _ = await token_of(panel.pool, "owner")
    async with client(panel.app) as http:
        await sign_in(http, await add_member(panel.pool, "admin"))
        csrf = await csrf_of(http, "/tokens")
        refused = await http.post(f"/tokens/{owner_token}/revoke", data={"csrf": csrf})
        assert refused.status_code == 409
        assert await panel.pool.fetchval(
            "SELECT revoked_at IS NULL FROM api_tokens WHERE id = $1", owner_token
        )
        made = await http.post(
            "/tokens", data={"csrf": csrf, "name": "ci", "role": "editor", "expires_days": "7"}
        )
        assert made.status_code == 200
        row = await panel.pool.fetchrow(
            "SELECT created_by_user_id, expires_at - created_at AS life FROM api_tokens "
            "WHERE name = 'ci'"
        )
        admin_id = await panel.pool.fetchval("SELECT id FROM users WHERE role = 'admin'")
        assert row["created_by_user_id"] == admin_id and row["life"] == timedelta(days=7)
        bad = await http.post(
            "/tokens", data={"csrf": csrf, "name": "x", "role": "editor", "expires_days": "0"}
        )
        assert bad.status_code == 422


async def test_integers_beyond_bigint_are_a_422(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """L12: every path, query and body integer has the bounds of a bigint."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        base = f"/api/v1/bots/{bot['id']}"
        for path in (
            f"/api/v1/bots/{BIG}",
            f"{base}/channels/{BIG}",
            f"{base}/channels/{-BIG - 1}",
            f"{base}/contents/{BIG}",
            f"/api/v1/campaigns/{BIG}",
            f"/api/v1/shop/orders/{BIG}",
            f"/api/v1/campaigns?bot_id={BIG}",
        ):
            answer = await api.http.get(path)
            assert answer.status_code == 422, (path, answer.text)
        assert (await api.http.delete(f"/api/v1/tokens/{BIG}")).status_code == 422
        for path, body in (
            (f"{base}/uploaders", {"user_id": BIG}),
            (f"{base}/gate", {"channel_ids": [BIG]}),
            (f"{base}/gate", {"channels": [{"chat_id": -BIG - 1}]}),
            ("/api/v1/campaigns", {"name": "n", "channel": "@chan_x", "bot_ids": [BIG]}),
        ):
            method = "PUT" if path.endswith("/gate") else "POST"
            answer = await api.http.request(method, path, json=body)
            assert answer.status_code == 422, (path, answer.text)
        storage = await api.http.patch(base, json={"storage_chat_id": BIG})
        assert storage.status_code == 422


async def nul_answers(api: Api, bot_id: int) -> list[httpx.Response]:
    base = f"/api/v1/bots/{bot_id}"
    return [
        await api.http.post("/api/v1/tokens", json={"name": "a\x00b"}),
        await api.http.post(f"{base}/contents", json={"kind": "text", "text": "a\x00"}),
        await api.http.post(
            f"{base}/contents", json={"kind": "text", "text": "a", "caption": "\x00"}
        ),
        await api.http.post(f"{base}/uploaders", json={"user_id": 5, "note": "\x00"}),
        await api.http.put(f"{base}/texts", json={"overrides": {"en": {"no_access": "x\x00"}}}),
        await api.http.put(f"{base}/texts", json={"overrides": {"en\x00": {}}}),
    ]


async def test_nul_characters_and_lax_types_are_refused(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """Issue 15: a NUL in any text is a 422 naming it (not a 500); `true` is not a user id,
    `0` and `0.0` are not booleans."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        for answer in await nul_answers(api, bot["id"]):
            assert answer.status_code == 422, answer.text
            assert answer.json()["code"] == "nul_character" and "NUL" in answer.json()["error"]
        base = f"/api/v1/bots/{bot['id']}"
        lax = await api.http.post(f"{base}/uploaders", json={"user_id": True})
        assert lax.status_code == 422
        made = await api.http.post(f"{base}/contents", json={"kind": "text", "text": "hi"})
        item = f"{base}/contents/{made.json()['id']}"
        assert (await api.http.patch(item, json={"enabled": 0})).status_code == 422
        assert (await api.http.patch(item, json={"protect_content": 0.0})).status_code == 422
        assert (await api.http.patch(item, json={"enabled": False})).status_code == 200
        assert await pool.fetchval("SELECT count(*) FROM uploaders") == 0


async def test_options_and_wrong_methods_name_every_method_of_the_path(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """Issue 15: OPTIONS answers with the full Allow list; a 405's Allow lists every method
    of the path, not only the first route's."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        options = await api.http.options("/api/v1/bots/1")
        assert options.status_code == 204
        assert options.headers["allow"] == "DELETE, GET, OPTIONS, PATCH"
        wrong = await api.http.put("/api/v1/bots/1", json={})
        assert wrong.status_code == 405
        assert wrong.headers["allow"] == "DELETE, GET, OPTIONS, PATCH"
        assert (await api.http.options("/api/v1/nothing")).status_code == 404
        assert (await api.http.options("/signin")).headers["allow"] == "GET, OPTIONS, POST"


async def test_the_document_states_the_rules_and_docs_load_nothing_remote(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """Issue 15 and L9: the bot token, channel reference, content kinds, gate forms and text
    names are in the schema; /api/docs (Swagger UI from a CDN) is gone, the document stays."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        assert (await api.http.get("/api/docs")).status_code == 404
        schemas = (await api.http.get("/api/openapi.json")).json()["components"]["schemas"]
        assert "pattern" in schemas["BotIn"]["properties"]["token"]
        assert "pattern" in schemas["ChannelIn"]["properties"]["ref"]
        assert schemas["ContentIn"]["discriminator"]["propertyName"] == "kind"
        assert schemas["TextContentIn"]["required"] == ["kind", "text"]
        assert {"GateIds", "GateEntries"} <= set(schemas)
        overrides = schemas["TextsIn"]["properties"]["overrides"]
        assert overrides["propertyNames"]["enum"] == ["en", "fa"]
        bot = await connect_bot(api)
        no_text = await api.http.post(f"/api/v1/bots/{bot['id']}/contents", json={"kind": "text"})
        assert no_text.status_code == 422
        both: dict[str, Any] = {"channel_ids": [], "channels": []}
        assert (await api.http.put(f"/api/v1/bots/{bot['id']}/gate", json=both)).status_code == 422
        unknown = {"overrides": {"en": {"no_such_text": "x"}}}
        answer = await api.http.put(f"/api/v1/bots/{bot['id']}/texts", json=unknown)
        assert answer.status_code == 422


async def test_a_storage_chat_is_checked_with_telegram_when_set(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """Issue 15: PATCH storage_chat_id asks Telegram at once: a chat the bot cannot post in
    is refused and nothing is stored."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        base = f"/api/v1/bots/{bot['id']}"
        unknown = await api.http.patch(base, json={"storage_chat_id": -1009999999999})
        assert unknown.status_code == 400 and unknown.json()["code"] == "storage_refused"
        owner = await api.tg.sim.create_user("Owner")
        storage = await api.tg.sim.create_channel("Storage", private=True, owner_id=owner["id"])
        await api.tg.sim.make_admin(storage["id"], bot["id"], can_post_messages=False)
        mute = await api.http.patch(base, json={"storage_chat_id": storage["id"]})
        assert mute.status_code == 400 and "post" in mute.json()["error"]
        assert (await api.http.get(base)).json()["storage_chat_id"] is None
        await api.tg.sim.make_admin(storage["id"], bot["id"])
        ok = await api.http.patch(base, json={"storage_chat_id": storage["id"]})
        assert ok.status_code == 200 and ok.json()["storage_chat_id"] == storage["id"]
        cleared = await api.http.patch(base, json={"clear_storage_chat": True})
        assert cleared.json()["storage_chat_id"] is None
