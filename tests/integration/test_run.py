"""`sponsorbot run` as a newcomer meets it: real processes, the embedded database."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import (
    clean_environ,
    free_port,
    postgres_processes,
    start,
    wait_gone,
    wait_healthy,
)

pytestmark = pytest.mark.slow


def _stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> float:
    began = time.monotonic()
    proc.send_signal(sig)
    proc.wait(timeout=15)
    return time.monotonic() - began


def test_run_with_no_settings_serves_health_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "data"
    env = clean_environ(SPONSORBOT_DATA_DIR=str(data), SPONSORBOT_PORT=str(port))
    proc = start("run", env=env, log=tmp_path / "run.log")
    try:
        wait_healthy(port, proc)
        assert postgres_processes(data / "pgdata")
        took = _stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (tmp_path / "run.log").read_text()
    assert took < 10
    assert wait_gone(data / "pgdata"), "the embedded PostgreSQL outlived the last process"


def test_api_and_worker_share_one_server_and_the_last_stops_it(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "data"
    env = clean_environ(SPONSORBOT_DATA_DIR=str(data), SPONSORBOT_PORT=str(port))
    api = start("run", "--role", "api", env=env, log=tmp_path / "api.log")
    worker = start("run", "--role", "worker", env=env, log=tmp_path / "worker.log")
    try:
        wait_healthy(port, api)
        time.sleep(1)
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()
        servers = postgres_processes(data / "pgdata")
        postmasters = [p for p in servers if (p.parent() or p).name() != "postgres"]
        assert len(postmasters) == 1, "each process started its own server"
        _stop(api, signal.SIGINT)
        assert postgres_processes(data / "pgdata"), "stopped while the worker still used it"
        assert worker.poll() is None
        _stop(worker)
    finally:
        for p in (api, worker):
            if p.poll() is None:
                p.kill()
    assert api.returncode == 0 and worker.returncode == 0
    assert wait_gone(data / "pgdata")


def test_a_killed_run_does_not_block_the_next_start(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "data"
    env = clean_environ(SPONSORBOT_DATA_DIR=str(data), SPONSORBOT_PORT=str(port))
    first = start("run", env=env, log=tmp_path / "first.log")
    try:
        wait_healthy(port, first)
    finally:
        first.kill()
        first.wait()
    second = start("run", env=env, log=tmp_path / "second.log")
    try:
        wait_healthy(port, second)
        _stop(second)
    finally:
        if second.poll() is None:
            second.kill()
    assert second.returncode == 0, (tmp_path / "second.log").read_text()
    assert wait_gone(data / "pgdata"), "a stale user of the database kept the server alive"


@pytest.mark.parametrize(
    ("name", "value"),
    [("SPONSORBOT_PORT", "abc"), ("SPONSORBOT_DATABASE_URL", "postgresql://h:x/db")],
)
def test_a_wrong_setting_is_one_clear_line(tmp_path: Path, name: str, value: str) -> None:
    env = clean_environ(**{name: value, "SPONSORBOT_DATA_DIR": str(tmp_path)})
    done = subprocess.run(
        [sys.executable, "-m", "sponsorbot", "run"], env=env, capture_output=True, timeout=60
    )
    assert done.returncode != 0
    err = done.stderr.decode().strip().splitlines()
    assert len(err) == 1, err
    assert name in err[0]
    assert "Traceback" not in done.stderr.decode()


def test_version_and_python_dash_m(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sponsorbot", "--version"], capture_output=True, timeout=60
    )
    assert done.returncode == 0
    assert done.stdout.decode().startswith("sponsorbot ")
