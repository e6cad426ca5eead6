"""Periodic jobs, each run once across all workers under a lease of its own."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncpg

from sponsorbot.engine.leases import Leases
from sponsorbot.engine.notify import wait_at_most

log = logging.getLogger(__name__)

JobFn = Callable[[asyncpg.Pool], Awaitable[None]]

# A job's lease lasts 0.9 of its interval, but never less than this: renewed every third of
# it, a shorter lease would be lost to one slow round trip to the database.
MIN_LEASE_S = 1.0


@dataclass
class _Job:
    name: str
    every_s: float
    fn: JobFn
    next_at: float = 0.0


class Scheduler:
    """Runs registered jobs every interval; the `job:<name>` lease lasts the interval, so
    whichever worker takes it runs the job and the others skip that round.

    The lease is renewed while the job runs, so a run longer than its interval is not started
    again elsewhere meanwhile. A job whose lease is lost all the same (the database out of
    reach longer than the lease) is not cancelled, only logged: a job must do no harm if it
    ever overlaps with another run of itself.
    """

    def __init__(self, pool: asyncpg.Pool, leases: Leases) -> None:
        self.pool = pool
        self.leases = leases
        self._jobs: list[_Job] = []
        self.runs: dict[str, int] = {}

    def register(self, name: str, every_s: float, fn: JobFn) -> None:
        """Run `fn(pool)` about every `every_s` seconds somewhere in the cluster.

        `fn` must be harmless should two runs ever overlap (see the class's docstring).
        """
        self._jobs.append(_Job(name, every_s, fn))

    async def run(self, stop: asyncio.Event) -> None:
        """Tick once a second until `stop`."""
        while not stop.is_set():
            now = time.monotonic()
            for job in self._jobs:
                if job.next_at <= now:
                    job.next_at = now + job.every_s
                    await self._run_job(job)
            await wait_at_most(stop, 1.0)

    async def _run_job(self, job: _Job) -> None:
        name = f"job:{job.name}"
        duration_s = max(job.every_s * 0.9, MIN_LEASE_S)
        try:
            if not await self.leases.acquire(name, duration_s):
                return
            lost = asyncio.Event()
            # Not released after the run: it runs out near the interval's end (or, after a long
            # run, up to a lease's duration later), so no other worker runs the job again at once.
            async with self.leases.kept(name, lost, duration_s, release=False):
                await job.fn(self.pool)
            if lost.is_set():
                log.warning(
                    "periodic job %s ran on without its lease: it may have overlapped", job.name
                )
            self.runs[job.name] = self.runs.get(job.name, 0) + 1
        except Exception:
            log.exception("periodic job %s failed", job.name)
