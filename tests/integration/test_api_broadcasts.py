"""Broadcasts through the owner API: create, check, count, preview, send, cancel; bad input
gets a clear error and leaves nothing behind."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
from openapi_spec_validator import validate

from sponsorbot.features.accounts.api_tokens import TokenService
from tests.integration.broadcastkit import add_people
from tests.integration.test_api_owner import connect_bot, owner_api

POST = {
    "text": "<b>Hello</b> everyone",
    "buttons": [[{"text": "Site", "url": "https://a.example"}]],
}


async def test_broadcasts_through_the_api(pool: asyncpg.Pool, db_dsn: str, tmp_path: Path) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api, "cast_bot")
        users = await add_people(api.tg.sim, pool, bot["id"], bot["username"], 30, language="fa")
        base = f"/api/v1/bots/{bot['id']}/broadcasts"

        counted = await api.http.post(f"{base}/count", json={"language": "fa"})
        assert counted.status_code == 200 and counted.json() == {"count": 30}
        none = await api.http.post(f"{base}/count", json={"language": "en"})
        assert none.json() == {"count": 0}

        made = await api.http.post(base, json={"title": "News", "post": POST})
        assert made.status_code == 201, made.text
        draft = made.json()
        assert draft["status"] == "draft" and draft["post"]["text"] == POST["text"]
        assert draft["progress"]["percent"] == 0.0

        preview = await api.http.post(
            f"{base}/preview", json={"post": POST, "telegram_id": users[0]}
        )
        assert preview.status_code == 204, preview.text
        chat = await api.tg.sim.read_chat(users[0], bot["username"])
        assert chat[-1]["text"] == "Hello everyone"
        stranger = await api.tg.sim.create_user("Stranger")
        refused = await api.http.post(
            f"{base}/preview", json={"post": POST, "telegram_id": stranger["id"]}
        )
        assert refused.status_code == 400
        assert "can't initiate conversation" in refused.json()["error"]

        changed = await api.http.put(
            f"{base}/{draft['id']}",
            json={"title": "News, again", "post": POST, "audience": {"active_days": 7}},
        )
        assert changed.status_code == 200 and changed.json()["audience"]["active_days"] == 7

        at = (datetime.now(UTC) + timedelta(hours=2)).isoformat()
        scheduled = await api.http.post(f"{base}/{draft['id']}/send", json={"at": at})
        assert scheduled.status_code == 200 and scheduled.json()["status"] == "scheduled"
        cancelled = await api.http.post(f"{base}/{draft['id']}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        again = await api.http.post(f"{base}/{draft['id']}/cancel")
        assert again.status_code == 409 and "cancelled" in again.json()["error"]
        assert (await api.http.post(f"{base}/{draft['id']}/pause")).status_code == 409
        assert (
            await api.http.put(f"{base}/{draft['id']}", json={"title": "x", "post": POST})
        ).status_code == 409

        listed = (await api.http.get(base, params={"status": "cancelled"})).json()
        assert listed["total"] == 1 and listed["items"][0]["id"] == draft["id"]
        assert (await api.http.get(f"{base}/999999")).status_code == 404
        assert (await api.http.get("/api/v1/bots/424242/broadcasts")).status_code == 404

        spec = (await api.http.get("/api/openapi.json")).json()
        validate(spec)
        assert "/api/v1/bots/{bot_id}/broadcasts/{broadcast_id}/send" in spec["paths"]


async def test_bad_posts_are_refused_before_anything_is_queued(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api, "bad_cast_bot")
        base = f"/api/v1/bots/{bot['id']}/broadcasts"

        async def refused(post: dict[str, Any], **extra: Any) -> str:
            answer = await api.http.post(base, json={"title": "Bad", "post": post, **extra})
            assert answer.status_code == 422, answer.text
            error: str = answer.json()["error"]
            return error

        assert 'Unsupported start tag "blink"' in await refused({"text": "<blink>hi</blink>"})
        assert "Can't find end tag corresponding to start tag" in await refused({"text": "<b>hi"})
        assert "text must be non-empty" in await refused({"text": "   "})
        assert "message text is empty" in await refused({"text": ""})
        assert "not a valid URL" in await refused(
            {"text": "hi", "buttons": [[{"text": "Go", "url": "not a url"}]]}
        )
        assert "caption is too long" in await refused(
            {"text": "x" * 1025, "media_kind": "photo", "file_id": "AgACAgIAAxkBAAIB"}
        )
        assert "file_id" in await refused({"text": "hi", "media_kind": "video"})
        past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
        assert "in the past" in await refused({"text": "hi"}, send="schedule", scheduled_at=past)
        assert "scheduled_at" in await refused({"text": "hi"}, send="schedule")
        unknown = await api.http.post(
            base, json={"title": "x", "post": {"text": "hi", "colour": 1}}
        )
        assert unknown.status_code == 422
        assert await pool.fetchval("SELECT count(*) FROM broadcasts") == 0
        assert await pool.fetchval("SELECT count(*) FROM outbox") == 0

        no_storage = await api.http.post(
            f"{base}/media", files={"file": ("a.jpg", b"\xff\xd8data", "image/jpeg")}
        )
        assert no_storage.status_code == 409 and "storage_chat_id" in no_storage.json()["error"]
        big = await api.http.post(
            f"{base}/media",
            files={"file": ("big.mp4", b"0" * (50 * 1024 * 1024 + 1), "video/mp4")},
        )
        assert big.status_code == 413


async def test_only_an_owner_or_admin_token_allows_a_paid_broadcast(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """L8: a paid broadcast spends the bot's Telegram Stars; an editor may neither save nor send
    one, and its estimated cost (0.1 Star a person) is in the broadcast before it is sent."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api, "paid_cast_bot")
        await add_people(api.tg.sim, pool, bot["id"], bot["username"], 37)
        base = f"/api/v1/bots/{bot['id']}/broadcasts"
        tokens = TokenService(pool)
        admin = {"Authorization": f"Bearer {(await tokens.create('admin', 'admin'))[1]}"}
        editor = {"Authorization": f"Bearer {(await tokens.create('editor', 'editor'))[1]}"}
        paid = {"title": "Fast news", "post": {**POST, "paid": True}}

        for send in ("draft", "now"):
            refused = await api.http.post(base, json={**paid, "send": send}, headers=editor)
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"] == (
                "the role editor may not allow a paid broadcast: it spends the bot's Telegram "
                "Stars (0.1 a message), so only an owner or admin token may"
            )
        assert await pool.fetchval("SELECT count(*) FROM broadcasts") == 0

        free = await api.http.post(base, json={"title": "News", "post": POST}, headers=editor)
        assert free.status_code == 201 and free.json()["estimated_stars"] is None
        turned = await api.http.put(f"{base}/{free.json()['id']}", json=paid, headers=editor)
        assert turned.status_code == 403

        made = await api.http.post(base, json=paid, headers=admin)
        assert made.status_code == 201, made.text
        draft = made.json()
        assert draft["paid"] is True and draft["estimated_stars"] == 3.7
        listed = (await api.http.get(base, headers=editor)).json()["items"]
        assert {b["id"]: b["estimated_stars"] for b in listed} == {
            draft["id"]: 3.7,
            free.json()["id"]: None,
        }
        # The admin's paid draft stays the admin's to send.
        by_editor = await api.http.post(f"{base}/{draft['id']}/send", headers=editor)
        assert by_editor.status_code == 403 and "paid broadcast" in by_editor.json()["error"]
        assert (await api.http.get(f"{base}/{draft['id']}")).json()["status"] == "draft"
        sent = await api.http.post(f"{base}/{draft['id']}/send", headers=admin)
        assert sent.status_code == 200 and sent.json()["status"] == "scheduled"
        # An editor may still cancel it: that spends nothing.
        cancelled = await api.http.post(f"{base}/{draft['id']}/cancel", headers=editor)
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        owner_sent = await api.http.post(base, json={**paid, "send": "now"})
        assert owner_sent.status_code == 201 and owner_sent.json()["status"] == "scheduled"
        assert owner_sent.json()["paid"] is True
