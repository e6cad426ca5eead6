"""Campaigns through the owner API: create, read, change, pause, resume, end; bad input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from openapi_spec_validator import validate

from tests.integration.test_api_owner import Api, connect_bot, owner_api


async def sponsor_channel(
    api: Api, bots: list[dict[str, Any]], username: str = "apisponsor"
) -> dict[str, Any]:
    owner = await api.tg.sim.create_user("Sponsor")
    channel = await api.tg.sim.create_channel("Sponsor", username=username, owner_id=owner["id"])
    for bot in bots:
        await api.tg.sim.make_admin(channel["id"], bot["id"])
    return channel


async def test_a_network_campaign_through_the_api(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bots = [await connect_bot(api, f"camp{i}_bot") for i in range(2)]
        await sponsor_channel(api, bots)
        body = {
            "name": "Sponsor of the month, with a very long name indeed",
            "channel": "https://t.me/apisponsor",
            "bot_ids": [b["id"] for b in bots],
            "goal_joins": 500,
            "goal_kind": "kept",
            "ends_at": (datetime.now(UTC) + timedelta(days=30)).isoformat(),
            "retention_hours": 48,
            "position": "last",
        }
        made = await api.http.post("/api/v1/campaigns", json=body)
        assert made.status_code == 201, made.text
        campaign = made.json()
        assert campaign["status"] == "running" and campaign["name"] == body["name"]
        assert [link["bot_id"] for link in campaign["links"]] == sorted(b["id"] for b in bots)
        assert all(link["invite_link"].startswith("https://t.me/+") for link in campaign["links"])
        assert campaign["report_url"].endswith("/r/" + campaign["report_url"].rsplit("/", 1)[1])
        assert (campaign["joins"], campaign["kept"], campaign["outside_gate"]) == (0, 0, 0)
        cid = campaign["id"]

        listed = (await api.http.get("/api/v1/campaigns", params={"status": "running"})).json()
        assert listed["total"] == 1 and listed["items"][0]["id"] == cid
        one = (await api.http.get(f"/api/v1/campaigns/{cid}")).json()
        assert {b["bot_id"] for b in one["by_bot"]} == {b["id"] for b in bots}

        changed = await api.http.patch(
            f"/api/v1/campaigns/{cid}", json={"goal_joins": 800, "position": "first"}
        )
        assert changed.status_code == 200 and changed.json()["goal_joins"] == 800
        cleared = await api.http.patch(f"/api/v1/campaigns/{cid}", json={"clear_goal": True})
        assert cleared.json()["goal_joins"] is None and cleared.json()["percent"] is None

        paused = await api.http.post(f"/api/v1/campaigns/{cid}/pause")
        assert paused.json()["status"] == "paused"
        resumed = await api.http.post(f"/api/v1/campaigns/{cid}/resume")
        assert resumed.json()["status"] == "running"
        old_report = resumed.json()["report_url"]
        rotated = (await api.http.post(f"/api/v1/campaigns/{cid}/rotate-report")).json()
        assert rotated["report_url"] != old_report
        revoked = (await api.http.post(f"/api/v1/campaigns/{cid}/revoke-report")).json()
        assert revoked["report_url"] is None
        ended = await api.http.post(f"/api/v1/campaigns/{cid}/end")
        assert ended.json()["status"] == "ended"
        assert all(link["revoked_at"] for link in ended.json()["links"])
        again = await api.http.post(f"/api/v1/campaigns/{cid}/resume")
        assert again.status_code == 409 and again.json()["code"] == "campaign_state"
        late = await api.http.patch(f"/api/v1/campaigns/{cid}", json={"name": "x"})
        assert late.status_code == 409

        spec = (await api.http.get("/api/openapi.json")).json()
        validate(spec)
        assert "/api/v1/campaigns" in spec["paths"]
        assert "/api/v1/campaigns/{campaign_id}/{action}" in spec["paths"]


async def test_bad_campaigns_get_clear_errors(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bots = [await connect_bot(api, f"bad{i}_bot") for i in range(2)]
        channel = await sponsor_channel(api, bots[:1], "halfsponsor")
        await api.tg.sim.make_admin(channel["id"], bots[1]["id"], can_invite_users=False)
        base = {"name": "N", "channel": "@halfsponsor", "bot_ids": [bots[0]["id"]]}

        async def post(**fields: object) -> httpx.Response:
            return await api.http.post("/api/v1/campaigns", json={**base, **fields})

        missing_right = await post(bot_ids=[b["id"] for b in bots])
        assert missing_right.status_code == 422
        error = missing_right.json()
        assert error["code"] == "rights_missing" and error["bot_id"] == bots[1]["id"]
        assert "bad1_bot" in error["error"] and "can_invite_users" in error["error"]
        assert (await post(goal_joins=0)).status_code == 422
        assert (await post(bot_ids=[])).status_code == 422
        past = (datetime.now(UTC) - timedelta(days=1)).isoformat()
        ended = await post(ends_at=past)
        assert ended.status_code == 422 and ended.json()["code"] == "campaign_ends"
        unknown = await post(bot_ids=[bots[0]["id"], 424242])
        assert unknown.status_code == 404
        nowhere = await post(channel="@nosuchchannel")
        assert nowhere.status_code in (400, 422) and nowhere.json()["error"]
        not_a_ref = await post(channel="hello world")
        assert not_a_ref.status_code == 422 and not_a_ref.json()["code"] == "channel_ref"
        assert (await post(position="middle")).status_code == 422
        assert (await post(surprise=1)).status_code == 422
        assert (await api.http.get("/api/v1/campaigns/999")).status_code == 404
        assert (await api.http.post("/api/v1/campaigns/999/pause")).status_code == 404
        assert (await api.http.post("/api/v1/campaigns/1/explode")).status_code == 422
        assert await pool.fetchval("SELECT count(*) FROM campaigns") == 0
        calls = await api.tg.sim.call_log(0)
        assert not [c for c in calls if c["method"] == "createChatInviteLink"]


async def test_an_analyst_reads_but_cannot_create(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with owner_api(pool, db_dsn, tmp_path, role="analyst") as api:
        assert (await api.http.get("/api/v1/campaigns")).json()["total"] == 0
        body = {"name": "N", "channel": "@x_channel", "bot_ids": [1]}
        assert (await api.http.post("/api/v1/campaigns", json=body)).status_code == 403
