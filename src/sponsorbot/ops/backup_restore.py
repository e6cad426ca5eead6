"""`sponsorbot restore PATH [--force]`: a backup put back into the configured database.

Refused, before anything changes: a file that is not our backup, a backup of a newer schema
than this version knows, a database that Sponsorbot processes are using, and one that already
holds bots or users unless --force, and, even with --force, one that holds tables another
application made: the restore empties the public schema, and Sponsorbot never drops what it did
not make. The tools are chosen and the dump extracted and checked first; then the public schema
is emptied and the dump restored in one transaction, so a failure anywhere leaves the database
as it was. The migrations then bring an older backup up to date, and the old server's leases
are dropped, so the jobs start at once. A secret key here that cannot open the backup's tokens
is a warning, not a failure: the data is back, and the key may follow.

On a Citus coordinator the restore goes into a new database only: Citus keeps views of its own
in the public schema, so the schema cannot be emptied and made again. The tables are restored
on the coordinator, then the migrations distribute them, copying their rows to the workers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from sponsorbot import __version__
from sponsorbot.config import Settings
from sponsorbot.db.database import Database
from sponsorbot.db.migrate import MigrationError, load_migrations
from sponsorbot.db.migrate import migrate as apply_migrations
from sponsorbot.db.pool import on_citus
from sponsorbot.engine.bots import key_proof
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.ops.backup import Say, database, facts, key_whereabouts, running
from sponsorbot.ops.backup_archive import (
    BackupError,
    Manifest,
    extract_dump,
    read_manifest,
    work_dir,
)
from sponsorbot.ops.backup_tools import libpq_target, major_of, pick, psql_beside, restore_script

HAS_TABLE = "SELECT to_regclass($1) IS NOT NULL"
COUNT_BOTS = "SELECT count(*) FROM bots"
COUNT_USERS = "SELECT count(*) FROM users"
# The tables, views and foreign tables of the public schema (partitions go with their parent),
# but for the views the citus extension keeps there.
PUBLIC_TABLES = """
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
  AND NOT EXISTS (SELECT 1 FROM pg_depend d JOIN pg_extension x ON x.oid = d.refobjid
                  WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                    AND d.deptype = 'e' AND x.extname = 'citus')
ORDER BY 1
"""
MIGRATIONS_TABLE = "schema_migrations"
# The names our migrations create tables under (the monthly partitions are made by a function).
_CREATES = re.compile(r"\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE)
# Runs first in the restore's one transaction: everything the product made lives in the public
# schema, recreated as PostgreSQL 15+ makes it; not waiting forever behind a client that is not
# ours and holds a lock (the script's own preamble sets lock_timeout back to 0 afterwards).
EMPTY_SCHEMA = b"""
SET LOCAL lock_timeout = '15s';
DROP SCHEMA IF EXISTS public CASCADE;
CREATE SCHEMA public;
GRANT USAGE ON SCHEMA public TO PUBLIC;
"""
# The same on Citus, where the target holds nothing of ours (_check_target): no schema to empty.
CITUS_HEAD = b"""
SET LOCAL lock_timeout = '15s';
"""
_NOTHING_CHANGED = "nothing was changed: the database holds what it held before"
# The leases the old server's processes held (the janitor's, the hourly jobs'): on a restored
# database they would keep the new server's jobs waiting until they expired, up to an hour.
FORGET_LEASES = "DELETE FROM leases"


@dataclass(frozen=True)
class Occupants:
    """What the target database already holds."""

    bots: int
    users: int
    foreign: tuple[str, ...] = ()  # tables in public that no Sponsorbot migration made

    def __bool__(self) -> bool:
        return self.bots > 0 or self.users > 0 or bool(self.foreign)

    def __str__(self) -> str:
        return f"{self.bots} bot(s), {self.users} user(s)"


def _listed(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def our_tables() -> frozenset[str]:
    """Every table name a Sponsorbot migration creates (some later dropped), lower case."""
    names = {MIGRATIONS_TABLE}
    for migration in load_migrations():
        names.update(name.lower() for name in _CREATES.findall(migration.sql))
    return frozenset(names)


async def _count(conn: asyncpg.Connection, table: str, query: str) -> int:
    if not await conn.fetchval(HAS_TABLE, f"public.{table}"):
        return 0
    return int(await conn.fetchval(query))


async def occupants(conn: asyncpg.Connection) -> Occupants:
    """How many bots and users the database holds (0 where the tables are missing), and its
    tables that are not Sponsorbot's: every one, where no migration was ever applied."""
    tables = [r["relname"] for r in await conn.fetch(PUBLIC_TABLES)]
    ours = our_tables() if MIGRATIONS_TABLE in tables else frozenset()
    return Occupants(
        await _count(conn, "bots", COUNT_BOTS) if ours else 0,
        await _count(conn, "users", COUNT_USERS) if ours else 0,
        tuple(name for name in tables if name not in ours),
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


async def _check_target(conn: asyncpg.Connection, force: bool, citus: bool) -> Occupants:
    """Refuse a database in use, or occupied unless forced (on Citus: occupied at all); change
    nothing."""
    users = await running(conn)
    if users:
        raise BackupError(
            f"Sponsorbot is running on this database ({', '.join(users)}): stop the api and "
            "every worker first, then restore"
        )
    held = await occupants(conn)
    if held.foreign:
        raise BackupError(
            f"the database holds tables that are not Sponsorbot's ({_listed(held.foreign)}): "
            "Sponsorbot never drops what it did not make, --force included; restore into a "
            "database of its own (a new data dir or database)"
        )
    if citus and await conn.fetchval(HAS_TABLE, f"public.{MIGRATIONS_TABLE}"):
        raise BackupError(
            "this is a Citus cluster and the database already holds Sponsorbot's tables: on "
            "Citus a backup is restored into a new database only (create it on the "
            "coordinator and every worker, with the citus extension, and register the "
            "workers: docs/scaling.md), --force included"
        )
    if held and not force:
        raise BackupError(
            f"the database already holds {held.bots} bot(s) and {held.users} user(s): restore "
            "into an empty one (a new data dir or database), or add --force to replace them"
        )
    return held


def _failed(exc: BackupError) -> BackupError:
    # psql's line, with what it means for the owner: the transaction was rolled back.
    line = str(exc)
    if "lock timeout" in line:
        return BackupError(
            f"another client holds locks in this database: stop what uses it, then restore "
            f"({_NOTHING_CHANGED})"
        )
    if "must be owner" in line:
        line += "; restore as the owner of the database's public schema"
    return BackupError(f"{line} ({_NOTHING_CHANGED})")


async def key_warning(conn: asyncpg.Connection, settings: Settings) -> str | None:
    """Why the bot tokens restored cannot be read with the key here, or None if they can."""
    proof = await key_proof(conn)
    if proof.empty:
        return None
    key = settings.existing_secret()
    if key is None:
        return (
            "there is no secret key here: put the key of the installation the backup came from "
            f"in SPONSORBOT_SECRET_KEY or the file {settings.key_file} before "
            "starting, or the bot tokens cannot be read"
        )
    where = key_whereabouts(settings)
    if proof.opened_by(TokenBox(key)):
        return None
    return (
        f"the secret key here ({where}) does not open the backup's bot tokens: use the key "
        "of the installation the backup came from; with this one Sponsorbot refuses to start, "
        "and every bot would have to be connected again with its token"
    )


async def _restore_into(db: Database, manifest: Manifest, path: Path, force: bool) -> Occupants:
    """Check the target and the tools and extract the dump, changing nothing; then empty the
    public schema and restore the dump in one transaction."""
    server = major_of((await facts(db)).server_version)
    citus = await on_citus(db.pool)
    # Not a pool connection: those see Citus's shards among the tables (db/pool.py).
    conn = await db.connect("restore-check")
    try:
        held = await _check_target(conn, force, citus)
    finally:
        await conn.close()
    tool = pick("pg_restore", major_of(manifest.pg_dump_version), server)
    psql_beside(tool)  # missing, it is said now rather than after the dump is unpacked
    uri, env = libpq_target(db.dsn)
    with work_dir(path, manifest) as work:
        dump = extract_dump(path, manifest, work)
        try:
            head = CITUS_HEAD if citus else EMPTY_SCHEMA
            await restore_script(tool, dump, uri, env, server, head)
        except BackupError as exc:
            raise _failed(exc) from None
    return held


async def restore(settings: Settings, path: Path, force: bool, say: Say) -> None:
    """Put the backup at `path` into the configured database, migrate it, check the key."""
    manifest = read_manifest(path)
    check_level(manifest, str(path))
    async with database(settings, "restore") as db:
        held = await _restore_into(db, manifest, path, force)
        conn = await db.connect("restore-migrate")
        try:
            applied = await apply_migrations(conn)
            await conn.execute(FORGET_LEASES)
            now = await occupants(conn)
            warning = await key_warning(conn, settings)
        except MigrationError as exc:
            raise BackupError(f"restored, but the migrations failed: {exc}") from None
        finally:
            await conn.close()
    if held:
        say(f"replaced what the database held ({held})")
    say(
        f"restored {path} (Sponsorbot {manifest.product_version}, migration "
        f"{manifest.migration}, made {manifest.created_at}): {now.bots} bot(s), "
        f"{now.users} user(s)"
    )
    if applied:
        say(f"brought up to date: applied migration(s) {', '.join(map(str, applied))}")
    say(f"warning: {warning}" if warning else "the secret key here opens the bot tokens")
