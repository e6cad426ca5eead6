"""Sponsor campaigns end to end: the simulator, real PostgreSQL, the engine and the features."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sponsorbot.features.botconfig import ConfigCache
from sponsorbot.features.campaigns.queries import Campaign
from sponsorbot.features.errors import Conflict, Invalid, NotFound
from tests.integration.campaignkit import Network, network, urls
from tests.kit import eventually, make_settings, running_engine


async def counts(n: Network, campaign_id: int) -> Campaign:
    return await n.features.campaigns.get(campaign_id)


async def test_gate_shows_the_campaign_link_and_the_join_is_credited_once(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with network(pool, db_dsn, tmp_path) as n:
        campaign = await n.campaign(goal_joins=100, goal_kind="joins")
        assert campaign["status"] == "running"
        links = {link["bot_id"]: link["invite_link"] for link in campaign["links"]}
        assert len(set(links.values())) == 2
        made = [c for c in await n.tg.sim.call_log(0) if c["method"] == "createChatInviteLink"]
        assert len(made) == 2 and all(c["ok"] for c in made)

        user = await n.visitor()
        gate = await n.gate(user, 0)
        assert urls(gate) == [links[n.bots[0]["id"]]]
        await n.tg.sim.open_url(user, links[n.bots[0]["id"]])

        async def credited() -> bool:
            return bool((await counts(n, campaign["id"]))["joins"] == 1)

        await eventually(credited)
        # Leave and join again through the other bot's link: still one credit.
        await n.tg.sim.leave(user, n.channel["id"])
        await n.gate(user, 1)
        await n.tg.sim.open_url(user, links[n.bots[1]["id"]])

        async def left_recorded() -> bool:
            row = await pool.fetchrow("SELECT * FROM campaign_members")
            return row is not None and row["left_at"] is not None

        await eventually(left_recorded)
        await asyncio.sleep(0.5)
        seen = await counts(n, campaign["id"])
        assert (seen["joins"], seen["left"], seen["kept"]) == (1, 1, 0)
        by_bot = {b["bot_id"]: b["joins"] for b in seen["by_bot"]}
        assert by_bot == {n.bots[0]["id"]: 1, n.bots[1]["id"]: 0}


async def test_kept_after_the_window_and_outside_joins_apart(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with network(pool, db_dsn, tmp_path) as n:
        campaign = await n.campaign(retention_hours=1)
        link = campaign["links"][0]["invite_link"]
        stays, leaves_early, leaves_late, outsider = [await n.visitor() for _ in range(4)]
        for user in (stays, leaves_early, leaves_late):
            await n.gate(user, 0)
            await n.tg.sim.open_url(user, link)
        await n.tg.sim.join(outsider, "@sponsornews")
        await n.tg.sim.leave(leaves_early, n.channel["id"])
        await n.tg.sim.advance_clock(2 * 3600)
        await n.tg.sim.leave(leaves_late, n.channel["id"])

        async def settled() -> bool:
            rows = await pool.fetch("SELECT * FROM campaign_members")
            return len(rows) == 4 and sum(r["left_at"] is not None for r in rows) == 2

        await eventually(settled)
        # Seen from the simulated clock's "now", two hours on: the windows have passed.
        figures = n.features.campaigns
        later = figures.clock() + timedelta(hours=2, minutes=1)
        figures.clock = lambda: later  # type: ignore[method-assign]
        seen = await figures.get(campaign["id"])
        assert (seen["joins"], seen["kept"], seen["left"], seen["waiting"]) == (3, 2, 1, 0)
        assert seen["outside_gate"] == 1


async def test_reaching_the_goal_takes_the_channel_out_of_both_gates(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with network(pool, db_dsn, tmp_path) as n:
        campaign = await n.campaign(goal_joins=2, goal_kind="joins")
        links = [link["invite_link"] for link in campaign["links"]]
        first, second, later = [await n.visitor() for _ in range(3)]
        await n.gate(first, 0)
        await n.tg.sim.open_url(first, links[0])
        await n.gate(second, 1)
        await n.tg.sim.open_url(second, links[1])
        started = time.monotonic()

        async def reached() -> bool:
            return bool((await counts(n, campaign["id"]))["status"] == "reached")

        await eventually(reached, timeout=10)
        # Every gate drops it at once (the cache lives 60 s here): the content comes straight.
        for bot in (0, 1):
            username = n.bots[bot]["username"]
            await n.tg.sim.open_link(later, username, n.contents[bot]["code"])

            async def delivered(username: str = username) -> bool:
                chat = await n.tg.sim.read_chat(later, username)
                return any(m["media"] for m in chat if m["from"] == "bot")

            await eventually(delivered, timeout=5)
        assert time.monotonic() - started < 5 + 2
        revoked = [c for c in await n.tg.sim.call_log(0) if c["method"] == "revokeChatInviteLink"]
        assert len(revoked) == 2 and all(c["ok"] for c in revoked)
        with pytest.raises(Exception, match="INVITE_HASH_EXPIRED"):
            await n.tg.sim.join(later, invite_link=links[0])
        seen = await counts(n, campaign["id"])
        assert all(link["revoked_at"] is not None for link in seen["links"])


async def test_bad_input_is_refused_with_a_reason(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with network(pool, db_dsn, tmp_path) as n:
        with pytest.raises(Invalid, match="goal"):
            await n.campaign(goal_joins=0)
        with pytest.raises(Invalid, match="bot"):
            await n.campaign(bot_ids=())
        with pytest.raises(NotFound):
            await n.campaign(bot_ids=(n.bots[0]["id"], 987654))
        with pytest.raises(Invalid, match="past"):
            await n.campaign(ends_at=datetime.now(UTC) - timedelta(hours=1))
        other = await n.tg.sim.create_channel("No rights", username="norights")
        await n.tg.sim.make_admin(other["id"], n.bots[0]["id"], can_invite_users=False)
        with pytest.raises(Invalid) as refused:
            await n.campaign(channel="https://t.me/norights")
        assert n.bots[0]["username"] in refused.value.message
        assert "can_invite_users" in refused.value.message
        # Telegram takes 32 characters of a link's name (and the simulator refuses more).
        long = "A sponsor with a name much longer than Telegram allows for links"
        campaign = await n.campaign(name=long)
        assert campaign["name"] == long
        with pytest.raises(Conflict):
            await n.campaign()
        assert await pool.fetchval("SELECT count(*) FROM campaigns") == 1


async def test_a_join_request_through_the_link_passes_the_gate_and_counts_when_approved(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with network(pool, db_dsn, tmp_path, join_request=True) as n:
        campaign = await n.campaign(join_requests=True)
        assert campaign["join_requests"] is True
        link = campaign["links"][0]["invite_link"]
        user = await n.visitor()
        gate = await n.gate(user, 0)
        assert urls(gate) == [link]
        assert await n.tg.sim.join(user, invite_link=link) == "pending"

        async def recorded() -> bool:
            found = await pool.fetchval(
                "SELECT count(*) FROM join_requests WHERE bot_id = $1", n.bots[0]["id"]
            )
            return bool(found == 1)

        await eventually(recorded)
        # The pending request lets the visitor through; the credit waits for the approval.
        await n.tg.sim.press_button(user, n.bots[0]["username"], gate["message_id"], _joined(gate))

        async def delivered() -> bool:
            chat = await n.tg.sim.read_chat(user, n.bots[0]["username"])
            return any(m["media"] for m in chat if m["from"] == "bot")

        await eventually(delivered)
        assert (await counts(n, campaign["id"]))["joins"] == 0
        await n.features.bot_settings.decide_request(n.bots[0]["id"], n.channel["id"], user, True)

        async def credited() -> bool:
            return bool((await counts(n, campaign["id"]))["joins"] == 1)

        await eventually(credited)


def _joined(gate: dict[str, Any]) -> str:
    return str(next(b["callback_data"] for r in gate["buttons"] for b in r if "callback_data" in b))


async def test_pause_takes_the_channel_out_and_resume_brings_it_back(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with network(pool, db_dsn, tmp_path) as n:
        campaign = await n.campaign()
        await n.features.campaigns.pause(campaign["id"])
        user = await n.visitor()
        await n.tg.sim.open_link(user, n.bots[0]["username"], n.contents[0]["code"])

        async def delivered() -> bool:
            chat = await n.tg.sim.read_chat(user, n.bots[0]["username"])
            return any(m["media"] for m in chat if m["from"] == "bot")

        await eventually(delivered)
        await n.features.campaigns.resume(campaign["id"])
        other = await n.visitor()
        gate = await n.gate(other, 0)
        assert urls(gate) == [campaign["links"][0]["invite_link"]]


async def test_a_change_in_one_process_drops_the_gate_cache_of_another(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with network(pool, db_dsn, tmp_path) as n:
        settings = make_settings(db_dsn, n.tg.url, tmp_path)
        # A second "process": its own engine, notifier and caches on the same database.
        async with running_engine(settings, pool, db_dsn, worker=False) as other:
            bot_id = n.bots[0]["id"]
            second = ConfigCache(pool, 60.0, other.engine.notifier)
            assert (await second.get(bot_id)).gate == ()
            campaign = await n.campaign()

            async def dropped() -> bool:
                return bool((await second.get(bot_id)).gate)

            await eventually(dropped, timeout=3)
            assert (await second.get(bot_id)).gate[0].campaign_id == campaign["id"]
