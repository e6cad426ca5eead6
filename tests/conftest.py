"""Test infrastructure: one embedded PostgreSQL per session, a fresh database per test.

Every database test gets its own database cloned from a migrated template, so tests are
isolated and cheap. Set SPONSORBOT_TEST_DATABASE_URL to use another server instead, or
SPONSORBOT_TEST_POSTGRES=debian for a throwaway cluster of Debian's `postgresql` package (15 on
Debian 12: the oldest major version we support).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest

from sponsorbot.db.embedded import EmbeddedPostgres, dsn_for
from sponsorbot.db.migrate import migrate
from sponsorbot.db.pool import connect, create_pool
from tests.debian_pg import DebianPostgres

TEMPLATE = "sponsorbot_template"


@pytest.fixture(scope="session")
def pg_uri() -> Iterator[str]:
    """The URI of the session's PostgreSQL server (its maintenance database)."""
    url = os.environ.get("SPONSORBOT_TEST_DATABASE_URL")
    if url:
        yield url
        return
    if os.environ.get("SPONSORBOT_TEST_POSTGRES") == "debian":
        debian = DebianPostgres()
        try:
            yield debian.start()
        finally:
            debian.stop()
        return
    # Not under pytest's own temporary folder: as root, the server runs as another user that
    # needs every folder above its data to be open to it, and each new pytest session closes
    # /tmp/pytest-of-root again (0700), which would kill a running suite's server.
    folder = Path(tempfile.mkdtemp(prefix="sponsorbot-test-pg-"))
    server = EmbeddedPostgres(folder)
    try:
        yield server.start()
    finally:
        server.release()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
async def template_db(pg_uri: str) -> str:
    """A database migrated once, cloned by every test."""
    admin = await asyncpg.connect(pg_uri)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {TEMPLATE}")
    finally:
        await admin.close()
    conn = await connect(dsn_for(pg_uri, TEMPLATE))
    try:
        await migrate(conn)
    finally:
        await conn.close()
    return TEMPLATE


@pytest.fixture
async def empty_dsn(pg_uri: str) -> AsyncIterator[str]:
    """A new, empty database (for migration tests)."""
    async for dsn in _fresh_database(pg_uri, None):
        yield dsn


@pytest.fixture
async def db_dsn(pg_uri: str, template_db: str) -> AsyncIterator[str]:
    """A new database with every migration applied."""
    async for dsn in _fresh_database(pg_uri, template_db):
        yield dsn


async def _fresh_database(pg_uri: str, template: str | None) -> AsyncIterator[str]:
    name = f"t_{uuid.uuid4().hex[:16]}"
    admin = await asyncpg.connect(pg_uri)
    try:
        clause = f" TEMPLATE {template}" if template else ""
        await admin.execute(f"CREATE DATABASE {name}{clause}")
    finally:
        await admin.close()
    yield dsn_for(pg_uri, name)
    admin = await asyncpg.connect(pg_uri)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()


@pytest.fixture
async def pool(db_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on the test's own migrated database."""
    p = await create_pool(db_dsn, role="test", min_size=1, max_size=10)
    yield p
    await p.close()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No SPONSORBOT_ variables from the outside, and a data dir of the test's own."""
    for key in list(os.environ):
        if key.startswith("SPONSORBOT_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return tmp_path
