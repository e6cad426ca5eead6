"""A periodic job's lease is kept while it runs, so a long run never overlaps another (ADR 0004)."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from sponsorbot.engine.leases import Leases
from sponsorbot.engine.scheduler import Scheduler
from tests.kit import eventually

LEASE = "job:slow"
HELD_BY = "SELECT owner FROM leases WHERE name = $1 AND expires_at > now()"


# Seconds of real sleeping (a lease lasts 1 s at least): the slow tier.
@pytest.mark.slow
async def test_a_job_longer_than_its_interval_never_runs_in_two_workers_at_once(
    pool: asyncpg.Pool,
) -> None:
    """Two schedulers (two workers) on one database, a 1.5 s job every 0.3 s: its lease
    (1 s, the minimum) would run out mid-run without renewal, and the other would start it."""
    running = most = starts = 0

    async def slow(_pool: asyncpg.Pool) -> None:
        nonlocal running, most, starts
        starts += 1
        running += 1
        most = max(most, running)
        try:
            await asyncio.sleep(1.5)
        finally:
            running -= 1

    schedulers = [Scheduler(pool, Leases(pool, owner)) for owner in ("worker-a", "worker-b")]
    for scheduler in schedulers:
        scheduler.register("slow", 0.3, slow)
    stop = asyncio.Event()
    tasks = [asyncio.create_task(scheduler.run(stop)) for scheduler in schedulers]

    async def ran_again() -> bool:
        return starts >= 2

    try:
        await eventually(ran_again, timeout=4)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    assert most == 1
    assert sum(scheduler.runs.get("slow", 0) for scheduler in schedulers) == starts


# Seconds of real sleeping (a lease lasts 1 s at least): the slow tier.
@pytest.mark.slow
async def test_the_runner_still_holds_the_lease_halfway_through_a_long_run(
    pool: asyncpg.Pool,
) -> None:
    """Halfway through a 2.4 s run the 1 s lease is still the runner's, and it is not
    released after the run: it runs out on its own, so no other worker runs the job at once."""
    started = asyncio.Event()

    async def slow(_pool: asyncpg.Pool) -> None:
        started.set()
        await asyncio.sleep(2.4)

    scheduler = Scheduler(pool, Leases(pool, "runner"))
    scheduler.register("slow", 0.3, slow)
    stop = asyncio.Event()
    task = asyncio.create_task(scheduler.run(stop))
    try:
        await asyncio.wait_for(started.wait(), timeout=2)
        await asyncio.sleep(1.2)
        assert await pool.fetchval(HELD_BY, LEASE) == "runner"
    finally:
        stop.set()
        await task
    assert scheduler.runs == {"slow": 1}
    assert await pool.fetchval(HELD_BY, LEASE) == "runner"


class _LosingLeases(Leases):
    """Leases whose renewals find the lease taken by someone else."""

    calls = 0

    async def acquire(self, name: str, duration_s: float | None = None) -> bool:
        self.calls += 1
        return self.calls == 1 and await super().acquire(name, duration_s)


async def test_a_lost_lease_is_logged_and_the_job_runs_to_its_end(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    """The job is not cancelled when its lease is lost (jobs are overlap-harmless), only logged."""
    finished = asyncio.Event()

    async def slow(_pool: asyncpg.Pool) -> None:
        await asyncio.sleep(0.6)
        finished.set()

    scheduler = Scheduler(pool, _LosingLeases(pool, "runner"))
    scheduler.register("slow", 0.3, slow)
    stop = asyncio.Event()
    task = asyncio.create_task(scheduler.run(stop))
    try:
        await asyncio.wait_for(finished.wait(), timeout=2)
    finally:
        stop.set()
        await task
    assert scheduler.runs == {"slow": 1}
    assert "lost lease job:slow" in caplog.text
    assert "periodic job slow ran on without its lease" in caplog.text
