"""Webhook intake, dead updates, health figures."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
from typer.testing import CliRunner

from sponsorbot.cli import app as cli
from sponsorbot.db.database import Database
from sponsorbot.engine.routing import Router
from sponsorbot.engine.unit import Context
from sponsorbot.features.all import install
from sponsorbot.web.app import create_app
from tests.kit import eventually, make_settings, running_engine, serving, simulated_telegram

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


def replying_router() -> Router:
    router = Router("replying")

    @router.message()
    async def reply(message: dict[str, Any], ctx: Context) -> None:
        chat = message["chat"]["id"]
        ctx.uow.send(chat, "sendMessage", {"text": f"got {ctx.update_id}"})

    return router


async def test_webhook_stores_once_answers_once_and_refuses_bad_requests(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("hook_bot")
        user = await tg.sim.create_user("Web")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn, replying_router()) as run:
            app = create_app(settings, Database(db_dsn, pool, None), install(run.engine))
            async with serving(app) as base:
                run.engine.bots.public_url = base
                await run.engine.bots.add(bot["token"], "webhook")
                path = await pool.fetchval("SELECT webhook_path FROM bots")
                # The simulator delivers a real update through the webhook.
                await tg.sim.send_text(user["id"], "hook_bot", "hello")

                async def answered() -> bool:
                    chat = await tg.sim.read_chat(user["id"], "hook_bot")
                    return any(m["from"] == "bot" for m in chat)

                await eventually(answered)
                # Now post by hand, with a secret we set (only its hash is stored).
                await pool.execute(
                    "UPDATE bots SET webhook_secret_hash = $1",
                    hashlib.sha256(b"s3cret").digest(),
                )
                update = {
                    "update_id": 999_001,
                    "message": {
                        "message_id": 50,
                        "from": {"id": user["id"], "is_bot": False, "first_name": "Web"},
                        "chat": {"id": user["id"], "type": "private"},
                        "date": 1,
                        "text": "twice",
                    },
                }
                url = f"{base}/tg/{path}"
                async with aiohttp.ClientSession() as http:
                    statuses = []
                    for _ in range(2):
                        async with http.post(
                            url, json=update, headers={SECRET_HEADER: "s3cret"}
                        ) as r:
                            statuses.append(r.status)
                    async with http.post(url, json=update | {"update_id": 999_002}) as r:
                        no_secret = r.status
                    async with http.post(
                        url, json=update | {"update_id": 999_003}, headers={SECRET_HEADER: "x"}
                    ) as r:
                        wrong_secret = r.status
                    bodies = [b"{not json", b"[]", b'{"message": {}}', b'{"update_id": "7"}']
                    malformed = []
                    for body in bodies:
                        async with http.post(
                            url, data=body, headers={SECRET_HEADER: "s3cret"}
                        ) as r:
                            malformed.append((r.status, (await r.json())["error"]))
                    async with http.post(
                        f"{base}/tg/unknown", json=update, headers={SECRET_HEADER: "s3cret"}
                    ) as r:
                        unknown = r.status

                async def twice_answered() -> bool:
                    n = await pool.fetchval(
                        "SELECT count(*) FROM outbox o JOIN inbox i ON i.id = o.inbox_id "
                        "WHERE i.update_id = 999001 AND o.status = 'sent'"
                    )
                    return bool(n == 1)

                await eventually(twice_answered)
    assert statuses == [200, 200]
    assert no_secret == 401 and wrong_secret == 401
    assert [s for s, _ in malformed] == [400, 400, 400, 400]
    assert unknown == 404
    stored = await pool.fetch(
        "SELECT update_id FROM inbox WHERE update_id BETWEEN 999000 AND 999999"
    )
    assert [r["update_id"] for r in stored] == [999_001]
    replies = await pool.fetchval(
        "SELECT count(*) FROM outbox WHERE params->>'text' = 'got 999001'"
    )
    assert replies == 1


async def test_a_handler_that_always_fails_ends_dead_and_the_person_moves_on(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    router = Router("picky")
    handled: list[str] = []

    @router.message()
    async def picky(message: dict[str, Any], ctx: Context) -> None:
        if message["text"] == "boom":
            raise ValueError("this update always fails")
        handled.append(message["text"])

    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("dead_bot")
        user = await tg.sim.create_user("Dee")
        settings = make_settings(db_dsn, tg.url, tmp_path, max_attempts=3)
        async with running_engine(settings, pool, db_dsn, router) as run:
            await run.engine.bots.add(bot["token"], "polling")
            for text in ("first", "boom", "after"):
                await tg.sim.send_text(user["id"], "dead_bot", text)

            async def settled() -> bool:
                return handled == ["first", "after"]

            await eventually(settled)
    dead = await pool.fetchrow("SELECT attempts, error FROM inbox WHERE status = 'dead'")
    assert dead["attempts"] == 3
    assert "this update always fails" in dead["error"]


async def test_status_and_metrics_show_the_queue(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        bot = await tg.sim.create_bot("stat_bot")
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn, worker=False) as run:
            await run.engine.bots.add(bot["token"], "polling")
            for n in range(4):
                await pool.execute(
                    "INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, received_at)"
                    " VALUES ($1, $2, 'message', $3, '{}', now() - interval '90 seconds')",
                    bot["id"],
                    n + 1,
                    100 + n,
                )
            await pool.execute(
                "INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, status)"
                " VALUES ($1, 77, 'message', 1, '{}', 'dead')",
                bot["id"],
            )
            await pool.execute(
                "INSERT INTO send_stats (bot_id, minute, sent, throttled)"
                " VALUES ($1, date_trunc('minute', now()), 12, 2)",
                bot["id"],
            )
            app = create_app(settings, Database(db_dsn, pool, None), install(run.engine))
            async with (
                serving(app) as base,
                aiohttp.ClientSession() as http,
                http.get(f"{base}/metrics") as r,
            ):
                assert r.status == 200
                text = await r.text()
    from sponsorbot.features.stats.health import status_table
    from sponsorbot.features.stats.queries import bot_status

    rows = await bot_status(pool)
    table = status_table(rows)
    assert "@stat_bot" in table and "polling" in table and "active" in table
    (row,) = rows
    assert (row["waiting"], row["dead"], row["sent_1m"], row["throttled_1m"]) == (4, 1, 12, 2)
    assert row["oldest_s"] >= 89
    label = f'bot="{bot["id"]}",username="stat_bot"'
    assert f"sponsorbot_inbox_waiting{{{label}}} 4.0" in text
    assert f"sponsorbot_inbox_dead{{{label}}} 1.0" in text
    assert f"sponsorbot_429_last_minute{{{label}}} 2.0" in text
    assert bot["token"] not in text and bot["token"] not in table
    command = await asyncio.to_thread(
        CliRunner().invoke, cli, ["status"], env=cli_env(db_dsn, tmp_path)
    )
    assert command.exit_code == 0, command.output
    assert f"@stat_bot ({bot['id']})" in command.output and "90." in command.output
    assert bot["token"] not in command.output


def test_status_command_on_a_workspace_without_bots(db_dsn: str, tmp_path: Path) -> None:
    command = CliRunner().invoke(cli, ["status"], env=cli_env(db_dsn, tmp_path))
    assert command.exit_code == 0, command.output
    assert command.output.startswith("no bots yet: connect one")


def cli_env(db_dsn: str, data_dir: Path) -> dict[str, str]:
    """What the `sponsorbot` command reads from the environment to reach the test's database."""
    return {"SPONSORBOT_DATABASE_URL": db_dsn, "SPONSORBOT_DATA_DIR": str(data_dir)}
