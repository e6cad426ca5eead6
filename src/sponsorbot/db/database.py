"""Opening the database for a role: the configured server, or the embedded one."""

from __future__ import annotations

import asyncio
import logging

import asyncpg

from sponsorbot.config import Settings
from sponsorbot.db.embedded import EmbeddedPostgres
from sponsorbot.db.pool import connect, create_pool

log = logging.getLogger(__name__)


class Database:
    """The pool and DSN of one process, and the embedded server if this process uses one."""

    def __init__(self, dsn: str, pool: asyncpg.Pool, embedded: EmbeddedPostgres | None) -> None:
        self.dsn = dsn
        self.pool = pool
        self.embedded = embedded

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
