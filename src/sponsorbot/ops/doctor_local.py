"""The doctor's checks on this server: the database, its migrations, the secret key, the disk.

Nothing here changes anything: no migration is applied, no key file is made, no key check is
written (the product's own start does those).
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, unquote, urlsplit

import asyncpg

from sponsorbot import __version__
from sponsorbot.config import Settings
from sponsorbot.db.embedded import EmbeddedPostgres
from sponsorbot.db.migrate import OLDEST_SERVER, applied_versions, load_migrations
from sponsorbot.db.pool import connect
from sponsorbot.engine.bots import KEY_MISMATCH, key_proof
from sponsorbot.engine.token_box import TokenBox

Level = Literal["ok", "warn", "FAIL", "skip"]

MIB = 1024**2
GIB = 1024**3
DISK_FAIL_BYTES = 500 * MIB
DISK_WARN_BYTES = 2 * GIB
DISK_WARN_SHARE = 0.10

SERVER_VERSION = "SELECT current_setting('server_version'), current_setting('server_version_num')"
MIGRATE = "run `sponsorbot migrate`"
# The server's own bounds, besides the client's: a query waiting for a lock leaves the lock's
# queue when it gives up, and nothing the doctor asks outlives the doctor.
SESSION_TIMEOUTS = (
    "SELECT set_config('lock_timeout', $1, false), set_config('statement_timeout', $1, false)"
)
# How a query cut off by those bounds (or the client's command_timeout) ends.
TIMED_OUT = (TimeoutError, asyncpg.LockNotAvailableError, asyncpg.QueryCanceledError)
ENV_KEY = "SPONSORBOT_SECRET_KEY"


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of the doctor's report."""

    level: Level
    check: str
    detail: str

    def line(self) -> str:
        """`ok   check: detail`, the level padded so the checks line up."""
        return f"{self.level:<4} {self.check}: {self.detail}"


def ok(check: str, detail: str) -> Finding:
    """A check that passed."""
    return Finding("ok", check, detail)


def warn(check: str, detail: str) -> Finding:
    """Works for now, but needs a look."""
    return Finding("warn", check, detail)


def fail(check: str, detail: str) -> Finding:
    """Broken; `detail` says what to do."""
    return Finding("FAIL", check, detail)


def skip(check: str, detail: str) -> Finding:
    """Not checked, because something it needs failed first."""
    return Finding("skip", check, detail)


@dataclass(slots=True)
class Reached:
    """The one connection the doctor reads the database through."""

    conn: asyncpg.Connection
    embedded: EmbeddedPostgres | None

    async def close(self) -> None:
        """Close the connection and leave the embedded server (stopped if we started it)."""
        try:
            await self.conn.close(timeout=2)
        finally:
            if self.embedded is not None:
                await asyncio.to_thread(self.embedded.release)


def where(settings: Settings) -> str:
    """The database named without its password: host:port/name, or the embedded data dir."""
    if not settings.database_url:
        return f"embedded in {settings.data_dir / 'pgdata'}"
    parts = urlsplit(settings.database_url)
    host = parts.hostname or parse_qs(parts.query).get("host", ["a local socket"])[0]
    name = unquote(parts.path.lstrip("/")) or (parts.username or "?")
    return f"{host}:{parts.port or 5432}/{name}"


async def reach_database(settings: Settings, timeout_s: float) -> tuple[Reached | None, Finding]:
    """Connect (joining or starting the embedded server if no URL is set) and name the server."""
    at = where(settings)
    embedded: EmbeddedPostgres | None = None
    if settings.database_url:
        dsn = settings.database_url
    else:
        embedded = EmbeddedPostgres(settings.data_dir)
        if not embedded.pgdata.exists():
            return None, fail(
                "database",
                f"none yet: SPONSORBOT_DATABASE_URL is unset and {embedded.pgdata} does not "
                f"exist; {MIGRATE} to create the embedded one, or set SPONSORBOT_DATABASE_URL",
            )
        try:
            dsn = await asyncio.to_thread(embedded.start)
        except Exception as exc:  # the wheel raises its own kinds; every one is this FAIL
            return None, fail(
                "database",
                f"the embedded PostgreSQL in {embedded.pgdata} did not start ({brief(exc)}): "
                "check the disk and that the data dir belongs to this user",
            )
    try:
        conn = await asyncio.wait_for(_connect(dsn, timeout_s), timeout_s)
    except BaseException as exc:
        if embedded is not None:
            await asyncio.to_thread(embedded.release)
        if not isinstance(exc, Exception):
            raise
        return None, fail("database", _connect_advice(at, exc, timeout_s))
    reached = Reached(conn, embedded)
    try:
        version, number = await conn.fetchrow(SERVER_VERSION)
    except Exception as exc:
        await reached.close()
        return None, fail("database", f"{at} answered, but not a query: {brief(exc)}")
    shown = f"PostgreSQL {version.split()[0]} " + (at if embedded is not None else f"at {at}")
    if int(number) < OLDEST_SERVER * 10000:
        return reached, fail(
            "database", f"{shown}: PostgreSQL {OLDEST_SERVER} or newer is needed; upgrade it"
        )
    return reached, ok("database", shown)


async def _connect(dsn: str, timeout_s: float) -> asyncpg.Connection:
    """The doctor's connection: every query on it ends within `timeout_s`.

    A running migration or restore holds ACCESS EXCLUSIVE locks on the tables the checks read;
    without these bounds the doctor would wait for as long as they are held.
    """
    conn = await connect(dsn, role="doctor", command_timeout=timeout_s)
    try:
        await conn.execute(SESSION_TIMEOUTS, f"{max(1, round(timeout_s * 1000))}ms")
    except BaseException:
        conn.terminate()
        raise
    return conn


def locked(check: str, timeout_s: float) -> Finding:
    """The line of a check whose reading did not end within `timeout_s`."""
    return fail(
        check,
        f"the database did not answer within {timeout_s:g} s: a migration or restore may hold "
        "a lock; see pg_stat_activity",
    )


def _connect_advice(at: str, exc: Exception, timeout_s: float) -> str:
    if isinstance(exc, TimeoutError):
        return (
            f"no answer from {at} within {timeout_s:g} s: check the host and port in "
            "SPONSORBOT_DATABASE_URL and the firewall between"
        )
    if isinstance(
        exc, asyncpg.InvalidPasswordError | asyncpg.InvalidAuthorizationSpecificationError
    ):
        return (
            f"{at} refused the login ({brief(exc)}): check the user and password in "
            "SPONSORBOT_DATABASE_URL"
        )
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        return f"{at}: {brief(exc)}: create it, or fix the name in SPONSORBOT_DATABASE_URL"
    return (
        f"cannot connect to {at} ({brief(exc)}): check that PostgreSQL runs there and the "
        "host and port in SPONSORBOT_DATABASE_URL"
    )


async def check_migrations(conn: asyncpg.Connection) -> Finding:
    """The applied migrations against the ones this program carries."""
    done = await applied_versions(conn)
    if done is None:
        return fail("migrations", f"none applied, the database is empty: {MIGRATE}")
    known = load_migrations()
    ahead = sorted(done - {m.version for m in known})
    if ahead:
        return fail(
            "migrations",
            f"the database has migration {ahead[-1]:04d}, which Sponsorbot {__version__} does "
            "not know: this program is older than the database; update",
        )
    behind = [f"{m.version:04d}" for m in known if m.version not in done]
    if behind:
        return fail("migrations", f"{', '.join(behind)} not applied: {MIGRATE}")
    last = known[-1]
    return ok("migrations", f"current ({len(known)}, the last {last.version:04d}_{last.name})")


@dataclass(frozen=True, slots=True)
class Key:
    """The installation key as the product would find it, without making one."""

    secret: bytes | None
    source: str
    problem: str | None = None
    # The key file is open to other users of this server.
    loose: bool = False


def read_key(settings: Settings) -> Key:
    """SPONSORBOT_SECRET_KEY, else `<data dir>/secret.key` if it exists (never created here)."""
    if settings.secret_key is not None:
        return Key(settings.existing_secret(), ENV_KEY)
    path = settings.key_file
    try:
        secret = settings.existing_secret()
        loose = secret is not None and bool(path.stat().st_mode & 0o077)
    except OSError as exc:
        return Key(None, str(path), f"cannot read {path}: {exc.strerror or exc}")
    return Key(secret, str(path), loose=loose)


def key_without_database(key: Key) -> Finding:
    """The key line when the database cannot be asked whether the key matches."""
    if key.problem is not None:
        return fail("secret key", f"{key.problem}: run the doctor as the user sponsorbot runs as")
    if key.secret is None:
        return warn("secret key", f"none ({_missing(key)}); not compared: no database")
    return skip("secret key", f"from {key.source}; not compared: no database")


async def check_key(conn: asyncpg.Connection, key: Key) -> Finding:
    """Whether the key opens the database's key check (or, before the first start, a token)."""
    if key.problem is not None:
        return key_without_database(key)
    try:
        proof = await key_proof(conn)
    except asyncpg.UndefinedTableError:
        return skip("secret key", f"not compared: the key check needs the migrations; {MIGRATE}")
    if key.secret is None:
        if proof.empty:
            return ok("secret key", f"none yet: the first start makes {key.source}")
        return fail(
            "secret key",
            f"missing ({_missing(key)}), but this database's bot tokens were saved with one: "
            "put that key back (it is not in backups)",
        )
    box = TokenBox(key.secret)
    matches = proof.opened_by(box)
    if not matches and key.source == ENV_KEY:
        return fail("secret key", KEY_MISMATCH)
    if not matches:
        return fail(
            "secret key",
            f"the key in {key.source} is not the one this database's bot tokens were saved "
            "with: put back the right file, or set SPONSORBOT_SECRET_KEY to that key",
        )
    if proof.check is not None:
        detail = f"from {key.source}, matches the database's key check"
    elif proof.tokens:
        detail = f"from {key.source}, opens the bot tokens"
    else:
        detail = f"from {key.source}; nothing is sealed with it yet"
    if box.rotating:
        detail += "; the next start seals everything with the first key"
    if key.loose:
        return warn("secret key", f"{detail}; but other users may read it: chmod 600 {key.source}")
    return ok("secret key", detail)


def _missing(key: Key) -> str:
    return f"neither SPONSORBOT_SECRET_KEY nor {key.source}"


def check_disk(data_dir: Path) -> Finding:
    """Free space where the data dir is (or would be: its nearest existing parent)."""
    path = data_dir
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        usage = shutil.disk_usage(path)
    except OSError as exc:
        return warn("disk", f"cannot measure {data_dir}: {exc.strerror or exc}")
    return disk_finding(data_dir, usage.free, usage.total)


def disk_finding(data_dir: Path, free: int, total: int) -> Finding:
    """FAIL under 500 MiB free, warn under 2 GiB or 10 %."""
    share = free / total if total else 0.0
    detail = f"{_size(free)} free of {_size(total)} ({share:.0%}) for {data_dir}"
    if free < DISK_FAIL_BYTES:
        return fail(
            "disk",
            f"{detail}: free space now (old backups, logs) or grow the disk; PostgreSQL stops "
            "when it is full",
        )
    if free < DISK_WARN_BYTES or share < DISK_WARN_SHARE:
        return warn("disk", f"{detail}: free some space or grow the disk soon")
    return ok("disk", detail)


def _size(n: int) -> str:
    return f"{n / GIB:.1f} GiB" if n >= GIB else f"{n / MIB:.0f} MiB"


def brief(exc: BaseException) -> str:
    """An exception in one line: its kind and its text, shortened."""
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
