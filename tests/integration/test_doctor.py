"""`sponsorbot doctor` against the simulated Telegram over HTTP and a real database."""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest

from sponsorbot.config import Settings
from sponsorbot.engine.bots import BotService
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.ops.doctor import PARALLEL_BOTS, Finding, run_doctor
from sponsorbot.ops.doctor_local import GIB, MIB, disk_finding
from sponsorbot.telegram import BotApi
from tests.kit import SECRET, Telegram, eventually, make_settings, simulated_telegram
from tests.processes import clean_environ, free_port

OTHER_SECRET = "another-key-that-is-also-long-enough-0987654321"
FORGET_LAST_MIGRATION = """
DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)
RETURNING version
"""
# What a running migration or restore holds: each table the doctor reads, by the check reading it.
LOCKS = {
    "migrations": "LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE",
    "secret key": "LOCK TABLE token_key_check IN ACCESS EXCLUSIVE MODE",
    "bots": "LOCK TABLE bots IN ACCESS EXCLUSIVE MODE",
}
LOCKED = (
    "the database did not answer within 1 s: a migration or restore may hold a lock; "
    "see pg_stat_activity"
)


@dataclass
class Install:
    """A migrated database with a webhook bot and a polling bot, as the product left them."""

    tg: Telegram
    settings: Settings
    public_url: str
    hook: dict[str, object]
    poll: dict[str, object]

    @property
    def tokens(self) -> list[str]:
        return [str(self.hook["token"]), str(self.poll["token"])]

    def with_(self, **overrides: object) -> Settings:
        """The same settings but `overrides`, validated as the product would read them."""
        return Settings(**(self.settings.model_dump() | overrides))


@pytest.fixture
async def install(pool: asyncpg.Pool, db_dsn: str, tmp_path: Path) -> AsyncIterator[Install]:
    # Nothing listens there: webhook deliveries fail, which no test but one provokes.
    public_url = f"http://127.0.0.1:{free_port()}"
    async with simulated_telegram() as tg:
        api = BotApi(tg.url)
        service = BotService(pool, api, TokenBox(SECRET.encode()), public_url)
        hook = await tg.sim.create_bot("hook_doc_bot")
        poll = await tg.sim.create_bot("poll_doc_bot")
        await service.add(str(hook["token"]), "webhook")
        await service.add(str(poll["token"]), "polling")
        await service.check_key()  # what the first start does: the key check row
        await api.close()
        settings = make_settings(db_dsn, tg.url, tmp_path, public_url=public_url)
        yield Install(tg, settings, public_url, hook, poll)


async def doctor(
    settings: Settings, timeout_s: float = 5.0, parallel: int = PARALLEL_BOTS
) -> dict[str, Finding]:
    found = await run_doctor(settings, lambda _: None, timeout_s=timeout_s, parallel=parallel)
    lines = {f.check: f for f in found}
    assert len(lines) == len(found), "a check was reported twice"
    return lines


def levels(found: dict[str, Finding]) -> dict[str, str]:
    return {check: f.level for check, f in found.items()}


HOOK, POLL = "@hook_doc_bot", "@poll_doc_bot"


def bot_check(found: dict[str, Finding], kind: str, username: str) -> Finding:
    (match,) = [f for check, f in found.items() if check.startswith(f"{kind} {username} (id ")]
    return match


async def test_a_healthy_installation_is_all_ok(install: Install) -> None:
    found = await doctor(install.settings)
    assert list(found)[:3] == ["database", "migrations", "secret key"]
    assert list(found)[-2:] == ["clock", "disk"]
    assert found["disk"].level != "FAIL"  # the machine's own disk: a warning is its business
    del found["disk"]
    assert set(levels(found).values()) == {"ok"}, [f.line() for f in found.values()]
    assert len(found) == 3 + 4 + 1
    assert "PostgreSQL" in found["database"].detail
    assert found["migrations"].detail.startswith("current")
    assert "matches the database's key check" in found["secret key"].detail
    assert "set to " + install.public_url in bot_check(found, "webhook", HOOK).detail
    assert "polls" in bot_check(found, "webhook", POLL).detail


async def test_a_revoked_token_is_a_fail_naming_the_bot(install: Install) -> None:
    await install.tg.sim.revoke_token("poll_doc_bot")
    found = await doctor(install.settings)
    refused = bot_check(found, "bot", POLL)
    assert refused.level == "FAIL"
    assert f"(id {install.poll['id']})" in refused.check
    assert "refuses its token" in refused.detail
    assert bot_check(found, "webhook", POLL).level == "skip"
    assert bot_check(found, "bot", HOOK).level == "ok"


async def test_migrations_behind_and_ahead(install: Install, pool: asyncpg.Pool) -> None:
    last = await pool.fetchval(FORGET_LAST_MIGRATION)
    found = await doctor(install.settings)
    assert found["migrations"].level == "FAIL"
    assert found["migrations"].detail == f"{last:04d} not applied: run `sponsorbot migrate`"
    await pool.execute(
        "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, 'x', 'x'), (9999,"
        " 'from_the_future', 'x')",
        last,
    )
    found = await doctor(install.settings)
    assert found["migrations"].level == "FAIL"
    assert "has migration 9999" in found["migrations"].detail
    assert "this program is older than the database; update" in found["migrations"].detail


async def test_a_wrong_secret_key_fails_the_key_and_every_token(install: Install) -> None:
    found = await doctor(install.with_(secret_key=OTHER_SECRET))
    assert found["secret key"].level == "FAIL"
    assert "does not match the key" in found["secret key"].detail
    for name in (HOOK, POLL):
        token = bot_check(found, "bot", name)
        assert token.level == "FAIL"
        assert "cannot be decrypted: the secret key is wrong" in token.detail


async def test_a_missing_key_file_is_a_fail_when_tokens_were_saved(install: Install) -> None:
    found = await doctor(install.with_(secret_key=None))  # and no secret.key in the data dir
    assert found["secret key"].level == "FAIL"
    assert "put that key back" in found["secret key"].detail
    assert not (install.settings.data_dir / "secret.key").exists()  # the doctor made none


async def test_a_webhook_missing_or_elsewhere_is_reported(install: Install) -> None:
    # The public address moved since: Telegram still delivers to the old one.
    found = await doctor(install.with_(public_url="https://bots.example.org"))
    moved = bot_check(found, "webhook", HOOK)
    assert moved.level == "FAIL"
    assert "not to https://bots.example.org/tg/…" in moved.detail
    api = BotApi(install.tg.url)
    try:
        await api.bot(str(install.hook["token"])).delete_webhook()
        found = await doctor(install.settings)
        missing = bot_check(found, "webhook", HOOK)
        assert missing.level == "FAIL"
        assert "no webhook is set" in missing.detail
        assert "pause and resume" in missing.detail
        # Another program sets a webhook with the polling bot's token.
        await api.bot(str(install.poll["token"])).set_webhook("https://elsewhere.example/hook")
        found = await doctor(install.settings)
        polled = bot_check(found, "webhook", POLL)
        assert polled.level == "FAIL"
        assert "https://elsewhere.example/…" in polled.detail
        assert "/hook" not in polled.detail
    finally:
        await api.close()


async def test_a_failing_delivery_shows_telegrams_last_error(install: Install) -> None:
    user = await install.tg.sim.create_user("Visitor")
    await install.tg.sim.send_text(user["id"], "hook_doc_bot", "hello")
    api = BotApi(install.tg.url)
    hook = api.bot(str(install.hook["token"]))

    async def failed() -> bool:
        return "last_error_date" in await hook.get_webhook_info()

    try:
        await eventually(failed, timeout=10)
    finally:
        await api.close()
    delivery = bot_check(await doctor(install.settings), "webhook", HOOK)
    assert delivery.level == "FAIL"
    assert "1 update(s) waiting" in delivery.detail
    assert re.search(r"last delivery error \d s ago: Connection refused", delivery.detail)
    assert f"check that {install.public_url} reaches the api role" in delivery.detail


async def test_telegram_unreachable_fails_quickly(install: Install) -> None:
    started = time.monotonic()
    found = await doctor(install.with_(telegram_api=f"http://127.0.0.1:{free_port()}"))
    assert time.monotonic() - started < 3
    assert found["telegram"].level == "FAIL"
    assert "no answer from http://127.0.0.1:" in found["telegram"].detail
    assert bot_check(found, "bot", HOOK).level == "skip"
    assert found["clock"].level == "skip"
    assert found["database"].level == "ok"


async def test_a_hanging_telegram_is_cut_off_by_the_timeout(install: Install) -> None:
    await install.tg.sim.set_fault("getMe", timeout_rate=1.0, hang_seconds=30)
    started = time.monotonic()
    found = await doctor(install.settings, timeout_s=1.0)
    assert time.monotonic() - started < 4
    for name in (HOOK, POLL):
        token = bot_check(found, "bot", name)
        assert token.level == "FAIL"
        assert "Telegram did not answer getMe" in token.detail


@contextlib.asynccontextmanager
async def locked(dsn: str, lock: str) -> AsyncIterator[None]:
    """Another session holding `lock` in an open transaction, as a migration or restore does."""
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.execute(lock)
            yield
    finally:
        await conn.close()


@pytest.mark.parametrize("check", list(LOCKS))
async def test_a_locked_table_is_a_fail_and_the_other_checks_go_on(
    install: Install, db_dsn: str, check: str
) -> None:
    async with locked(db_dsn, LOCKS[check]):
        started = time.monotonic()
        # A doctor that waits for the lock would wait as long as the lock is held: cut it off.
        found = await asyncio.wait_for(doctor(install.settings, timeout_s=1.0), 15)
        assert time.monotonic() - started < 5
    assert found[check].line() == f"FAIL {check}: {LOCKED}"
    for other in {"database", "migrations", "secret key", "clock"} - {check}:
        assert found[other].level == "ok", found[other].line()
    if check != "bots":
        assert bot_check(found, "bot", HOOK).level == "ok"
        assert bot_check(found, "webhook", POLL).level == "ok"


async def test_many_slow_bots_each_get_their_own_time(install: Install, pool: asyncpg.Pool) -> None:
    api = BotApi(install.tg.url)
    try:
        service = BotService(pool, api, TokenBox(SECRET.encode()), install.public_url)
        for n in range(38):
            bot = await install.tg.sim.create_bot(f"many{n}_doc_bot")
            await service.add(str(bot["token"]), "polling")
    finally:
        await api.close()
    # Each call answers in well under its 0.5 s, but 40 bots four at a time take some 3 s.
    await install.tg.sim.set_latency(150)
    found = await doctor(install.settings, timeout_s=0.5, parallel=4)
    bots = [f for check, f in found.items() if check.startswith(("bot @", "webhook @"))]
    assert len(bots) == 2 * 40
    assert [f.line() for f in bots if f.level != "ok"] == []


@contextlib.asynccontextmanager
async def silent_server() -> AsyncIterator[int]:
    """A loopback port that accepts connections and never answers; yields the port."""

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # until the other side gives up
        writer.close()

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


async def test_a_silent_database_and_telegram_are_cut_off_by_the_timeout(
    install: Install,
) -> None:
    async with silent_server() as port:
        started = time.monotonic()
        found = await doctor(
            install.with_(
                database_url=f"postgresql://sb@127.0.0.1:{port}/sb",
                telegram_api=f"http://127.0.0.1:{port}",
            ),
            timeout_s=1.0,
        )
        assert time.monotonic() - started < 3
    assert found["database"].line().startswith(f"FAIL database: no answer from 127.0.0.1:{port}/sb")
    assert "TimeoutError: timed out after 1 s" in found["telegram"].detail
    assert found["clock"].level == "skip"


async def test_clock_skew_warns_then_fails(install: Install) -> None:
    await install.tg.sim.advance_clock(30)
    found = await doctor(install.settings)
    assert found["clock"].level == "warn"
    assert "behind Telegram's" in found["clock"].detail
    await install.tg.sim.advance_clock(90)
    found = await doctor(install.settings)
    assert found["clock"].level == "FAIL"
    assert "2 min behind Telegram's: enable NTP (timedatectl set-ntp true)" in found["clock"].detail


async def test_no_embedded_database_yet(clean_env: Path) -> None:
    async with simulated_telegram() as tg:
        settings = Settings(data_dir=clean_env / "data", telegram_api=tg.url)
        found = await doctor(settings)
    assert found["database"].level == "FAIL"
    assert "run `sponsorbot migrate` to create the embedded one" in found["database"].detail
    assert [found[c].level for c in ("migrations", "bots")] == ["skip", "skip"]
    assert found["secret key"].level == "warn"
    assert not (clean_env / "data").exists()  # neither a database nor a key was made


def test_disk_thresholds() -> None:
    where = Path("/srv/sponsorbot")
    assert disk_finding(where, 400 * MIB, 100 * GIB).level == "FAIL"
    assert disk_finding(where, 1 * GIB, 100 * GIB).level == "warn"
    assert disk_finding(where, 9 * GIB, 100 * GIB).level == "warn"  # under 10 %
    assert disk_finding(where, 11 * GIB, 100 * GIB).level == "ok"
    assert disk_finding(where, 1900 * MIB, 3 * GIB).level == "warn"  # a small disk, 2 GiB
    assert disk_finding(where, 11 * GIB, 100 * GIB).line() == (
        "ok   disk: 11.0 GiB free of 100.0 GiB (11%) for /srv/sponsorbot"
    )


async def cli_doctor(env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    """`python -m sponsorbot doctor` as a process; its exit code, stdout and stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sponsorbot",
        "doctor",
        "--timeout",
        "10",
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def cli_env(settings: Settings) -> dict[str, str]:
    return clean_environ(
        SPONSORBOT_DATABASE_URL=str(settings.database_url),
        SPONSORBOT_TELEGRAM_API=settings.telegram_api,
        SPONSORBOT_PUBLIC_URL=str(settings.public_url),
        SPONSORBOT_SECRET_KEY=SECRET,
        SPONSORBOT_DATA_DIR=str(settings.data_dir),
    )


@pytest.mark.slow
async def test_the_cli_prints_one_line_per_check_and_no_token(install: Install) -> None:
    code, out, err = await cli_doctor(cli_env(install.settings), install.settings.data_dir)
    assert code == 0, out + err
    lines = out.splitlines()
    assert len(lines) == 9
    assert all(line.startswith(("ok   ", "warn disk: ")) for line in lines), out
    assert err == ""
    # The failing paths print the most about a bot: a refused token, a missing webhook.
    await install.tg.sim.revoke_token("poll_doc_bot")
    api = BotApi(install.tg.url)
    try:
        await api.bot(str(install.hook["token"])).delete_webhook()
    finally:
        await api.close()
    code, out, err = await cli_doctor(cli_env(install.settings), install.settings.data_dir)
    assert code == 1
    assert f"FAIL bot {POLL} (id {install.poll['id']}): Telegram refuses its token" in out
    assert f"FAIL webhook {HOOK} (id {install.hook['id']}): no webhook is set" in out
    for token in install.tokens:
        secret = token.partition(":")[2]
        assert secret not in out + err
    assert SECRET not in out + err


@pytest.mark.slow
async def test_the_cli_on_an_unreachable_database_fails_without_a_traceback(
    install: Install,
) -> None:
    env = cli_env(install.settings)
    env["SPONSORBOT_DATABASE_URL"] = f"postgresql://sb:pw-not-shown@127.0.0.1:{free_port()}/sb"
    started = time.monotonic()
    code, out, err = await cli_doctor(env, install.settings.data_dir)
    assert time.monotonic() - started < 10
    assert code == 1
    assert "Traceback" not in out + err
    assert "pw-not-shown" not in out + err
    lines = out.splitlines()
    assert lines[0].startswith("FAIL database: cannot connect to 127.0.0.1:")
    assert "check that PostgreSQL runs there" in lines[0]
    assert "skip migrations: not checked: no database" in lines
    assert "skip bots: not checked: no database" in lines
    assert lines[-2].startswith("ok   clock: ")
