"""A full run at DEBUG level: no bot token and no TronGrid key in any log line of any process."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from sponsorbot.engine.bots import BotService
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.simulator.client import SimulatorClient
from sponsorbot.telegram import BotApi
from sponsorbot.tron.address import parse_address
from tests.kit import SECRET, eventually
from tests.processes import clean_environ, free_port, wait_healthy

pytestmark = pytest.mark.slow


async def test_no_token_reaches_any_log_line(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    sim_port, api_port = free_port(), free_port()
    sim_log, run_log = tmp_path / "sim.log", tmp_path / "run.log"
    sim = subprocess.Popen(
        [sys.executable, "-m", "sponsorbot", "simulator", "--port", str(sim_port), "--seed", "3"],
        stdout=sim_log.open("ab"),
        stderr=subprocess.STDOUT,
    )
    sim_url = f"http://127.0.0.1:{sim_port}"
    env = clean_environ(
        SPONSORBOT_DATABASE_URL=db_dsn,
        SPONSORBOT_TELEGRAM_API=sim_url,
        SPONSORBOT_SECRET_KEY=SECRET,
        SPONSORBOT_PUBLIC_URL=f"http://127.0.0.1:{api_port}",
        SPONSORBOT_PORT=str(api_port),
        SPONSORBOT_DATA_DIR=str(tmp_path),
        SPONSORBOT_LOG_LEVEL="DEBUG",
        SPONSORBOT_TRONGRID_URL=sim_url,
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "sponsorbot", "run"],
        env=env,
        stdout=run_log.open("ab"),
        stderr=subprocess.STDOUT,
    )
    tokens: list[str] = []
    trongrid_key = "tg-key-0d9f3c2b7a6e"
    try:
        await asyncio.to_thread(wait_healthy, api_port, run)
        control = SimulatorClient(sim_url)
        api = BotApi(sim_url)
        try:
            service = BotService(
                pool, api, TokenBox(SECRET.encode()), f"http://127.0.0.1:{api_port}"
            )
            hook = await control.create_bot("hook_secret_bot")
            polled = await control.create_bot("poll_secret_bot")
            tokens += [hook["token"], polled["token"]]
            await service.add(hook["token"], "webhook")
            await service.add(polled["token"], "polling")
            user = await control.create_user("Sec")
            for bot in ("hook_secret_bot", "poll_secret_bot"):
                await control.open_link(user["id"], bot, "payload")
                await control.send_text(user["id"], bot, "hello")

            async def handled() -> bool:
                n = await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'done'")
                return bool(n >= 4)

            await eventually(handled, timeout=30)
            # The shop's TronGrid key, refused by TronGrid: the runner's error path logs too.
            await control.tron_require_api_key("another-key")
            shop = (await control.tron_create_wallet())["address"]
            await pool.execute(
                "INSERT INTO shop_settings (bot_id, enabled, address, api_key, accept_trx)"
                " VALUES ($1, true, $2, $3, false)",
                hook["id"],
                parse_address(shop),
                TokenBox(SECRET.encode()).seal(trongrid_key),
            )
            order = await pool.fetchval(
                "INSERT INTO shop_orders (bot_id, kind, title, days, user_id, price_usdt, state,"
                " network, address, accept_usdt, accept_trx, approved_at)"
                " VALUES ($1, 'banner', 'B', 1, $2, 5, 'awaiting_payment', 'mainnet', $3,"
                " true, false, now()) RETURNING id",
                hook["id"],
                user["id"],
                parse_address(shop),
            )
            await pool.execute(
                "INSERT INTO shop_payments (order_id, bot_id, tx_hash) VALUES ($1, $2, $3)",
                order,
                hook["id"],
                "cd" * 32,
            )

            async def asked() -> bool:
                error = await pool.fetchval("SELECT last_error FROM shop_payments")
                return error is not None

            await eventually(asked, timeout=30)
            # A refused token: the error paths (401 at the sender and poller) log too.
            tokens.append(await control.revoke_token("poll_secret_bot"))
            await pool.execute(
                "INSERT INTO outbox (bot_id, chat_id, method, params)"
                " VALUES ($1, $2, 'sendMessage', $3)",
                polled["id"],
                user["id"],
                {"chat_id": user["id"], "text": "after revoke"},
            )

            async def refused() -> bool:
                status = await pool.fetchval("SELECT status FROM bots WHERE id = $1", polled["id"])
                return bool(status == "token_refused")

            await eventually(refused, timeout=30)
        finally:
            await control.close()
            await api.close()
    finally:
        for proc in (run, sim):
            proc.send_signal(signal.SIGTERM)
        for proc in (run, sim):
            proc.wait(timeout=20)
    output = run_log.read_text() + sim_log.read_text()
    assert "DEBUG" in output, "the run did not log at DEBUG: the test proves nothing"
    assert "token_refused" in output or "refused its token" in output
    for token in tokens:
        assert token not in output
        assert token.split(":", 1)[1] not in output
    assert "the API key was refused" in output, "the runner did not use the key"
    assert trongrid_key not in output
    assert run.returncode == 0
