"""PostgreSQL's own CPU for the smallest statements the durable path is made of.

    python benchmarks/database_floor.py [--statements 4000] [--rounds 3] [--writers 4]

Runs on a throwaway embedded PostgreSQL (or SPONSORBOT_DATABASE_URL's server on this machine,
in a new database). Each case runs the same prepared statement many times on one connection
and reads that connection's server process's CPU time (user + system, from the kernel), so the
figures are what the database spends, not the client. Cases, alternating round by round:

- a round trip that does nothing (`SELECT 1`);
- a one-row insert committed durably (the WAL flushed before the answer, as every commit of
  ours is), and the same with `synchronous_commit = off`;
- eight rows inserted into a table with a foreign key to one parent row, and into one without,
  per row; then the same from `--writers` connections at once, all pointing at the same parent
  (as every bot's updates point at its one `bots` row): each check locks the parent row, and
  concurrent lockers share it through a MultiXact.

The kernel counts a process's CPU in ticks of 10 ms, hence thousands of statements a case, and
no fewer than MIN_STATEMENTS. The load test's report divides PostgreSQL's CPU by the visitors;
these are the figures to compare it with (docs/load-test.md, round four, "The floor").
"""

from __future__ import annotations

import argparse
import asyncio
import statistics

import asyncpg
import psutil
from scratch import scratch_database

SCHEMA = """
CREATE TABLE parent (id bigint PRIMARY KEY);
INSERT INTO parent VALUES (1);
CREATE TABLE narrow (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, x bigint NOT NULL);
CREATE TABLE with_fk (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    parent_id bigint NOT NULL REFERENCES parent (id) ON DELETE CASCADE
        DEFERRABLE INITIALLY DEFERRED
);
CREATE TABLE without_fk (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    parent_id bigint NOT NULL
);
"""
ROUND_TRIP = "SELECT 1"
ONE_ROW = "INSERT INTO narrow (x) VALUES (1)"
EIGHT_WITH_FK = "INSERT INTO with_fk (parent_id) SELECT 1 FROM generate_series(1, 8)"
EIGHT_WITHOUT_FK = "INSERT INTO without_fk (parent_id) SELECT 1 FROM generate_series(1, 8)"
ROWS_PER_STATEMENT = 8
MIN_STATEMENTS = 1000


class Backend:
    """One connection and the CPU seconds its server process has used."""

    def __init__(self, conn: asyncpg.Connection, pid: int) -> None:
        self.conn = conn
        self.process = psutil.Process(pid)

    @classmethod
    async def open(cls, dsn: str) -> Backend:
        """Connect and find the server process (it must run on this machine)."""
        conn = await asyncpg.connect(dsn)
        return cls(conn, await conn.fetchval("SELECT pg_backend_pid()"))

    def cpu(self) -> float:
        """User + system CPU seconds of the server process so far."""
        times = self.process.cpu_times()
        return times.user + times.system


async def per_statement(backends: list[Backend], sql: str, statements: int) -> float:
    """Server CPU microseconds per statement, `statements` on each backend at once."""
    prepared = [await b.conn.prepare(sql) for b in backends]

    async def run(statement: asyncpg.prepared_stmt.PreparedStatement, n: int) -> None:
        for _ in range(n):
            await statement.fetch()

    await asyncio.gather(*(run(p, 100) for p in prepared))  # plans cached, buffers warm
    before = [b.cpu() for b in backends]
    await asyncio.gather(*(run(p, statements) for p in prepared))
    used = sum(b.cpu() - start for b, start in zip(backends, before, strict=True))
    return used * 1e6 / (statements * len(backends))


async def measure(dsn: str, statements: int, rounds: int, writers: int) -> dict[str, list[float]]:
    """Each case's figure per round, in microseconds of server CPU."""
    one = await Backend.open(dsn)
    lazy = await Backend.open(dsn)
    await lazy.conn.execute("SET synchronous_commit = off")
    many = [await Backend.open(dsn) for _ in range(writers)]
    figures: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    try:
        for _ in range(rounds):
            add("round trip (SELECT 1)", await per_statement([one], ROUND_TRIP, statements))
            add("one-row insert, durable commit", await per_statement([one], ONE_ROW, statements))
            add(
                "one-row insert, synchronous_commit off",
                await per_statement([lazy], ONE_ROW, statements),
            )
            for sql, label in ((EIGHT_WITH_FK, "with"), (EIGHT_WITHOUT_FK, "without")):
                alone = await per_statement([one], sql, statements // 2)
                add(f"per row, {label} foreign key, 1 writer", alone / ROWS_PER_STATEMENT)
                together = await per_statement(many, sql, statements // 2)
                add(
                    f"per row, {label} foreign key, {writers} writers",
                    together / ROWS_PER_STATEMENT,
                )
            await one.conn.execute("TRUNCATE narrow, with_fk, without_fk")
    finally:
        for backend in (one, lazy, *many):
            await backend.conn.close()
    return figures


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--writers", type=int, default=4)
    args = parser.parse_args()
    if args.statements < MIN_STATEMENTS:
        parser.error(f"--statements: at least {MIN_STATEMENTS}, or the 10 ms ticks swamp it")
    async with scratch_database("sponsorbot_floor") as dsn:
        setup = await asyncpg.connect(dsn)
        await setup.execute(SCHEMA)
        await setup.close()
        figures = await measure(dsn, args.statements, args.rounds, args.writers)
    print(f"{'case':<44} {'median µs of server CPU':>24}   rounds")
    for name, values in figures.items():
        rounds = " ".join(f"{v:.1f}" for v in values)
        print(f"{name:<44} {statistics.median(values):>24.1f}   {rounds}")


if __name__ == "__main__":
    asyncio.run(main())
