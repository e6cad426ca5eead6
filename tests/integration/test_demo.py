"""`sponsorbot demo`'s campaigns: four of them, their figures consistent with the gate's
history, the running one's links real (live visitors join through them), its report printed;
and its broadcasts: one finished with a report, one sending for minutes.

The browser test (tests/browser/test_demo.py) covers signing in and the phone; this one needs
no browser and reads the demo's own database while it runs.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
from yarl import URL

from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.simulator.client import SimulatorClient
from tests.integration.demokit import running_demo
from tests.kit import eventually

pytestmark = pytest.mark.slow

LIVE_CREDIT_WITHIN_S = 60.0
BROADCASTS_WITHIN_S = 60.0

# A credited member who was never shown the gate of the bot credited, before their join.
NOT_SHOWN_THE_GATE = """
SELECT count(*) FROM campaign_members m
WHERE m.gate_joined_at IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM events e
    WHERE e.bot_id = m.bot_id AND e.user_id = m.user_id AND e.kind = 'gate_shown'
      AND e.at <= m.gate_joined_at)
"""
# A credited member the bot does not know.
NOT_A_PERSON = """
SELECT count(*) FROM campaign_members m
WHERE m.gate_joined_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM people p WHERE p.bot_id = m.bot_id AND p.user_id = m.user_id)
"""
# Joins outside the campaign's time in the gates: before its start, or after it was
# reached, ended or paused.
OUT_OF_TIME = """
SELECT c.name, count(*) FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id
WHERE m.gate_joined_at < c.starts_at
   OR (c.status <> 'running' AND m.gate_joined_at > c.status_at)
GROUP BY c.name
"""
# A credit through a bot that is not one of the campaign's.
WRONG_BOT = """
SELECT count(*) FROM campaign_members m
WHERE m.gate_joined_at IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM campaign_bots b WHERE b.campaign_id = m.campaign_id AND b.bot_id = m.bot_id)
"""
# Each credited history member's join of the channel is in the bot's events too.
NO_JOIN_EVENT = """
SELECT count(*) FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id
WHERE m.gate_joined_at IS NOT NULL AND m.gate_joined_at < $1 AND NOT EXISTS (
    SELECT 1 FROM events e
    WHERE e.bot_id = m.bot_id AND e.user_id = m.user_id AND e.kind = 'joined'
      AND e.chat_id = c.chat_id AND e.at = m.gate_joined_at)
"""
# A join of a finished or paused campaign's channel, in its bots, outside its time in the gates.
JOINED_OUT_OF_TIME = """
SELECT count(*) FROM events e
JOIN campaigns c ON c.chat_id = e.chat_id
JOIN campaign_bots b ON b.campaign_id = c.id AND b.bot_id = e.bot_id
WHERE e.kind = 'joined' AND c.status <> 'running' AND (e.at > c.status_at OR e.at < c.starts_at)
"""
LEAVES = """
SELECT c.status,
    count(*) FILTER (WHERE m.left_at < m.gate_joined_at + c.retention) AS inside,
    count(*) FILTER (WHERE m.left_at >= m.gate_joined_at + c.retention) AS after
FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id
GROUP BY c.status
"""
LIVE_CREDITS = """
SELECT count(*) FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id
WHERE c.status = 'running' AND m.gate_joined_at > $1
"""


@dataclass
class Demo:
    """A running demo: what it printed and a pool on its database."""

    panel: str
    report: str
    started: datetime
    pool: asyncpg.Pool
    printed: str


@pytest.fixture
async def demo(tmp_path: Path) -> AsyncIterator[Demo]:
    started = datetime.now(UTC)
    async with running_demo(tmp_path / "demo") as run:
        report = re.search(r"Report:\s+(\S+)", run.printed)
        assert report, run.printed
        yield Demo(run.panel, report.group(1), started, run.pool, run.printed)


async def _read(demo: Demo, path: str) -> Any:
    """GET from the owner API (the backend's own figures), with a token made for it."""
    row, token = await TokenService(demo.pool).create("demo test", "owner")
    try:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            aiohttp.ClientSession(headers=headers) as http,
            http.get(f"{demo.panel}/api/v1{path}") as response,
        ):
            assert response.status == 200, await response.text()
            return await response.json()
    finally:
        await TokenService(demo.pool).revoke(int(row["id"]))


async def _campaigns(demo: Demo) -> dict[str, dict[str, Any]]:
    """The campaigns as the owner API reads them, by status."""
    page = await _read(demo, "/campaigns")
    return {c["status"]: c for c in page["items"]}


async def test_the_demo_has_four_campaigns_consistent_with_the_gate_history(demo: Demo) -> None:
    by_status = await _campaigns(demo)
    assert set(by_status) == {"running", "reached", "ended", "paused"}
    now = datetime.now(UTC)

    running = by_status["running"]
    assert len(running["links"]) == 2  # a network campaign over two bots
    assert all(link["revoked_at"] is None for link in running["links"])
    assert demo.report.startswith(f"{demo.panel}/r/") and running["report_url"] == demo.report
    assert 0 < running["progress"] < running["goal_joins"]
    assert all(link["joins"] > 0 for link in running["by_bot"])

    reached = by_status["reached"]
    assert reached["progress"] >= reached["goal_joins"]
    assert all(link["revoked_at"] is not None for link in reached["links"])

    ended = by_status["ended"]
    assert ended["ends_at"] is not None and ended["ends_at"] == ended["status_at"]
    assert datetime.fromisoformat(ended["ends_at"]) < now
    assert 0 < ended["progress"] < ended["goal_joins"]
    assert all(link["revoked_at"] is not None for link in ended["links"])

    paused = by_status["paused"]
    assert 0 < paused["progress"] < paused["goal_joins"]
    assert all(link["revoked_at"] is None for link in paused["links"])

    for campaign in by_status.values():
        assert campaign["joins"] == campaign["kept"] + campaign["left"] + campaign["waiting"]
        assert datetime.fromisoformat(campaign["starts_at"]) < now
        assert campaign["left"] > 0

    pool = demo.pool
    assert await pool.fetch(OUT_OF_TIME) == []
    assert await pool.fetchval(WRONG_BOT) == 0
    assert await pool.fetchval(NOT_A_PERSON) == 0
    assert await pool.fetchval(NOT_SHOWN_THE_GATE) == 0
    assert await pool.fetchval(NO_JOIN_EVENT, demo.started) == 0
    assert await pool.fetchval(JOINED_OUT_OF_TIME) == 0
    # Some left inside the retention window, some after it.
    leaves = {r["status"]: (r["inside"], r["after"]) for r in await pool.fetch(LEAVES)}
    for status in ("reached", "ended"):
        inside, after = leaves[status]
        assert inside > 0 and after > 0, leaves

    # The running campaign's links are real: live visitors join through them and are credited.
    deadline = time.monotonic() + LIVE_CREDIT_WITHIN_S
    while await pool.fetchval(LIVE_CREDITS, demo.started) == 0:
        assert time.monotonic() < deadline, "no live join credited"
        await asyncio.sleep(1.0)
    assert await pool.fetchval(NOT_SHOWN_THE_GATE) == 0

    # The sponsor's page opens without signing in.
    async with aiohttp.ClientSession() as http, http.get(demo.report) as response:
        assert response.status == 200
        assert running["name"] in await response.text()


async def test_the_demo_has_a_finished_broadcast_with_a_report_and_one_sending_slowly(
    demo: Demo,
) -> None:
    bot_id = await demo.pool.fetchval("SELECT id FROM bots WHERE username = 'cinema_vault_bot'")
    path = f"/bots/{bot_id}/broadcasts"
    # The finished one is sent as the demo starts and done seconds later; the other starts
    # a few seconds after it.
    deadline = time.monotonic() + BROADCASTS_WITHIN_S
    while True:
        items = (await _read(demo, path))["items"]
        assert len(items) == 2, items
        by_status = {b["status"]: b for b in items}
        if set(by_status) == {"done", "sending"} and by_status["sending"]["sent"] > 0:
            break
        assert time.monotonic() < deadline, items
        await asyncio.sleep(1.0)

    finished = await _read(demo, f"{path}/{by_status['done']['id']}")
    assert finished["sent"] > 0
    assert finished["blocked"] > 0  # they blocked the bot after it chose them
    assert finished["failed"] == 1  # someone Telegram does not know
    assert finished["unknown"] == 0
    done = finished["sent"] + finished["blocked"] + finished["failed"]
    assert done == finished["recipients"] == finished["progress"]["total"]
    assert finished["progress"]["percent"] == 100.0
    assert finished["finished_at"] is not None
    reasons = {(f["status"], f["error"]): f["n"] for f in finished["failures"]}
    assert reasons == {
        ("blocked", "Forbidden: bot was blocked by the user"): finished["blocked"],
        ("failed", "Bad Request: chat not found"): 1,
    }

    # Thousands of people at what the bot's limit leaves free: minutes, and it moves.
    sending = by_status["sending"]
    # Recipients are chosen page by page as the sending needs them; the total is counted first.
    assert sending["estimated"] > 4000 and sending["progress"]["total"] == sending["estimated"]
    before = sending["progress"]["done"]
    await asyncio.sleep(3.0)
    sending = await _read(demo, f"{path}/{sending['id']}")
    progress = sending["progress"]
    assert sending["status"] == "sending"
    assert before < progress["done"] < progress["total"]
    assert 0 < progress["percent"] < 50
    assert progress["rate_per_s"] > 0
    assert progress["seconds_left"] > 120


async def test_the_demo_owner_is_linked_and_the_order_waiting_arrives_with_its_buttons(
    demo: Demo,
) -> None:
    """The owner's simulated Telegram is linked to the panel account, and the order that waits
    for review arrives there with Approve, Reject and Ask for a change."""
    owner = re.search(r"Owner:\s+(\S+)", demo.printed)
    assert owner, demo.printed
    url = URL(owner.group(1))
    user, bot = int(url.query["user"]), url.query["bot"]
    async with SimulatorClient(f"{url.scheme}://{url.host}:{url.port}") as sim:

        async def arrived() -> bool:
            chat = await sim.read_chat(user, bot)
            return any("New order" in (m.get("text") or "") and m.get("buttons") for m in chat)

        await eventually(arrived, timeout=30.0)
    assert await demo.pool.fetchval("SELECT count(*) FROM team_links") == 1
