"""The sender against the simulator: limits, 429, 401, 403, references."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sponsorbot.engine.unit import UnitOfWork
from tests.kit import Telegram, eventually, make_settings, running_engine, simulated_telegram


async def enqueue(
    pool: asyncpg.Pool, bot_id: int, rows: list[tuple[int, str, dict[str, Any]]], **kw: Any
) -> None:
    uow = UnitOfWork(bot_id)
    for chat_id, method, params in rows:
        uow.send(chat_id, method, params, **kw)
    await uow.commit(pool)


async def outbox_counts(pool: asyncpg.Pool) -> dict[str, int]:
    rows = await pool.fetch("SELECT status, count(*) AS n FROM outbox GROUP BY status")
    return {r["status"]: r["n"] for r in rows}


async def people(tg: Telegram, n: int, bot: str) -> list[int]:
    """People who have opened the bot (a bot cannot write first)."""
    ids = []
    for i in range(n):
        user = await tg.sim.create_user(f"P{i}")
        await tg.sim.open_link(user["id"], bot)
        ids.append(user["id"])
    return ids


async def test_queued_messages_are_sent_in_order_per_chat(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("send_bot")
        users = await people(tg, 5, "send_bot")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn) as run:
            await run.engine.bots.add(bot["token"], "polling")
            rows = [(u, "sendMessage", {"text": f"{u}:{k}"}) for k in range(6) for u in users]
            await enqueue(pool, bot["id"], rows)
            run.engine.notifier.wake(f"outbox:{bot['id']}")

            async def all_sent() -> bool:
                return (await outbox_counts(pool)).get("sent") == 30

            await eventually(all_sent, timeout=30)
        for u in users:
            chat = await tg.sim.read_chat(u, "send_bot")
            texts = [m["text"] for m in chat if m["from"] == "bot"]
            assert texts == [f"{u}:{k}" for k in range(6)]


def sends(calls: list[dict[str, Any]], bot_id: int) -> list[dict[str, Any]]:
    return [c for c in calls if c["method"] == "sendMessage" and c["bot_id"] == bot_id]


async def test_429_pauses_the_bot_for_retry_after_and_loses_nothing(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("slow_bot")
        users = await people(tg, 3, "slow_bot")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn) as run:
            await run.engine.bots.add(bot["token"], "polling")
            await tg.sim.set_fault("sendMessage", force_429_next=1, retry_after=2)
            rows = [(u, "sendMessage", {"text": f"{u}:{k}"}) for k in range(3) for u in users]
            await enqueue(pool, bot["id"], rows)
            run.engine.notifier.wake(f"outbox:{bot['id']}")

            async def all_sent() -> bool:
                return (await outbox_counts(pool)).get("sent") == 9

            await eventually(all_sent, timeout=30)
        calls = sends(await tg.sim.call_log(), bot["id"])
        refused = [c for c in calls if c["error_code"] == 429]
        assert len(refused) == 1
        at = refused[0]["ts"]
        after = [c for c in calls if c["seq"] > refused[0]["seq"]]
        assert after, "nothing was sent after the 429"
        # Calls already in flight when the 429 came back (other chats, at most the sender's
        # concurrency less one) land at once; nothing else may come before retry_after.
        in_flight = [c for c in after if c["ts"] < at + 0.2]
        assert len(in_flight) <= 3
        during_pause = [c for c in after if at + 0.2 <= c["ts"] < at + 2.0 - 0.05]
        assert during_pause == []
        assert any(c["ts"] >= at + 2.0 - 0.05 for c in after)
        for u in users:
            chat = await tg.sim.read_chat(u, "slow_bot")
            texts = [m["text"] for m in chat if m["from"] == "bot"]
            assert texts == [f"{u}:{k}" for k in range(3)]
        throttled = await pool.fetchval("SELECT sum(throttled) FROM send_stats")
        assert throttled == 1


async def test_401_marks_the_bot_and_stops_it_while_other_bots_go_on(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        doomed = await tg.sim.create_bot("doomed_bot")
        fine = await tg.sim.create_bot("fine_bot")
        doomed_users = await people(tg, 2, "doomed_bot")
        fine_users = await people(tg, 2, "fine_bot")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn) as run:
            await run.engine.bots.add(doomed["token"], "polling")
            await run.engine.bots.add(fine["token"], "polling")
            await tg.sim.revoke_token("doomed_bot")
            await enqueue(
                pool, doomed["id"], [(u, "sendMessage", {"text": "x"}) for u in doomed_users]
            )
            await enqueue(pool, fine["id"], [(u, "sendMessage", {"text": "y"}) for u in fine_users])
            run.engine.notifier.wake(f"outbox:{doomed['id']}")
            run.engine.notifier.wake(f"outbox:{fine['id']}")

            async def refused() -> bool:
                status = await pool.fetchval("SELECT status FROM bots WHERE id = $1", doomed["id"])
                sent = await pool.fetchval(
                    "SELECT count(*) FROM outbox WHERE bot_id = $1 AND status = 'sent'", fine["id"]
                )
                return bool(status == "token_refused" and sent == 2)

            await eventually(refused, timeout=30)
            mark = (await tg.sim.call_log())[-1]["seq"]
            await enqueue(pool, doomed["id"], [(doomed_users[0], "sendMessage", {"text": "z"})])
            await enqueue(pool, fine["id"], [(fine_users[0], "sendMessage", {"text": "w"})])
            run.engine.notifier.wake(f"outbox:{doomed['id']}")
            run.engine.notifier.wake(f"outbox:{fine['id']}")

            async def fine_goes_on() -> bool:
                sent = await pool.fetchval(
                    "SELECT count(*) FROM outbox WHERE bot_id = $1 AND status = 'sent'", fine["id"]
                )
                return bool(sent == 3)

            await eventually(fine_goes_on, timeout=30)
            await asyncio.sleep(2.5)  # a refresh cycle or two: nothing may wake the doomed bot
            later = await tg.sim.call_log(since=mark)
            assert not [c for c in later if c["bot_id"] == doomed["id"]]
            assert ("send", doomed["id"]) not in run.engine.manager.holding
            assert ("poll", doomed["id"]) not in run.engine.manager.holding
        pending = await pool.fetchval(
            "SELECT count(*) FROM outbox WHERE bot_id = $1 AND status = 'pending'", doomed["id"]
        )
        assert pending >= 1, "the refused bot's messages wait for a new token, not discarded"


async def test_403_fails_that_row_marks_the_person_and_others_go_out(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("block_bot")
        blocker, other = await people(tg, 2, "block_bot")
        await tg.sim.block_bot(blocker, "block_bot")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn) as run:
            await run.engine.bots.add(bot["token"], "polling")
            await enqueue(
                pool,
                bot["id"],
                [(blocker, "sendMessage", {"text": "a"}), (other, "sendMessage", {"text": "b"})],
            )
            run.engine.notifier.wake(f"outbox:{bot['id']}")

            async def settled() -> bool:
                counts = await outbox_counts(pool)
                return counts.get("sent") == 1 and counts.get("failed") == 1

            await eventually(settled, timeout=30)
        failed = await pool.fetchrow("SELECT chat_id, error FROM outbox WHERE status = 'failed'")
        assert failed["chat_id"] == blocker
        assert "blocked" in failed["error"]
        blocked_at = await pool.fetchval(
            "SELECT blocked_at FROM people WHERE bot_id = $1 AND user_id = $2", bot["id"], blocker
        )
        assert blocked_at is not None
        chat = await tg.sim.read_chat(other, "block_bot")
        assert [m["text"] for m in chat if m["from"] == "bot"] == ["b"]


async def test_references_let_a_later_row_edit_and_delete_an_earlier_message(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("ref_bot")
        (user,) = await people(tg, 1, "ref_bot")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn) as run:
            await run.engine.bots.add(bot["token"], "polling")
            await enqueue(pool, bot["id"], [(user, "sendMessage", {"text": "gate"})], ref="g1")
            await enqueue(
                pool, bot["id"], [(user, "editMessageText", {"text": "gate 2"})], uses_ref="g1"
            )
            await enqueue(
                pool, bot["id"], [(user, "editMessageText", {"text": "gate 2"})], uses_ref="g1"
            )
            await enqueue(pool, bot["id"], [(user, "deleteMessage", {})], uses_ref="g1")
            await enqueue(pool, bot["id"], [(user, "deleteMessage", {})], uses_ref="never")
            run.engine.notifier.wake(f"outbox:{bot['id']}")

            async def settled() -> bool:
                return (await outbox_counts(pool)).get("pending", 0) == 0

            await eventually(settled, timeout=30)
        rows = await pool.fetch("SELECT method, status, error FROM outbox ORDER BY id")
        assert [r["status"] for r in rows] == ["sent", "sent", "sent", "sent", "failed"]
        chat = await tg.sim.read_chat(user, "ref_bot")
        gate = [m for m in chat if m["from"] == "bot"]
        assert len(gate) == 1 and gate[0]["deleted"] and gate[0]["edited"]


async def test_a_reply_telegram_refuses_is_logged_for_the_owner(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Nobody else hears of a refused reply: the log says which bot, call and chat, and why."""
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("refused_bot")
        (user,) = await people(tg, 1, "refused_bot")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        broken = {"text": "<b>never closed", "parse_mode": "HTML"}
        with caplog.at_level(logging.WARNING, logger="sponsorbot.engine.sender"):
            async with running_engine(settings, pool, db_dsn) as run:
                await run.engine.bots.add(bot["token"], "polling")
                await enqueue(pool, bot["id"], [(user, "sendMessage", broken)])
                run.engine.notifier.wake(f"outbox:{bot['id']}")

                async def settled() -> bool:
                    return (await outbox_counts(pool)).get("failed", 0) == 1

                await eventually(settled, timeout=30)
        lines = [r.getMessage() for r in caplog.records if "refused by Telegram" in r.getMessage()]
        assert len(lines) == 1
        assert lines[0].startswith(f"bot {bot['id']}: sendMessage to chat {user} refused")
        assert "parse entities" in lines[0] and bot["token"] not in lines[0]


async def test_500_queued_replies_never_exceed_the_bot_limit(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("busy_bot")
        users = await people(tg, 50, "busy_bot")
        settings = make_settings(db_dsn, tg.url, tmp_path, send_per_bot_per_s=25)
        async with running_engine(settings, pool, db_dsn) as run:
            await run.engine.bots.add(bot["token"], "polling")
            await enqueue(
                pool,
                bot["id"],
                [(u, "sendMessage", {"text": str(k)}) for k in range(10) for u in users],
            )
            run.engine.notifier.wake(f"outbox:{bot['id']}")

            async def all_sent() -> bool:
                return (await outbox_counts(pool)).get("sent") == 500

            await eventually(all_sent, timeout=60)
        log = sends(await tg.sim.call_log(), bot["id"])
    calls = [c for c in log if c["ok"]]
    assert len(calls) == 500
    assert not [c for c in log if c["error_code"] == 429]
    times = sorted(c["ts"] for c in calls)

    def busiest(window: float) -> int:
        return max(sum(1 for t in times[i:] if t < start + window) for i, start in enumerate(times))

    # Telegram's own limit (30 in any second) is never reached; our 25 a second holds within
    # the jitter of a busy machine between our clock and the simulator's (0.1 s).
    assert busiest(1.0) < 30, busiest(1.0)
    assert busiest(0.9) <= 25, busiest(0.9)
