"""A throwaway PostgreSQL cluster from Debian's `postgresql` package, for tests that need a
server other than the embedded one: another major version (Debian 12 ships 15), or one they
restart. Started on a free loopback port in a temporary directory; stopped and removed at the
end. As root, the cluster runs as the package's `postgres` user (initdb refuses root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from sponsorbot.loadtest.processes import free_port

BIN_ROOT = Path("/usr/lib/postgresql")


def debian_bin() -> Path | None:
    """The newest installed Debian PostgreSQL's bin directory, or None."""
    found = sorted(BIN_ROOT.glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name))
    return found[-1].parent if found else None


class DebianPostgres:
    """One cluster: `start()` gives its URI; `restart()`, `stop()`."""

    def __init__(self) -> None:
        bin_dir = debian_bin()
        if bin_dir is None:
            raise RuntimeError("Debian's postgresql package is not installed")
        self.bin = bin_dir
        self.version = int(bin_dir.parent.name)
        self.home = Path(tempfile.mkdtemp(prefix="sponsorbot-debian-pg-"))
        self.data = self.home / "data"
        self.port = free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.home, "postgres", "postgres")
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        subprocess.run([*self._as, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> str:
        """Make the cluster (the first time) and start it; returns its URI."""
        if not self.data.exists():
            self._run(
                str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8",
            )  # fmt: skip
        self._ctl("start")
        return self.uri

    @property
    def uri(self) -> str:
        """The maintenance database's URI."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _ctl(self, action: str, *more: str) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.home} "
            "-c fsync=off -c max_connections=200"
        )
        self._run(
            str(self.bin / "pg_ctl"), action, "-D", str(self.data), "-w", "-t", "60",
            "-o", options, "-l", str(self.home / "log"), *more,
        )  # fmt: skip

    def restart(self) -> None:
        """`pg_ctl restart -m fast`: every session is cut, the server is back in seconds."""
        self._ctl("restart", "-m", "fast")

    def stop(self) -> None:
        """Stop the server and remove its files."""
        try:
            if self.data.exists():
                self._ctl("stop", "-m", "immediate")
        except subprocess.CalledProcessError:
            pass
        finally:
            shutil.rmtree(self.home, ignore_errors=True)
