"""The forced-join gate end to end: simulator, real PostgreSQL, the real engine worker."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.features.stats.facts import facts as stat_facts
from tests.integration.gatekit import (
    BOT,
    gate_of,
    join_urls,
    joined_button,
    running_gate,
)
from tests.kit import eventually


def has_file(messages: list[dict[str, Any]]) -> bool:
    return any(m["media"] and m["media"]["kind"] == "document" for m in messages)


async def member_calls(tg, since: int = 0) -> int:
    return len([c for c in await tg.sim.call_log(since) if c["method"] == "getChatMember"])


async def test_full_journey_two_missing_channels(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(pool, db_dsn, tmp_path) as g:
        user = await g.visitor()
        a, b = g.channels
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        messages = await g.wait_for(user, gate_of)
        gate = gate_of(messages)
        assert gate is not None and not has_file(messages)
        assert join_urls(gate) == ["https://t.me/gatechan0", "https://t.me/gatechan1"]
        # Titles are escaped for HTML parse mode and arrive as the owner wrote them.
        assert 'Channel <0> & "co"' in gate["text"]

        await g.tg.sim.join(user, a["id"])
        await g.tg.sim.press_button(user, BOT, gate["message_id"], joined_button(gate))
        messages = await g.wait_for(
            user, lambda ms: gate_of(ms) and len(join_urls(gate_of(ms))) == 1
        )
        assert join_urls(gate_of(messages)) == ["https://t.me/gatechan1"]
        answers = await g.tg.sim.callback_answers(user, BOT)
        assert "Channel <1>" in answers[-1]["text"]

        await g.tg.sim.join(user, b["id"])
        await g.tg.sim.press_button(user, BOT, gate["message_id"], joined_button(gate))
        messages = await g.wait_for(user, has_file)
        assert gate_of(messages) is None
        sent = [m for m in messages if m["media"]]
        assert sent[0]["media"]["file_id"] and sent[0]["protect_content"]
        passed = await pool.fetchrow("SELECT data FROM events WHERE kind = 'gate_passed'")
        assert passed["data"] == {"checks": 3}
        # The statistics' funnel: opened 1 → gated 1 → joined 1 (two channels, one gate) →
        # passed 1 → delivered 1; the gate named both channels.
        # Read as the statistics read it (written out, which Citus plans; a call it does not).
        every = stat_facts("'-infinity'::timestamptz", "'infinity'::timestamptz", None)
        facts = await pool.fetch(
            f"SELECT kind, dim, sum(n) AS n FROM {every} WHERE kind IN ('started', 'gate_shown',"
            " 'gate_joined', 'gate_passed', 'content_sent', 'gate_listed', 'joined') GROUP BY 1, 2"
        )
        counts = {(r["kind"], r["dim"]): r["n"] for r in facts}
        item = str(g.content["id"])
        funnel = ("started", "gate_shown", "gate_joined", "gate_passed", "content_sent")
        assert [counts.get((k, item)) for k in funnel] == [1, 1, 1, 1, 1]
        for channel in (a, b):
            assert counts[("gate_listed", str(channel["id"]))] == 1
            assert counts[("joined", str(channel["id"]))] == 1


async def test_member_of_both_gets_content_without_a_gate(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(pool, db_dsn, tmp_path) as g:
        user = await g.visitor()
        for channel in g.channels:
            await g.tg.sim.join(user, channel["id"])
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        messages = await g.wait_for(user, has_file)
        assert len(messages) == 1 and gate_of(messages) is None
        kinds = await pool.fetch("SELECT kind FROM events ORDER BY id")
        kinds_seen = [r["kind"] for r in kinds]
        assert kinds_seen.count("joined") == 2  # from the chat_member updates
        assert [k for k in kinds_seen if k != "joined"] == [
            "started",
            "gate_passed",
            "content_sent",
        ]


async def test_joined_is_cached_until_a_chat_member_update_says_left(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(pool, db_dsn, tmp_path) as g:
        user = await g.visitor()
        for channel in g.channels:
            await g.tg.sim.join(user, channel["id"])
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        await g.wait_for(user, has_file)
        mark = (await g.tg.sim.call_log())[-1]["seq"]
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        await g.wait_for(user, lambda ms: sum(1 for m in ms if m["media"]) == 2)
        assert await member_calls(g.tg, mark) == 0

        await g.tg.sim.leave(user, g.channels[0]["id"])

        async def left_recorded() -> bool:
            return bool(await pool.fetchval("SELECT count(*) FROM events WHERE kind = 'left'"))

        await eventually(left_recorded)
        mark = (await g.tg.sim.call_log())[-1]["seq"]
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        messages = await g.wait_for(user, gate_of)
        assert join_urls(gate_of(messages)) == ["https://t.me/gatechan0"]
        assert await member_calls(g.tg, mark) == 1  # only the channel that was left


async def test_lost_admin_reads_unknown_and_lets_through(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(pool, db_dsn, tmp_path) as g:
        user = await g.visitor()
        a, b = g.channels
        await g.tg.sim.join(user, a["id"])
        await g.tg.sim.remove_admin(b["id"], g.bot["id"])
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        await g.wait_for(user, has_file)
        channel = await g.features.channels.get(g.bot["id"], b["id"])
        assert channel["status"] == "missing_rights"
        assert channel["missing"] == ["administrator"]
        unknown = await pool.fetchval(
            "SELECT count(*) FROM events WHERE kind = 'channel_unknown' AND chat_id = $1", b["id"]
        )
        assert unknown == 1


async def test_telegram_outage_neither_passes_nor_locks_out(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(pool, db_dsn, tmp_path) as g:
        stranger = await g.visitor()
        member = await g.visitor()
        for channel in g.channels:
            await g.tg.sim.join(member, channel["id"])
        await g.tg.sim.set_fault("getChatMember", error_rate=1.0, status=500)
        await g.tg.sim.open_link(stranger, BOT, g.content["code"])
        await g.tg.sim.open_link(member, BOT, g.content["code"])

        async def retried() -> bool:
            return bool(await pool.fetchval("SELECT count(*) FROM inbox WHERE attempts >= 3"))

        await eventually(retried)
        assert await g.bot_messages(stranger) == []
        # (The member may already pass: the chat_member updates of their joins were cached.)
        await g.tg.sim.clear_faults()
        await g.wait_for(stranger, gate_of)
        await g.wait_for(member, has_file)
        assert not has_file(await g.bot_messages(stranger))
        dead = await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'dead'")
        assert dead == 0


async def test_join_request_pending_passes_declined_does_not(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(
        pool, db_dsn, tmp_path, channels=1, private=True, request_counts=True
    ) as g:
        user = await g.visitor()
        (channel,) = g.channels
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        messages = await g.wait_for(user, gate_of)
        gate = gate_of(messages)
        (url,) = join_urls(gate)
        assert url.startswith("https://t.me/+")
        assert await g.tg.sim.join(user, invite_link=url) == "pending"

        async def recorded() -> bool:
            return bool(await pool.fetchval("SELECT count(*) FROM join_requests"))

        await eventually(recorded)
        await g.tg.sim.press_button(user, BOT, gate["message_id"], joined_button(gate))
        await g.wait_for(user, has_file)

        await g.features.bot_settings.decide_request(g.bot["id"], channel["id"], user, False)
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        await g.wait_for(user, gate_of)
        # The invite link was made once and is reused.
        links = await pool.fetch("SELECT invite_link FROM channels")
        assert [r["invite_link"] for r in links] == [url]


async def test_auto_delete_survives_a_worker_restart(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    content = {"auto_delete_s": 3, "caption": "Report ü & ش"}
    async with running_gate(pool, db_dsn, tmp_path, channels=0, content=content) as g:
        user = await g.visitor(language="fa")
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        messages = await g.wait_for(user, lambda ms: len(ms) == 2)
        assert messages[0]["caption"] == "Report ü & ش"
        assert "دقیقه" in messages[1]["text"]  # the notice, in Persian
        await g.run.halt()
        engine = g.run.engine
        # A new worker, as after a restart: the durable deletes are in the outbox.
        from tests.kit import running_engine

        async with running_engine(engine.settings, pool, db_dsn):
            await g.wait_for(user, lambda ms: ms == [], timeout=30)
        chat = await g.tg.sim.read_chat(user, BOT)
        assert all(m["deleted"] for m in chat if m["from"] == "bot")


async def test_unknown_disabled_and_huge_payloads_get_a_friendly_reply(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(pool, db_dsn, tmp_path, channels=0) as g:
        user = await g.visitor()
        await g.features.contents.update(g.bot["id"], g.content["id"], {"enabled": False})
        payloads = ["nosuchcode12", g.content["code"], "x" * 5000, "سلام<b>&"]
        for payload in payloads:
            await g.tg.sim.open_link(user, BOT, payload)
        messages = await g.wait_for(user, lambda ms: len(ms) == len(payloads))
        assert all("not valid" in m["text"] for m in messages)
        assert not has_file(messages)

        async def settled() -> bool:
            return not await pool.fetchval(
                "SELECT count(*) FROM inbox WHERE status NOT IN ('done')"
            )

        await eventually(settled)
        unknown = await pool.fetchval("SELECT count(*) FROM events WHERE kind = 'unknown_code'")
        assert unknown == len(payloads)


async def test_second_link_replaces_the_open_gate(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(pool, db_dsn, tmp_path, channels=1) as g:
        user = await g.visitor()
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        first = gate_of(await g.wait_for(user, gate_of))
        await g.tg.sim.open_link(user, BOT, g.content["code"])
        messages = await g.wait_for(
            user, lambda ms: gate_of(ms) and gate_of(ms)["message_id"] != first["message_id"]
        )
        assert len(messages) == 1
        await asyncio.sleep(0)


async def test_file_sent_in_a_batch_by_an_uploader_gets_one_link(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(pool, db_dsn, tmp_path, channels=0) as g:
        uploader = await g.visitor()
        await g.features.bot_settings.add_uploader(g.bot["id"], uploader, "me")
        await g.tg.sim.send_file(uploader, BOT, "video", caption="clip")
        messages = await g.wait_for(uploader, lambda ms: len(ms) == 1)
        assert f"t.me/{BOT}?start=" in messages[0]["text"]
        await g.tg.sim.send_text(uploader, BOT, "/batch")
        await g.tg.sim.send_file(uploader, BOT, "document", file_name="a.pdf")
        await g.tg.sim.send_file(uploader, BOT, "photo")
        await g.tg.sim.send_text(uploader, BOT, "/done")
        messages = await g.wait_for(uploader, lambda ms: len(ms) == 5)
        code = messages[-1]["text"].rsplit("start=", 1)[1].strip()
        row = await pool.fetchrow("SELECT kind, items FROM contents WHERE code = $1", code)
        assert row["kind"] == "batch" and [i["kind"] for i in row["items"]] == ["document", "photo"]

        visitor = await g.visitor()
        await g.tg.sim.open_link(visitor, BOT, code)
        got = await g.wait_for(visitor, lambda ms: len(ms) == 2)
        assert [m["media"]["kind"] for m in got] == ["document", "photo"]


async def test_a_stranger_making_the_bot_admin_does_not_add_their_chat(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """M16: any promotion to admin used to upsert the chat into the owner's channel list."""
    async with running_gate(pool, db_dsn, tmp_path, channels=1) as g:
        stranger = await g.tg.sim.create_user("Stranger")
        uploader = await g.tg.sim.create_user("Uploader")
        await pool.execute(
            "INSERT INTO uploaders (bot_id, user_id) VALUES ($1, $2)", g.bot["id"], uploader["id"]
        )
        theirs = await g.tg.sim.create_channel("Buy followers", owner_id=stranger["id"])
        ours = await g.tg.sim.create_channel("Our news", owner_id=uploader["id"])
        await g.tg.sim.make_admin(theirs["id"], g.bot["id"])
        await g.tg.sim.make_admin(ours["id"], g.bot["id"])

        async def picked_up() -> bool:
            return bool(
                await pool.fetchval(
                    "SELECT count(*) FROM channels WHERE bot_id = $1 AND chat_id = $2",
                    g.bot["id"],
                    ours["id"],
                )
            )

        await eventually(picked_up)

        async def both_handled() -> bool:
            n = await pool.fetchval(
                "SELECT count(*) FROM inbox WHERE bot_id = $1 AND kind = 'my_chat_member'"
                " AND status = 'done'",
                g.bot["id"],
            )
            return bool(n >= 2)

        await eventually(both_handled)
        titles = await pool.fetch("SELECT title FROM channels WHERE bot_id = $1", g.bot["id"])
        assert "Buy followers" not in [r["title"] for r in titles]
