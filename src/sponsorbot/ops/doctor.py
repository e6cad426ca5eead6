"""`sponsorbot doctor`: one line per check of an installation, ok or what to do.

The checks, in the order they are printed: the database and its server version, the
migrations, the secret key, what an older key still holds during a key rotation (only when
there is something to say), each bot's token (getMe) and webhook (getWebhookInfo), the clock
against Telegram's, the free disk space of the data dir. A check whose prerequisite failed is
printed as `skip` with the reason, so a dead database gives a short report, not a traceback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import asyncpg

from sponsorbot.config import Settings
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.ops.doctor_keys import CHECK as SEALED_CHECK
from sponsorbot.ops.doctor_keys import check_sealed
from sponsorbot.ops.doctor_local import (
    MIGRATE,
    TIMED_OUT,
    Finding,
    Key,
    brief,
    check_disk,
    check_key,
    check_migrations,
    fail,
    key_without_database,
    locked,
    reach_database,
    read_key,
    skip,
)
from sponsorbot.ops.doctor_telegram import (
    BotRow,
    check_bots,
    clock_finding,
    probe_telegram,
    skipped_bots,
    unreachable,
)
from sponsorbot.telegram import BotApi

__all__ = ["CALL_TIMEOUT_S", "Finding", "run_doctor"]

CALL_TIMEOUT_S = 5.0
PARALLEL_BOTS = 8
BOTS = """
SELECT id, username, mode, status, problem, token_enc, webhook_path
FROM bots ORDER BY created_at, id
"""

Emit = Callable[[Finding], None]


async def run_doctor(
    settings: Settings,
    emit: Emit,
    *,
    timeout_s: float = CALL_TIMEOUT_S,
    parallel: int = PARALLEL_BOTS,
) -> list[Finding]:
    """Run every check, passing each line to `emit` as soon as its turn comes; all of them
    are returned too. `timeout_s` bounds each call to the database or Telegram."""
    found: list[Finding] = []

    def report(*findings: Finding) -> None:
        for finding in findings:
            found.append(finding)
            emit(finding)

    api = BotApi(settings.telegram_api, timeout_s=timeout_s, connect_limit=parallel * 2)
    # Telegram is asked while the database is read: the two waits overlap.
    probe = asyncio.create_task(probe_telegram(api, timeout_s))
    try:
        key = read_key(settings)
        reached, first = await reach_database(settings, timeout_s)
        report(first)
        bots: list[BotRow] | None = None
        if reached is None:
            report(
                skip("migrations", "not checked: no database"),
                key_without_database(key),
                skip("bots", "not checked: no database"),
            )
        else:
            try:
                report(*await _database_checks(reached.conn, key, timeout_s))
                bots, trouble = await _read_bots(reached.conn, timeout_s)
                if trouble is not None:
                    report(trouble)
            finally:
                await reached.close()
        checked = await probe
        if checked.error is not None:
            report(unreachable(api, checked))
        if bots is not None:
            if checked.error is not None:
                report(*skipped_bots(bots, "not checked: Telegram did not answer"))
            else:
                box = TokenBox(key.secret) if key.secret is not None else None
                report(
                    *await check_bots(
                        api,
                        bots,
                        box,
                        settings.public_url,
                        parallel=parallel,
                        call_timeout_s=timeout_s,
                    )
                )
        report(clock_finding(checked))
        report(check_disk(settings.data_dir))
    finally:
        probe.cancel()
        await asyncio.gather(probe, return_exceptions=True)
        await api.close()
    return found


async def _database_checks(conn: asyncpg.Connection, key: Key, timeout_s: float) -> list[Finding]:
    """The migrations, the key and what an older key still holds, each its own FAIL if the
    database refuses the reading or does not answer it in time (the next check is still
    tried: another table may be free). The last says nothing when there is nothing to say."""
    findings = []
    checks: tuple[tuple[str, Callable[[], Awaitable[Finding | None]]], ...] = (
        ("migrations", lambda: check_migrations(conn)),
        ("secret key", lambda: check_key(conn, key)),
        (SEALED_CHECK, lambda: check_sealed(conn, key)),
    )
    for name, check in checks:
        try:
            finding = await check()
            if finding is not None:
                findings.append(finding)
        except TIMED_OUT:
            findings.append(locked(name, timeout_s))
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            findings.append(fail(name, f"cannot read it: {brief(exc)}"))
    return findings


async def _read_bots(
    conn: asyncpg.Connection, timeout_s: float
) -> tuple[list[BotRow] | None, Finding | None]:
    """Every bot, oldest first; or the line saying why they cannot be read."""
    try:
        rows = await conn.fetch(BOTS)
    except TIMED_OUT:
        return None, locked("bots", timeout_s)
    except (asyncpg.UndefinedTableError, asyncpg.UndefinedColumnError):
        return None, skip("bots", f"cannot read the bots before the migrations: {MIGRATE}")
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
        return None, fail("bots", f"cannot read them: {brief(exc)}")
    bots = [
        BotRow(
            r["id"],
            r["username"],
            r["mode"],
            r["status"],
            r["problem"],
            bytes(r["token_enc"]),
            r["webhook_path"],
        )
        for r in rows
    ]
    return bots, None
