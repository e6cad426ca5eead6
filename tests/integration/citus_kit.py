"""A Citus cluster for tests: `sponsorbot citus up` run as a process, its URL and state.

The build is cached in the user's cache dir (ops/citus_build.py), so only the first run on a
machine compiles Citus (about 30 s on 2 cores); each module then starts its own 1-coordinator,
2-worker cluster with fsync off (about 4 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from sponsorbot.ops.citus import Cluster
from sponsorbot.ops.citus_build import missing_tools
from tests.processes import clean_environ

# The tarball vendored for this project's machines (/work/shared/vendor/README.md).
VENDORED = Path("/work/shared/vendor/citus-14.0.1.tar.gz")
_UP_TIMEOUT_S = 300

# Where Citus put each of our tables: method ('h' hash, 'n' reference or local), replication
# model ('t' for a reference table), colocation group and distribution column.
PLACEMENTS = """
SELECT c.relname AS name, p.partmethod::text AS method, p.repmodel::text AS repmodel,
       p.colocationid AS colocation,
       CASE WHEN p.partmethod = 'h' THEN column_to_column_name(p.logicalrelid, p.partkey)
       END AS column_name,
       (SELECT count(*) FROM pg_dist_shard s WHERE s.logicalrelid = p.logicalrelid) AS shards
FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
WHERE c.relnamespace = 'public'::regnamespace AND NOT c.relispartition
ORDER BY 1
"""
# Rows of a table per node, counted on each shard where it lives.
ROWS_PER_NODE = """
SELECT nodeport, sum(result::bigint) AS rows
FROM run_command_on_placements($1, 'SELECT count(*) FROM %s')
GROUP BY nodeport
"""


def source() -> Path:
    """The Citus tarball: SPONSORBOT_CITUS_SOURCE, else the vendored one."""
    return Path(os.environ.get("SPONSORBOT_CITUS_SOURCE") or VENDORED)


def skip_reason() -> str | None:
    """Why a Citus cluster cannot be made here, or None."""
    missing = missing_tools()
    if missing:
        return f"building Citus needs {' and '.join(missing)} (Debian: apt-get install gcc make)"
    if not source().is_file():
        return f"no Citus source tarball at {source()} (set SPONSORBOT_CITUS_SOURCE)"
    return None


@dataclass
class RunningCluster:
    """A cluster `sponsorbot citus up` started in `folder`."""

    folder: Path
    state: Cluster

    @property
    def url(self) -> str:
        """The coordinator's URL."""
        return self.state.url

    @property
    def worker_ports(self) -> set[int]:
        """The workers' ports."""
        return {w.port for w in self.state.workers}


def sponsorbot(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m sponsorbot ARGS` with only the given settings, run to its end."""
    return subprocess.run(
        [sys.executable, "-m", "sponsorbot", *args],
        env=clean_environ(**env),
        capture_output=True,
        text=True,
        timeout=_UP_TIMEOUT_S,
    )


def up(folder: Path) -> RunningCluster:
    """`sponsorbot citus up` with fsync off, checked; the cluster it recorded."""
    done = sponsorbot(
        "citus",
        "up",
        "--data-dir",
        str(folder),
        "--fsync-off",
        SPONSORBOT_CITUS_SOURCE=str(source()),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    state = Cluster.load(folder)
    assert state is not None
    assert done.stdout.strip().splitlines()[-1] == state.url
    return RunningCluster(folder, state)


def migrate(cluster: RunningCluster) -> subprocess.CompletedProcess[str]:
    """`sponsorbot migrate` against the coordinator."""
    return sponsorbot("migrate", SPONSORBOT_DATABASE_URL=cluster.url)


async def placements(url: str) -> dict[str, asyncpg.Record]:
    """PLACEMENTS, by table."""
    conn = await asyncpg.connect(url)
    try:
        return {r["name"]: r for r in await conn.fetch(PLACEMENTS)}
    finally:
        await conn.close()
