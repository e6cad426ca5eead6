"""Periodic jobs, each run once across all workers under a lease of its own."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncpg

from sponsorbot.engine.leases import Leases

log = logging.getLogger(__name__)

JobFn = Callable[[asyncpg.Pool], Awaitable[None]]


@dataclass
class _Job:
    name: str
    every_s: float
    fn: JobFn
    next_at: float = 0.0


class Scheduler:
    """Runs registered jobs every interval; the `job:<name>` lease lasts the interval, so
    whichever worker takes it runs the job and the others skip that round."""

    def __init__(self, pool: asyncpg.Pool, leases: Leases) -> None:
        self.pool = pool
        self.leases = leases
        self._jobs: list[_Job] = []
        self.runs: dict[str, int] = {}

    def register(self, name: str, every_s: float, fn: JobFn) -> None:
        """Run `fn(pool)` about every `every_s` seconds somewhere in the cluster."""
        self._jobs.append(_Job(name, every_s, fn))

    async def run(self, stop: asyncio.Event) -> None:
        """Tick once a second until `stop`."""
        while not stop.is_set():
            now = time.monotonic()
            for job in self._jobs:
                if job.next_at <= now:
                    job.next_at = now + job.every_s
                    await self._run_job(job)
            try:
                async with asyncio.timeout(1.0):
                    await stop.wait()
            except TimeoutError:
                pass

    async def _run_job(self, job: _Job) -> None:
        try:
            if not await self.leases.acquire(f"job:{job.name}", job.every_s * 0.9):
                return
            await job.fn(self.pool)
            self.runs[job.name] = self.runs.get(job.name, 0) + 1
        except Exception:
            log.exception("periodic job %s failed", job.name)
