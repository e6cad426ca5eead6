"""`sponsorbot backup PATH`: a consistent dump of the database, with a manifest, in one file.

pg_dump reads the whole database in one snapshot, so a backup taken while the api and the
workers run is consistent. The secret key that seals the bot tokens is deliberately not in it:
whoever holds the backup must not hold the tokens too. The command says where the key is.

On a Citus coordinator pg_dump reads the distributed tables' rows through the coordinator (a
COPY of each table gathers its shards from the workers), so the one file holds the whole
cluster. Citus has no snapshot across nodes, though: each shard is read at its own moment, so
the backup refuses while Sponsorbot processes are connected (docs/scaling.md).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import asyncpg

from sponsorbot import __version__
from sponsorbot.config import Settings
from sponsorbot.db.database import Database
from sponsorbot.db.migrate import applied_versions
from sponsorbot.db.pool import on_citus
from sponsorbot.ops.backup_archive import BackupError, Manifest, sha256_of, write_archive
from sponsorbot.ops.backup_tools import PgTool, libpq_target, major_of, pick, run_tool

FACTS = """
SELECT current_database() AS database, current_setting('server_version') AS server_version
"""
# Other Sponsorbot processes on this database (each names its role in application_name).
IN_USE = """
SELECT DISTINCT application_name FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()
  AND application_name LIKE 'sponsorbot-%' AND application_name NOT LIKE 'sponsorbot-restore%'
  AND application_name NOT LIKE 'sponsorbot-backup%'
ORDER BY 1
"""
# pg_dump locks every table before it reads: behind a migration (or anything else holding a
# table exclusively) it gives up after this long instead of waiting, and the api with it.
LOCK_WAIT_S = 60
# pg_dump's --exclude-extension came with PostgreSQL 17.
EXCLUDE_EXTENSION_SINCE = 17

Say = Callable[[str], None]


@dataclass(frozen=True)
class Facts:
    """What the manifest records of the database dumped."""

    database: str
    server_version: str  # "18.6"
    migration: int

    @property
    def server_major(self) -> int:
        """The server's PostgreSQL major version."""
        return major_of(self.server_version)


@contextlib.asynccontextmanager
async def database(settings: Settings, role: str) -> AsyncIterator[Database]:
    """The configured database (the embedded server started if need be), not migrated:
    an unreachable one is a BackupError."""
    try:
        db = await Database.open(settings, role)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise BackupError(f"cannot reach the database: {exc}") from None
    try:
        yield db
    finally:
        await db.close()


async def facts(db: Database) -> Facts:
    """The database's name, its server's version and its migration level (0: none)."""
    async with db.pool.acquire() as conn:
        row = await conn.fetchrow(FACTS)
        level = max(await applied_versions(conn) or {0})
    return Facts(row["database"], str(row["server_version"]).split()[0], level)


def key_whereabouts(settings: Settings) -> str:
    """Where this installation's secret key is, in words."""
    if settings.secret_key is not None:
        return "SPONSORBOT_SECRET_KEY (set in the environment or .env)"
    path = settings.key_file
    if path.exists():
        return f"the file {path}"
    return f"not made yet (it would be the file {path}, or SPONSORBOT_SECRET_KEY)"


def _target(path: Path) -> Path:
    target = path.expanduser().absolute()
    if target.is_dir():
        raise BackupError(f"{path} is a directory: name the file to write, such as {path}/x.tar")
    if not target.parent.is_dir():
        raise BackupError(f"the directory {target.parent} does not exist")
    return target


def _size(count: int) -> str:
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count / 1024 / 1024:.1f} MiB"


async def running(conn: asyncpg.Connection) -> list[str]:
    """The other Sponsorbot processes connected to this database, by role."""
    return [r["application_name"] for r in await conn.fetch(IN_USE)]


async def _citus_ready(db: Database, tool: PgTool) -> list[str]:
    """On a Citus coordinator: refuse while Sponsorbot runs (no snapshot spans the nodes), and
    pg_dump's arguments that leave the citus extension out, so the backup also goes into one
    server (a pg_dump older than 17 cannot: its backup then needs Citus where it is restored).
    Nothing on one server."""
    if not await on_citus(db.pool):
        return []
    async with db.pool.acquire() as conn:
        users = await running(conn)
    if users:
        raise BackupError(
            f"this is a Citus cluster and Sponsorbot is running on it ({', '.join(users)}): "
            "Citus reads each shard at its own moment, so a backup is consistent only with "
            "the api and every worker stopped; stop them, back up, then start them again"
        )
    return ["--exclude-extension=citus"] if tool.major >= EXCLUDE_EXTENSION_SINCE else []


async def _dump(db: Database, tool: PgTool, dump: Path, lock_wait_s: int, extra: list[str]) -> None:
    uri, env = libpq_target(db.dsn)
    args = ["--format=custom", "--no-password", f"--lock-wait-timeout={lock_wait_s}s", *extra]
    try:
        await run_tool(tool, [*args, f"--file={dump}", f"--dbname={uri}"], env)
    except BackupError as exc:
        # pg_dump bounds its LOCK TABLE statements with statement_timeout.
        if "statement timeout" not in str(exc) and "lock timeout" not in str(exc):
            raise
        raise BackupError(
            f"another client (a migration, an update?) held a table locked for more than "
            f"{lock_wait_s} s, so nothing was backed up: try again once it is done"
        ) from None


async def make_backup(
    settings: Settings, path: Path, say: Say, lock_wait_s: int = LOCK_WAIT_S
) -> Manifest:
    """Dump the database into the archive at `path` and say where the secret key is; waiting
    at most `lock_wait_s` seconds for the locks pg_dump takes."""
    target = _target(path)
    try:
        # Beside the target, not in /tmp: the dump is as big as the database, and the same
        # file system makes nothing copy twice.
        work = Path(tempfile.mkdtemp(prefix=".sponsorbot-backup-", dir=target.parent))
    except OSError as exc:
        raise BackupError(f"cannot write in {target.parent}: {exc.strerror or exc}") from None
    try:
        async with database(settings, "backup") as db:
            known = await facts(db)
            if known.migration == 0:
                raise BackupError(
                    "the database holds no Sponsorbot data (no migration was ever applied): "
                    "nothing to back up"
                )
            tool = pick("pg_dump", known.server_major, known.server_major)
            extra = await _citus_ready(db, tool)
            dump = work / "database.dump"
            await _dump(db, tool, dump, lock_wait_s, extra)
        manifest = Manifest(
            product_version=__version__,
            migration=known.migration,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            server_version=known.server_version,
            database=known.database,
            pg_dump_version=tool.version,
            dump_sha256=sha256_of(dump),
            dump_bytes=dump.stat().st_size,
        )
        try:
            write_archive(target, manifest, dump)
        except OSError as exc:
            raise BackupError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    say(
        f"backup written to {target} ({_size(target.stat().st_size)}): Sponsorbot "
        f"{manifest.product_version}, migration {manifest.migration}, PostgreSQL "
        f"{manifest.server_version}, database {manifest.database}"
    )
    say(
        "the secret key is not in the backup, and the bot tokens cannot be read back without "
        f"it: it is {key_whereabouts(settings)}; keep a copy of it apart from the backup"
    )
    return manifest
