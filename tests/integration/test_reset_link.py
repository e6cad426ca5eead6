"""`sponsorbot reset-link`: the way back in for an owner who forgot their password (or lost the
phone with their two-step codes), for whoever holds the server."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime

import asyncpg
import pytest

from sponsorbot.features.accounts import invitations
from tests.processes import clean_environ

# Every test runs the command as a process.
pytestmark = pytest.mark.slow

PANEL = "https://panel.example.com"


def _reset_link(dsn: str, tmp_path: object, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_environ(
        SPONSORBOT_DATABASE_URL=dsn,
        SPONSORBOT_PANEL_URL=PANEL,
        SPONSORBOT_DATA_DIR=str(tmp_path),
        SPONSORBOT_SECRET_KEY="k" * 48,
    )
    return subprocess.run(
        [sys.executable, "-m", "sponsorbot", "reset-link", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
async def owner(pool: asyncpg.Pool) -> int:
    user_id: int = await pool.fetchval(
        "INSERT INTO users (email, name, password_hash, role, totp_secret, recovery_codes) "
        "VALUES ('Sara@Example.com', 'Sara', 'x', 'owner', 'sealed', ARRAY['\\x01'::bytea]) "
        "RETURNING id"
    )
    return user_id


async def test_the_link_sets_a_new_password_once(
    pool: asyncpg.Pool, db_dsn: str, owner: int, tmp_path: object
) -> None:
    done = _reset_link(db_dsn, tmp_path, "sara@example.com")
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip().splitlines()[-1]
    assert f"{PANEL}/reset/" in line
    token = line.split("/reset/", 1)[1].split()[0]
    reset = await invitations.open_reset(pool, token, datetime.now(UTC))
    assert reset is not None and reset["user_id"] == owner
    # Two-step sign-in is left alone unless asked.
    assert await pool.fetchval("SELECT totp_secret FROM users WHERE id = $1", owner) == "sealed"
    audit = await pool.fetch("SELECT actor, kind, target FROM audit_log")
    assert [(r["actor"], r["kind"]) for r in audit] == [("command line", "team.reset_link_created")]
    # A second link replaces the first.
    again = _reset_link(db_dsn, tmp_path, "sara@example.com")
    assert again.returncode == 0
    assert await invitations.open_reset(pool, token, datetime.now(UTC)) is None


async def test_two_step_sign_in_can_be_turned_off_with_it(
    pool: asyncpg.Pool, db_dsn: str, owner: int, tmp_path: object
) -> None:
    done = _reset_link(db_dsn, tmp_path, "sara@example.com", "--two-step-off")
    assert done.returncode == 0, done.stderr
    row = await pool.fetchrow("SELECT totp_secret, recovery_codes FROM users WHERE id = $1", owner)
    assert row["totp_secret"] is None and row["recovery_codes"] == []
    assert "two-step sign-in is off" in done.stdout


async def test_an_unknown_member_is_one_line(
    pool: asyncpg.Pool, db_dsn: str, owner: int, tmp_path: object
) -> None:
    done = _reset_link(db_dsn, tmp_path, "nobody@example.com")
    assert done.returncode == 1
    assert "no active member signs in with 'nobody@example.com'" in done.stderr
    assert "Traceback" not in done.stderr
    assert await pool.fetchval("SELECT count(*) FROM password_resets") == 0
