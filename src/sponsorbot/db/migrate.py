"""Numbered plain-SQL migrations, applied in order under an advisory lock."""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from sponsorbot.db import citus_schema
from sponsorbot.db.pool import on_citus

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# Any constant works; it only has to be the same in every process of one installation.
ADVISORY_LOCK_KEY = 0x5B0_0000_0001
_FILE_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
# The oldest major version still supported upstream, and the one Debian 12 ships: the
# migrations and queries use nothing newer (CI runs the integration tests on it too).
OLDEST_SERVER = 15

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


class MigrationError(Exception):
    """The database and the code disagree about the schema."""


@dataclass(frozen=True)
class Migration:
    """One migration file."""

    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        """A short hash of the file, recorded to notice edited migrations."""
        return hashlib.sha256(self.sql.encode()).hexdigest()[:16]


def load_migrations(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Every `NNNN_name.sql` file in the directory, in order; other names are an error."""
    found: list[Migration] = []
    for path in sorted(directory.iterdir()):
        if path.suffix != ".sql":
            continue
        match = _FILE_NAME.match(path.name)
        if match is None:
            raise MigrationError(f"migration file {path.name} is not named NNNN_name.sql")
        found.append(Migration(int(match[1]), match[2], path.read_text(encoding="utf-8")))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError("two migration files share a number")
    return found


async def migrate(conn: asyncpg.Connection, migrations: list[Migration] | None = None) -> list[int]:
    """Apply the missing migrations, each in its own transaction; return the versions applied.

    Holds a session advisory lock throughout, so processes starting together apply each
    migration once: the second waits, then finds nothing left to do.

    On a Citus coordinator (the `citus` extension present), the schema is then distributed
    (db/citus_schema.py): once it is, each new migration runs in Citus's sequential mode and
    the tables it adds are distributed before the next one runs. On plain PostgreSQL nothing
    of this happens.
    """
    version = int(await conn.fetchval("SHOW server_version_num"))
    if version < OLDEST_SERVER * 10000:
        raise MigrationError(
            f"PostgreSQL {OLDEST_SERVER} or newer is needed; this server is "
            f"{version // 10000}.{version % 10000}: upgrade it, or leave SPONSORBOT_DATABASE_URL "
            "unset to use the embedded one"
        )
    todo = load_migrations() if migrations is None else migrations
    known = {m.version for m in todo}
    applied: list[int] = []
    await conn.execute("SELECT pg_advisory_lock($1)", ADVISORY_LOCK_KEY)
    try:
        await conn.execute(_CREATE_TABLE)
        citus = await on_citus(conn)
        rows = await conn.fetch("SELECT version, name FROM schema_migrations ORDER BY version")
        done = {r["version"] for r in rows}
        unknown = sorted(done - known)
        if unknown:
            raise MigrationError(
                f"the database has migration {unknown[-1]} that this version of Sponsorbot does "
                "not know: it was migrated by a newer version; upgrade Sponsorbot"
            )
        for migration in todo:
            if migration.version in done:
                continue
            log.info("applying migration %04d_%s", migration.version, migration.name)
            distributed = citus and await citus_schema.is_distributed(conn)
            async with conn.transaction():
                if distributed:
                    # DDL on a table with a foreign key to a reference table must go over one
                    # connection per node for the whole transaction (Citus refuses otherwise).
                    await conn.execute(citus_schema.SEQUENTIAL)
                await conn.execute(migration.sql)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    migration.version,
                    migration.name,
                    migration.checksum,
                )
            applied.append(migration.version)
            if distributed:
                await citus_schema.distribute(conn)
        if citus:
            await citus_schema.distribute(conn)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", ADVISORY_LOCK_KEY)
    return applied


async def applied_versions(conn: asyncpg.Connection) -> set[int] | None:
    """The migrations recorded in the database; None when it has never been migrated."""
    if not await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL"):
        return None
    return {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}


async def is_current(conn: asyncpg.Connection) -> bool:
    """True when every known migration is recorded (what /healthz asks)."""
    done = await applied_versions(conn)
    return done is not None and {m.version for m in load_migrations()} <= done
