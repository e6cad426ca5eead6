"""Helpers for tests that start `sponsorbot` as real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil

from sponsorbot.loadtest.processes import free_port as free_port


def clean_environ(**extra: str) -> dict[str, str]:
    """The environment without any SPONSORBOT_ setting, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPONSORBOT_")}
    env.update(extra)
    return env


# Each started process's output file, by pid, so a failure can show what the process said.
_LOGS: dict[int, Path] = {}


def start(*args: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start `python -m sponsorbot ARGS`, output to a file."""
    out = log.open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "sponsorbot", *args], env=env, stdout=out, stderr=out
    )
    _LOGS[proc.pid] = log
    return proc


def said(proc: subprocess.Popen[bytes], chars: int = 4000) -> str:
    """The end of what a process from `start` wrote, for an assertion's message."""
    log = _LOGS.get(proc.pid)
    if log is None or not log.exists():
        return "(no output file)"
    return log.read_text(errors="replace")[-chars:]


def start_demo(data_dir: Path, port: int, sim_port: int) -> subprocess.Popen[str]:
    """Start `sponsorbot demo` on these ports, its output readable line by line as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "sponsorbot", "demo", "--data-dir", str(data_dir),
         "--port", str(port), "--sim-port", str(sim_port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=clean_environ(),
    )  # fmt: skip


def wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Wait until /healthz answers 200, or fail if the process exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"process exited with {proc.returncode}:\n{said(proc)}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"never healthy:\n{said(proc)}")


def postgres_processes(pgdata: Path) -> list[psutil.Process]:
    """Running postgres servers whose command line names this data dir."""
    found = []
    for p in psutil.process_iter(["name", "cmdline", "status"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if str(pgdata) in cmd and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found


def wait_gone(pgdata: Path, timeout: float = 10.0) -> bool:
    """True once no server for this data dir is left."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not postgres_processes(pgdata):
            return True
        time.sleep(0.1)
    return False
