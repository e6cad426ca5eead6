"""`sponsorbot demo` run for a test: started on free ports, waited for, joined over its
database socket, and stopped with Ctrl-C (its exit code checked)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from sponsorbot.db.embedded import EmbeddedPostgres
from tests.processes import free_port, start_demo

READY_WITHIN_S = 60.0


@dataclass
class RunningDemo:
    """A demo that said it is ready: its panel, what it printed, a pool on its database."""

    panel: str
    printed: str
    data_dir: Path
    pool: asyncpg.Pool


@asynccontextmanager
async def running_demo(data_dir: Path) -> AsyncIterator[RunningDemo]:
    """Run the demo with its data in `data_dir` until the block ends."""
    port, sim_port = free_port(), free_port()
    proc = start_demo(data_dir, port, sim_port)
    assert proc.stdout is not None
    server: EmbeddedPostgres | None = None
    pool: asyncpg.Pool | None = None
    printed: list[str] = []
    try:
        text = await asyncio.to_thread(_until_ready, proc, printed)
        assert "Ctrl-C stops everything" in text, text
        # The demo holds its embedded server; we join it over its socket.
        server = EmbeddedPostgres(data_dir)
        dsn = await asyncio.to_thread(server.start)
        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
        yield RunningDemo(f"http://127.0.0.1:{port}", text, data_dir, pool)
    finally:
        if pool is not None:
            await pool.close()
        if server is not None:
            await asyncio.to_thread(server.release)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            await asyncio.to_thread(proc.wait, 30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    assert proc.returncode == 0, "".join(printed) + proc.stdout.read()


def _until_ready(proc: subprocess.Popen[str], printed: list[str]) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + READY_WITHIN_S
    for line in proc.stdout:
        printed.append(line)
        if "Ctrl-C stops everything" in line or time.monotonic() > deadline:
            break
    return "".join(printed)
