"""A throwaway database for a benchmark: on SPONSORBOT_DATABASE_URL's server, or else on an
embedded PostgreSQL in a new temporary directory, stopped afterwards."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg

from sponsorbot.db.embedded import EmbeddedPostgres, dsn_for


@contextlib.asynccontextmanager
async def scratch_database(name: str) -> AsyncIterator[str]:
    """Make database `name` afresh (dropping one of that name) and yield its URI."""
    server = None
    base = os.environ.get("SPONSORBOT_DATABASE_URL")
    if not base:
        server = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="sponsorbot-bench-")))
        base = server.start()
    try:
        admin = await asyncpg.connect(base)
        try:
            # The name is the benchmark's own constant, never input.
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            await admin.execute(f"CREATE DATABASE {name}")
        finally:
            await admin.close()
        yield dsn_for(base, name)
    finally:
        if server is not None:
            server.release()
