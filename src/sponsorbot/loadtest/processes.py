"""The cluster under test: simulator, api and workers as separate processes, and their CPU."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from sponsorbot.ports import free_port as free_port


@dataclass
class Member:
    """One process of the cluster."""

    name: str
    proc: subprocess.Popen[bytes]


@dataclass
class Cluster:
    """Processes started for one load test, with a shared environment."""

    workdir: Path
    env: dict[str, str]
    members: list[Member] = field(default_factory=list)

    def start(self, name: str, *args: str) -> Member:
        """Start `python -m sponsorbot ARGS`, its output in workdir/NAME.log."""
        log = (self.workdir / f"{name}.log").open("ab")
        proc = subprocess.Popen(  # noqa: S603 - our own program, fixed arguments
            [sys.executable, "-m", "sponsorbot", *args],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C in the terminal reaches us, not them
        )
        member = Member(name, proc)
        self.members.append(member)
        return member

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM everyone (the reverse of the start order), then wait; kill stragglers."""
        for member in reversed(self.members):
            if member.proc.poll() is None:
                member.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for member in reversed(self.members):
            try:
                member.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                member.proc.kill()
                member.proc.wait()

    def check_alive(self) -> None:
        """Raise if a member died: its log says why."""
        for member in self.members:
            if member.proc.poll() is not None:
                tail = (self.workdir / f"{member.name}.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{member.name} exited with {member.proc.returncode}:\n{tail}")


async def wait_http(url: str, cluster: Cluster, within_s: float = 60.0) -> None:
    """Wait until `url` answers 200 (a health or control endpoint)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        cluster.check_alive()
        try:
            ok = await asyncio.to_thread(_get_ok, url)
        except OSError:
            ok = False
        if ok:
            return
        await asyncio.sleep(0.2)
    raise RuntimeError(f"{url} did not answer in {within_s:.0f}s")


async def start_simulator(cluster: Cluster, port: int, rtt_ms: float) -> None:
    """Start the simulated Telegram with `rtt_ms` added to every call, and wait for it."""
    cluster.start(
        "simulator", "simulator", "--port", str(port), "--latency-ms", str(rtt_ms), "--seed", "1"
    )
    await wait_http(f"http://127.0.0.1:{port}/_sim/bots", cluster)


def _get_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - loopback only
        return bool(response.status == 200)


def postgres_pids(pgdata: Path | None) -> list[int]:
    """The embedded PostgreSQL's processes (the postmaster and its children)."""
    if pgdata is None:
        return []
    pid_file = pgdata / "postmaster.pid"
    try:
        postmaster = int(pid_file.read_text().split("\n", 1)[0])
        main = psutil.Process(postmaster)
        return [main.pid, *(c.pid for c in main.children(recursive=True))]
    except (OSError, ValueError, psutil.Error):
        return []


class CpuMeter:
    """CPU seconds used by named groups of processes between `start` and `stop`."""

    def __init__(self, groups: dict[str, list[int]]) -> None:
        self.groups = groups
        self._before: dict[int, float] = {}

    @staticmethod
    def _cpu(pid: int) -> float:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.Error:
            return 0.0
        return float(times.user + times.system)

    def start(self) -> None:
        """Read every process's CPU time now."""
        self._before = {pid: self._cpu(pid) for pids in self.groups.values() for pid in pids}

    def stop(self) -> dict[str, float]:
        """CPU seconds per group since `start`."""
        used: dict[str, float] = {}
        for name, pids in self.groups.items():
            used[name] = round(
                sum(max(0.0, self._cpu(pid) - self._before.get(pid, 0.0)) for pid in pids), 2
            )
        return used


def peak_rss_mb(pid: int) -> float | None:
    """The process's peak resident memory so far (VmHWM in /proc), in MB; None if gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)  # kB
    return None


def own_pid() -> int:
    """The load generator's own pid."""
    return os.getpid()
