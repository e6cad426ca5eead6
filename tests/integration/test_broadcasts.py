"""Broadcasts end to end on the simulator: each person once, outcomes recorded, pause, resume,
cancel, replies first, a refused token."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sponsorbot.features.broadcasts.post import Post
from sponsorbot.features.broadcasts.service import Audience
from sponsorbot.features.content.service import NewContent
from sponsorbot.features.errors import Conflict, Invalid
from tests.integration.broadcastkit import Audiences, add_people, audience
from tests.kit import eventually

FILE = "https://files.example/news.pdf"


async def test_a_broadcast_reaches_everyone_once_and_records_who_blocked_the_bot(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with audience(pool, db_dsn, tmp_path, 120) as a:
        # Three block the bot, and the bot hears of it (my_chat_member): not in the audience.
        known = a.people[:3]
        for user in known:
            await a.tg.sim.block_bot(user, a.sim_bot["username"])

        async def heard() -> bool:
            marked = await pool.fetchval(
                "SELECT count(*) FROM people WHERE bot_id = $1 AND blocked_at IS NOT NULL",
                a.bot["id"],
            )
            return bool(marked == 3)

        await eventually(heard)
        # Two deleted their accounts, and nothing told the bot: Telegram answers 403.
        gone = a.people[3:5]
        for user in gone:
            await a.tg.sim.deactivate_user(user)
        b = await a.broadcast()
        assert b["status"] == "scheduled"
        done = await a.finished(b["id"])
        assert done["recipients"] == 117
        assert (done["sent"], done["blocked"], done["failed"], done["unknown"]) == (115, 2, 0, 0)
        assert done["progress"]["percent"] == 100.0
        assert [(f["status"], f["n"]) for f in done["failures"]] == [("blocked", 2)]
        assert "deactivated" in done["failures"][0]["error"]
        counts = await a.deliveries()
        assert set(counts) == set(a.people) - set(known) - set(gone)
        assert set(counts.values()) == {1}
        marked = await pool.fetchval(
            "SELECT count(*) FROM people WHERE bot_id = $1 AND blocked_at IS NOT NULL",
            a.bot["id"],
        )
        assert marked == 5
        chat = await a.tg.sim.read_chat(a.people[-1], a.sim_bot["username"])
        assert chat[-1]["text"] == "News of the week"
        assert chat[-1]["buttons"] == [[{"text": "Read", "url": "https://example.com/news"}]]


async def broadcast_sends(a: Audiences, since: int = 0) -> list[dict[str, Any]]:
    """Accepted broadcast messages in the simulator's call log after `since`, in order."""
    out: list[dict[str, Any]] = []
    while True:
        calls = await a.tg.sim.call_log(since)
        if not calls:
            return out
        since = calls[-1]["seq"]
        people = set(a.people)
        out.extend(
            c for c in calls if c["method"] == "sendMessage" and c["ok"] and c["chat_id"] in people
        )


async def document(a: Audiences) -> dict[str, Any]:
    """A content item of the bot: a document a visitor's link delivers."""
    item = NewContent(
        created_by="test", kind="document", items=[{"kind": "document", "file_id": FILE}]
    )
    return await a.features.contents.create(a.bot["id"], item)


async def sent_at_least(a: Audiences, n: int) -> None:
    """Wait until the broadcast has reached `n` people."""

    async def under_way() -> bool:
        return len(await broadcast_sends(a)) >= n

    await eventually(under_way)


async def latest_seq(a: Audiences) -> int:
    """The sequence number of the simulator's latest call."""
    since = 0
    while calls := await a.tg.sim.call_log(since):
        since = calls[-1]["seq"]
    return since


async def reply_seq(a: Audiences, visitor: int, since: int) -> int:
    """Wait for the bot's answer to the visitor (the document); its sequence number."""
    found: list[int] = []

    async def answered() -> bool:
        calls = await a.tg.sim.call_log(since)
        found[:] = [
            c["seq"] for c in calls if c["method"] == "sendDocument" and c["chat_id"] == visitor
        ]
        return bool(found)

    await eventually(answered, timeout=10)
    return found[0]


async def test_pause_stops_within_two_seconds_resume_goes_on_and_cancel_leaves_the_rest(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with audience(pool, db_dsn, tmp_path, 400) as a:
        b = await a.broadcast()
        service, bot_id = a.features.broadcasts, a.bot["id"]

        async def some_sent() -> bool:
            return len(await broadcast_sends(a)) >= 40

        await eventually(some_sent)
        paused = await service.pause(bot_id, b["id"])
        assert paused["status"] == "paused" and paused["pause_reason"] == "owner"
        await asyncio.sleep(2.0)
        settled = len(await broadcast_sends(a))
        await asyncio.sleep(2.0)
        assert len(await broadcast_sends(a)) == settled, "still sending 2 s after the pause"
        assert settled < 400
        # Nothing of it is left in the outbox but what is finished.
        pending = await pool.fetchval(
            "SELECT count(*) FROM outbox WHERE bot_id = $1 AND status = 'pending'", bot_id
        )
        assert pending == 0

        await service.resume(bot_id, b["id"])

        async def more() -> bool:
            return len(await broadcast_sends(a)) >= settled + 40

        await eventually(more)
        await service.cancel(bot_id, b["id"])
        await asyncio.sleep(2.0)
        final = await broadcast_sends(a)
        await asyncio.sleep(1.5)
        assert len(await broadcast_sends(a)) == len(final)
        cancelled = await a.get(b["id"])
        assert cancelled["status"] == "cancelled" and cancelled["finished_at"] is not None
        assert len(final) < 400
        chats = [c["chat_id"] for c in final]
        assert len(chats) == len(set(chats)), "someone got the post twice"
        with pytest.raises(Conflict):
            await service.resume(bot_id, b["id"])


async def test_visitors_are_answered_before_the_queued_broadcast(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with audience(pool, db_dsn, tmp_path, 600) as a:
        content = await document(a)
        b = await a.broadcast()

        await sent_at_least(a, 25)
        visitors = [int((await a.tg.sim.create_user(f"Visitor {i}"))["id"]) for i in range(8)]
        for visitor in visitors:
            start = await latest_seq(a)
            await a.tg.sim.open_link(visitor, a.sim_bot["username"], content["code"])
            reply = await reply_seq(a, visitor, start)
            calls = await a.tg.sim.call_log(start)
            overtook = [c for c in calls if c["seq"] < reply and c["chat_id"] in set(a.people)]
            # At most what was in flight or claimed for this tick: never the queued hundreds.
            assert len(overtook) <= 12, f"{len(overtook)} broadcast messages went first"
        row = await a.get(b["id"])
        assert row["status"] == "sending" and row["progress"]["done"] < 600


async def test_a_refused_token_pauses_the_broadcast_until_the_token_is_replaced(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with audience(pool, db_dsn, tmp_path, 300) as a:
        b = await a.broadcast()

        await sent_at_least(a, 20)
        new_token = await a.tg.sim.revoke_token(a.sim_bot["username"])

        async def paused() -> bool:
            row = await a.get(b["id"])
            return bool(row["status"] == "paused" and row["pause_reason"] == "token_refused")

        await eventually(paused)
        bot = await a.features.bots.replace_token(a.bot["id"], new_token)
        assert bot.status == "active"
        done = await a.finished(b["id"], timeout=90)
        counts = await a.deliveries()
        assert set(counts.values()) == {1}
        assert done["sent"] + done["unknown"] == 300 and done["blocked"] == done["failed"] == 0
        # An unknown outcome is a claim whose send failed on the refused token: never sent.
        assert len(counts) == done["sent"]


async def test_the_audience_filters_choose_who_gets_it(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with audience(pool, db_dsn, tmp_path, 10) as a:
        persian = await add_people(
            a.tg.sim, pool, a.bot["id"], a.sim_bot["username"], 6, language="fa"
        )
        a.people.extend(persian)
        await pool.execute(
            "UPDATE people SET last_seen = now() - interval '40 days' WHERE user_id = ANY($1)",
            persian[:2],
        )
        await pool.execute(
            "INSERT INTO events (bot_id, kind, user_id)"
            " SELECT $1, 'gate_passed', u FROM unnest($2::bigint[]) u",
            a.bot["id"],
            persian[2:5],
        )
        service, bot_id = a.features.broadcasts, a.bot["id"]
        assert await service.audience_count(bot_id, Audience()) == 16
        assert await service.audience_count(bot_id, Audience(language="fa")) == 6
        assert await service.audience_count(bot_id, Audience(language="fa", active_days=30)) == 4
        chosen = Audience(language="fa", active_days=30, passed=True)
        assert await service.audience_count(bot_id, chosen) == 3
        done = await a.finished((await a.broadcast(audience=chosen))["id"])
        assert (done["recipients"], done["sent"]) == (3, 3)
        assert set(await a.deliveries()) == set(persian[2:5])
        with pytest.raises(Invalid):
            await service.audience_count(bot_id, Audience(language="de"))


CAMPAIGN = """
INSERT INTO campaigns (name, chat_id, chat_title, created_by)
VALUES ('Spring', -1009, 'Spring channel', 'test') RETURNING id
"""
# Joined through the campaign's gate ($3, when NULL the join came from outside the gate).
MEMBER = """
INSERT INTO campaign_members (campaign_id, user_id, bot_id, gate_joined_at, outside_at)
SELECT $1, u, $2, CASE WHEN $3 THEN now() END, CASE WHEN $3 THEN NULL ELSE now() END
FROM unnest($4::bigint[]) u
"""


async def test_the_campaign_filter_chooses_who_joined_through_its_gate(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with audience(pool, db_dsn, tmp_path, 10) as a:
        service, bot_id = a.features.broadcasts, a.bot["id"]
        campaign = await pool.fetchval(CAMPAIGN)
        other = await pool.fetchval(CAMPAIGN)
        await pool.execute(MEMBER, campaign, bot_id, True, a.people[:4])
        await pool.execute(MEMBER, campaign, None, False, a.people[4:6])
        await pool.execute(MEMBER, other, bot_id, True, a.people[6:8])
        joined = Audience(campaign_id=campaign)
        assert await service.audience_count(bot_id, joined) == 4
        assert await service.audience_count(bot_id, Audience(campaign_id=other)) == 2
        done = await a.finished((await a.broadcast(audience=joined))["id"])
        assert (done["recipients"], done["sent"]) == (4, 4)
        assert set(await a.deliveries()) == set(a.people[:4])


async def test_a_paid_broadcast_goes_past_the_free_limit(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with audience(pool, db_dsn, tmp_path, 600) as a:
        b = await a.broadcast(post=Post(text="Paid news", paid=True))
        await a.finished(b["id"])
        sends = await broadcast_sends(a)
        assert len(sends) == 600
        per_second: dict[int, int] = {}
        for call in sends:
            per_second[int(call["ts"])] = per_second.get(int(call["ts"]), 0) + 1
        assert max(per_second.values()) > 30


async def test_a_429_on_the_broadcast_pauses_the_broadcast_not_the_replies(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with audience(pool, db_dsn, tmp_path, 150) as a:
        content = await document(a)
        b = await a.broadcast()

        await sent_at_least(a, 10)
        await a.tg.sim.set_fault("sendMessage", force_429_next=1, retry_after=3)

        async def throttled() -> bool:
            calls = await a.tg.sim.call_log(await latest_seq(a) - 50)
            return any(c["error_code"] == 429 for c in calls)

        await eventually(throttled)
        start = await latest_seq(a)
        visitor = int((await a.tg.sim.create_user("Visitor"))["id"])
        await a.tg.sim.open_link(visitor, a.sim_bot["username"], content["code"])
        reply = await reply_seq(a, visitor, start)
        calls = await a.tg.sim.call_log(start)
        # The reply went out while the broadcast waited out its 3 seconds.
        sent_between = [c for c in calls if c["seq"] < reply and c["chat_id"] in set(a.people)]
        assert sent_between == []
        done = await a.finished(b["id"])
        assert done["sent"] == 150
        counts = await a.deliveries()
        assert len(counts) == 150 and set(counts.values()) == {1}
