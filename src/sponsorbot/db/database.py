"""Opening the database for a role: the configured server, or the embedded one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import asyncpg

from sponsorbot.config import Settings
from sponsorbot.db.embedded import EmbeddedPostgres
from sponsorbot.db.migrate import migrate as apply_migrations
from sponsorbot.db.pool import connect, create_pool

log = logging.getLogger(__name__)


class Database:
    """The pool and DSN of one process, and the embedded server if this process uses one."""

    def __init__(self, dsn: str, pool: asyncpg.Pool, embedded: EmbeddedPostgres | None) -> None:
        self.dsn = dsn
        self.pool = pool
        self.embedded = embedded
        self.applied: list[int] = []

    @classmethod
    async def open(cls, settings: Settings, role: str) -> Database:
        """Connect (starting the embedded server when no URL is set) and open the pool."""
        embedded: EmbeddedPostgres | None = None
        if settings.database_url:
            dsn = settings.database_url
        else:
            embedded = EmbeddedPostgres(settings.data_dir)
            dsn = await asyncio.to_thread(embedded.start)
            log.info("embedded PostgreSQL ready in %s", embedded.pgdata)
        try:
            pool = await create_pool(
                dsn,
                role=role,
                min_size=settings.pool_min_size,
                max_size=settings.pool_max_size,
                statement_cache_size=settings.statement_cache_size,
            )
        except BaseException:
            if embedded is not None:
                await asyncio.to_thread(embedded.release)
            raise
        return cls(dsn, pool, embedded)

    async def connect(self, role: str) -> asyncpg.Connection:
        """A connection outside the pool (LISTEN, migrations)."""
        return await connect(self.dsn, role=role)

    async def close(self) -> None:
        """Close the pool and leave the embedded server (stopping it if we were last)."""
        try:
            await asyncio.wait_for(self.pool.close(), timeout=5)
        except TimeoutError:
            self.pool.terminate()
        if self.embedded is not None:
            await asyncio.to_thread(self.embedded.release)


@contextlib.asynccontextmanager
async def open_database(
    settings: Settings, role: str, *, migrate: bool = True
) -> AsyncIterator[Database]:
    """The database of a command or role, migrated first unless told not to; closed after.

    What the migration applied is in `db.applied`.
    """
    db = await Database.open(settings, role)
    try:
        if migrate:
            conn = await db.connect(f"{role}-migrate")
            try:
                db.applied = await apply_migrations(conn)
            finally:
                await conn.close()
        yield db
    finally:
        await db.close()
