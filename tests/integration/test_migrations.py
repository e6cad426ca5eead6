"""Migrations: the schema they produce, idempotence, concurrency, a newer database."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import asyncpg
import pytest

from sponsorbot.db.migrate import MigrationError, load_migrations, migrate
from sponsorbot.db.pool import connect
from tests.schema import describe_schema

EXPECTED = Path(__file__).with_name("expected_schema.txt")


async def test_migrations_from_zero_give_the_expected_schema(empty_dsn: str) -> None:
    conn = await connect(empty_dsn)
    try:
        applied = await migrate(conn)
        assert applied == [m.version for m in load_migrations()]
        actual = await describe_schema(conn)
    finally:
        await conn.close()
    if os.environ.get("SPONSORBOT_UPDATE_SCHEMA") == "1":
        EXPECTED.write_text(actual)
    # To accept a deliberate change: SPONSORBOT_UPDATE_SCHEMA=1 pytest -k expected_schema
    assert actual == EXPECTED.read_text()


async def test_migrate_twice_is_a_no_op(empty_dsn: str) -> None:
    conn = await connect(empty_dsn)
    try:
        assert await migrate(conn)
        before = await describe_schema(conn)
        assert await migrate(conn) == []
        assert await describe_schema(conn) == before
    finally:
        await conn.close()


async def test_a_newer_database_is_refused(empty_dsn: str) -> None:
    conn = await connect(empty_dsn)
    try:
        await migrate(conn)
        await conn.execute(
            "INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, 'future', 'x')"
        )
        with pytest.raises(MigrationError, match="newer version"):
            await migrate(conn)
    finally:
        await conn.close()


async def test_a_failing_migration_leaves_nothing_half_done(empty_dsn: str, tmp_path: Path) -> None:
    good = load_migrations()
    (tmp_path / "0001_ok.sql").write_text(good[0].sql)
    (tmp_path / "0002_broken.sql").write_text("CREATE TABLE half (x int); SELECT no_such_fn();")
    conn = await connect(empty_dsn)
    try:
        with pytest.raises(asyncpg.PostgresError):
            await migrate(conn, load_migrations(tmp_path))
        versions = await conn.fetch("SELECT version FROM schema_migrations")
        assert [r["version"] for r in versions] == [1]
        assert await conn.fetchval("SELECT to_regclass('half')") is None
    finally:
        await conn.close()


@pytest.mark.slow
async def test_two_processes_migrating_at_once_apply_each_migration_once(empty_dsn: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPONSORBOT_")}
    env["SPONSORBOT_DATABASE_URL"] = empty_dsn
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sponsorbot",
            "migrate",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(2)
    ]
    outputs = await asyncio.gather(*(p.communicate() for p in procs))
    assert [p.returncode for p in procs] == [0, 0], outputs
    said = sorted(out.decode() for out, _ in outputs)
    assert said[0].startswith("applied")
    assert said[1].startswith("the database is up to date")
    conn = await connect(empty_dsn)
    try:
        rows = await conn.fetch("SELECT version FROM schema_migrations ORDER BY version")
    finally:
        await conn.close()
    assert [r["version"] for r in rows] == [m.version for m in load_migrations()]


async def test_a_server_older_than_we_support_is_refused_with_the_version_needed(
    empty_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 15: `migrate` says which PostgreSQL it needs instead of failing on some SQL."""
    from sponsorbot.db import migrate as migrations

    monkeypatch.setattr(migrations, "OLDEST_SERVER", 99)
    conn = await connect(empty_dsn)
    try:
        with pytest.raises(MigrationError, match="PostgreSQL 99 or newer is needed"):
            await migrate(conn)
        assert await conn.fetchval("SELECT to_regclass('schema_migrations')") is None
    finally:
        await conn.close()
