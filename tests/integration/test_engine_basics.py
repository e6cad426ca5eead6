"""The engine end to end on the simulator: intake by polling, a handler, a reply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.engine.routing import Router
from sponsorbot.engine.unit import Context
from tests.kit import eventually, make_settings, running_engine, simulated_telegram


def echo_router() -> Router:
    router = Router("echo")

    @router.message()
    async def echo(message: dict[str, Any], ctx: Context) -> None:
        ctx.uow.send(message["chat"]["id"], "sendMessage", {"text": f"echo: {message['text']}"})

    return router


async def test_a_polled_message_gets_one_reply(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("echo_bot")
        user = await tg.sim.create_user("Ann", language_code="en")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn, echo_router()) as run:
            added = await run.engine.bots.add(bot["token"], "polling")
            assert added["username"] == "echo_bot"
            assert added["token_tail"] == bot["token"][-4:]
            for text in ("one", "two", "three"):
                await tg.sim.send_text(user["id"], "echo_bot", text)

            async def replied() -> bool:
                chat = await tg.sim.read_chat(user["id"], "echo_bot")
                return len([m for m in chat if m["from"] == "bot"]) >= 3

            await eventually(replied)
        chat = await tg.sim.read_chat(user["id"], "echo_bot")
        texts = [m["text"] for m in chat if m["from"] == "bot"]
        assert texts == ["echo: one", "echo: two", "echo: three"]
        stored = await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'done'")
        assert stored == 3
        token_in_db = await pool.fetchval(
            "SELECT count(*) FROM bots WHERE position($1 in encode(token_enc, 'escape')) > 0",
            bot["token"],
        )
        assert token_in_db == 0


async def test_replies_skip_the_outbox_read_but_never_overtake_older_rows_of_their_chat(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("handoff_bot")
        user = await tg.sim.create_user("Ann")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn, echo_router()) as run:
            added = await run.engine.bots.add(bot["token"], "polling")

            async def bot_texts() -> list[str]:
                chat = await tg.sim.read_chat(user["id"], "handoff_bot")
                return [m["text"] for m in chat if m["from"] == "bot"]

            async def sender_ready() -> bool:
                return added["id"] in run.engine.manager.senders

            await eventually(sender_ready)
            for text in ("one", "again"):
                await tg.sim.send_text(user["id"], "handoff_bot", text)

                async def replied(text: str = text) -> bool:
                    return (await bot_texts())[-1:] == [f"echo: {text}"]

                await eventually(replied)
            # The worker gave the replies to the sender of its own process directly (the first
            # may have been read from the outbox instead, if the just-started sender's first
            # read came back between the commit and the hand-over).
            assert run.engine.manager.senders[added["id"]].handed >= 1

            # A row for the same chat queued by someone else, that no sender has read yet: the
            # next reply must not go out before it.
            await pool.execute(
                "INSERT INTO outbox (bot_id, chat_id, method, params)"
                " VALUES ($1, $2, 'sendMessage', $3)",
                added["id"],
                user["id"],
                {"chat_id": user["id"], "text": "queued elsewhere"},
            )
            await tg.sim.send_text(user["id"], "handoff_bot", "two")

            async def all_four() -> bool:
                return len(await bot_texts()) == 4

            await eventually(all_four)
        assert await bot_texts() == ["echo: one", "echo: again", "queued elsewhere", "echo: two"]
        assert await pool.fetchval("SELECT count(*) FROM outbox WHERE status <> 'sent'") == 0
