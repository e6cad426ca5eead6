"""`sponsorbot restore PATH [--force]`: a backup put back into the configured database.

Refused, before anything changes: a file that is not our backup, a backup of a newer schema
than this version knows, a database that Sponsorbot processes are using, and one that already
holds bots or users unless --force. The public schema is emptied and the dump restored in one
transaction; the migrations then bring an older backup up to date. A secret key here that cannot
open the backup's tokens is a warning, not a failure: the data is back, and the key may follow.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from sponsorbot import __version__
from sponsorbot.config import Settings
from sponsorbot.db.database import Database
from sponsorbot.db.migrate import MigrationError, load_migrations
from sponsorbot.db.migrate import migrate as apply_migrations
from sponsorbot.engine.bots import KEY_CHECK, SOME_TOKENS
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.ops.backup import Say, database, facts, key_whereabouts
from sponsorbot.ops.backup_archive import BackupError, Manifest, extract_dump, read_manifest
from sponsorbot.ops.backup_tools import libpq_target, major_of, pick, restore_script

# Other Sponsorbot processes on this database (each names its role in application_name).
IN_USE = """
SELECT DISTINCT application_name FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()
  AND application_name LIKE 'sponsorbot-%' AND application_name NOT LIKE 'sponsorbot-restore%'
ORDER BY 1
"""
HAS_TABLE = "SELECT to_regclass($1) IS NOT NULL"
COUNT_BOTS = "SELECT count(*) FROM bots"
COUNT_USERS = "SELECT count(*) FROM users"
# Not waiting forever behind a client that is not ours and holds a lock.
LOCK_TIMEOUT = "SET LOCAL lock_timeout = '15s'"
# Everything the product made lives in the public schema; recreated as PostgreSQL 15+ makes it.
EMPTY_SCHEMA = """
DROP SCHEMA IF EXISTS public CASCADE;
CREATE SCHEMA public;
GRANT USAGE ON SCHEMA public TO PUBLIC;
"""


@dataclass(frozen=True)
class Occupants:
    """What the target database already holds."""

    bots: int
    users: int

    def __bool__(self) -> bool:
        return self.bots > 0 or self.users > 0


async def _count(conn: asyncpg.Connection, table: str, query: str) -> int:
    if not await conn.fetchval(HAS_TABLE, f"public.{table}"):
        return 0
    return int(await conn.fetchval(query))


async def occupants(conn: asyncpg.Connection) -> Occupants:
    """How many bots and users the database holds (0 where the tables are missing)."""
    return Occupants(
        await _count(conn, "bots", COUNT_BOTS), await _count(conn, "users", COUNT_USERS)
    )


def check_level(manifest: Manifest, name: str) -> None:
    """Refuse a backup of a schema newer than this version's migrations."""
    newest = max(m.version for m in load_migrations())
    if manifest.migration > newest:
        raise BackupError(
            f"{name} was made by a newer version of Sponsorbot ({manifest.product_version}, "
            f"migration {manifest.migration}; this is {__version__}, migration {newest}): "
            "update Sponsorbot first, then restore"
        )


async def _prepare(conn: asyncpg.Connection, force: bool) -> Occupants:
    """Refuse a database in use or occupied (unless forced); then empty it."""
    users = [r["application_name"] for r in await conn.fetch(IN_USE)]
    if users:
        raise BackupError(
            f"Sponsorbot is running on this database ({', '.join(users)}): stop the api and "
            "every worker first, then restore"
        )
    held = await occupants(conn)
    if held and not force:
        raise BackupError(
            f"the database already holds {held.bots} bot(s) and {held.users} user(s): restore "
            "into an empty one (a new data dir or database), or add --force to replace them"
        )
    try:
        async with conn.transaction():
            await conn.execute(LOCK_TIMEOUT)
            await conn.execute(EMPTY_SCHEMA)
    except asyncpg.LockNotAvailableError:
        raise BackupError(
            "another client holds locks in this database: stop what uses it, then restore"
        ) from None
    except asyncpg.InsufficientPrivilegeError as exc:
        raise BackupError(
            f"cannot empty the database: {exc}; restore as the owner of its public schema"
        ) from None
    except asyncpg.PostgresError as exc:
        raise BackupError(f"cannot empty the database: {exc}") from None
    return held


def _installed_key(settings: Settings) -> bytes | None:
    """The secret key here, without making one (`Settings.secret` would)."""
    if settings.secret_key is not None:
        return settings.secret_key.get_secret_value().encode()
    path = settings.data_dir / "secret.key"
    return path.read_text().strip().encode() if path.is_file() else None


async def key_warning(conn: asyncpg.Connection, settings: Settings) -> str | None:
    """Why the bot tokens restored cannot be read with the key here, or None if they can."""
    sealed = await conn.fetchval(KEY_CHECK)
    samples = [r["token_enc"] for r in await conn.fetch(SOME_TOKENS)]
    if sealed is None and not samples:
        return None  # nothing sealed: any key will do
    key = _installed_key(settings)
    if key is None:
        return (
            "there is no secret key here: put the key of the installation the backup came from "
            f"in SPONSORBOT_SECRET_KEY or the file {settings.data_dir / 'secret.key'} before "
            "starting, or the bot tokens cannot be read"
        )
    where = key_whereabouts(settings)
    box = TokenBox(key)
    if box.opens(sealed) if sealed is not None else any(box.opens(t) for t in samples):
        return None
    return (
        f"the secret key here ({where}) does not open the backup's bot tokens: use the key "
        "of the installation the backup came from; with this one Sponsorbot refuses to start, "
        "and every bot would have to be connected again with its token"
    )


async def _restore_into(db: Database, manifest: Manifest, dump: Path, force: bool) -> Occupants:
    async with db.pool.acquire() as conn:
        server = major_of((await facts(db)).server_version)
        held = await _prepare(conn, force)
    tool = pick("pg_restore", major_of(manifest.pg_dump_version), server)
    uri, env = libpq_target(db.dsn)
    try:
        await restore_script(tool, dump, uri, env, server)
    except BackupError as exc:
        raise BackupError(f"{exc} (the database is left empty)") from None
    return held


async def restore(settings: Settings, path: Path, force: bool, say: Say) -> None:
    """Put the backup at `path` into the configured database, migrate it, check the key."""
    manifest = read_manifest(path)
    check_level(manifest, str(path))
    with tempfile.TemporaryDirectory(prefix="sponsorbot-restore-") as work:
        dump = extract_dump(path, manifest, Path(work))
        async with database(settings, "restore") as db:
            held = await _restore_into(db, manifest, dump, force)
            conn = await db.connect("restore-migrate")
            try:
                applied = await apply_migrations(conn)
                now = await occupants(conn)
                warning = await key_warning(conn, settings)
            except MigrationError as exc:
                raise BackupError(f"restored, but the migrations failed: {exc}") from None
            finally:
                await conn.close()
    if held:
        say(f"replaced what the database held ({held.bots} bot(s), {held.users} user(s))")
    say(
        f"restored {path} (Sponsorbot {manifest.product_version}, migration "
        f"{manifest.migration}, made {manifest.created_at}): {now.bots} bot(s), "
        f"{now.users} user(s)"
    )
    if applied:
        say(f"brought up to date: applied migration(s) {', '.join(map(str, applied))}")
    say(f"warning: {warning}" if warning else "the secret key here opens the bot tokens")
