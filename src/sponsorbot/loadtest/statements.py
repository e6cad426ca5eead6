"""`sponsorbot loadtest --statements`: which statements PostgreSQL's time per visitor goes to.

pg_stat_statements must be loaded when the server starts. For the embedded server the load
test writes that into the fresh data dir's configuration before the api first starts it; a
server of your own (SPONSORBOT_DATABASE_URL) needs `shared_preload_libraries =
'pg_stat_statements'` already, and the run stops before any visitor if it is missing. The
extension is created in the load test's database, and its counts are reset when the measured
window opens and read when it closes. Only top-level statements are counted: a trigger's work
is inside the time of the statement that fired it, but deferred foreign-key checks run at
commit and show as statements of their own.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.db.embedded import EmbeddedPostgres
from sponsorbot.db.pool import connect

# Planning is counted too: a statement that is planned again on most calls shows it.
PRELOAD = (
    "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'",
    "ALTER SYSTEM SET pg_stat_statements.track_planning = on",
)
CREATE = "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
PROBE = "SELECT count(*) FROM pg_stat_statements"
RESET = "SELECT pg_stat_statements_reset()"
READ = """
SELECT s.query, s.calls, s.plans, s.total_exec_time, s.total_plan_time, s.rows,
       s.wal_bytes::float8 AS wal_bytes
FROM pg_stat_statements s
WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND s.toplevel
ORDER BY s.total_exec_time + s.total_plan_time DESC
"""
TOP = 10
TEXT_CHARS = 64


class StatementsUnavailable(RuntimeError):
    """pg_stat_statements is not loaded on the server the load test uses."""


async def preload(data_dir: Path) -> None:
    """Configure a new embedded server in `data_dir` to load pg_stat_statements, and stop it
    (the api starts it again, with the library loaded)."""
    server = EmbeddedPostgres(data_dir)
    uri = await asyncio.to_thread(server.start)
    try:
        conn = await connect(uri, role="loadtest")
        try:
            for sql in PRELOAD:
                await conn.execute(sql)
        finally:
            await conn.close()
    finally:
        await asyncio.to_thread(server.release)


async def check(pool: asyncpg.Pool) -> None:
    """Create the extension in the product's database; a clear error if it cannot count."""
    try:
        await pool.execute(CREATE)
        await pool.fetchval(PROBE)
    except asyncpg.PostgresError as exc:
        raise StatementsUnavailable(
            "--statements needs pg_stat_statements loaded on the database server "
            f"(shared_preload_libraries = 'pg_stat_statements'): {exc}"
        ) from None


async def reset(pool: asyncpg.Pool) -> None:
    """Start counting from zero (the measured window opens)."""
    await pool.execute(RESET)


def short(query: str) -> str:
    """The statement on one line, cut to a readable length, safe in a Markdown table."""
    one_line = re.sub(r"\s+", " ", query).strip().replace("|", "\\|")
    return one_line if len(one_line) <= TEXT_CHARS else one_line[: TEXT_CHARS - 1] + "…"


async def read(pool: asyncpg.Pool, visitors: int) -> dict[str, Any]:
    """Per visitor: every statement's calls, time (executing and planning), rows and WAL; the
    TOP by time one by one, and the sum of all."""
    rows = await pool.fetch(READ)
    n = max(visitors, 1)

    def per_visitor(r: asyncpg.Record) -> dict[str, Any]:
        return {
            "statement": short(r["query"]),
            "calls": r["calls"] / n,
            "us": (r["total_exec_time"] + r["total_plan_time"]) * 1000 / n,
            "planning_us": r["total_plan_time"] * 1000 / n,
            "planned_share": r["plans"] / r["calls"] if r["calls"] else 0.0,
            "rows": r["rows"] / n,
            "wal_bytes": r["wal_bytes"] / n,
        }

    every = [per_visitor(r) for r in rows]
    return {
        "top": every[:TOP],
        "all": {
            "statements": len(every),
            "calls": sum(s["calls"] for s in every),
            "us": sum(s["us"] for s in every),
            "planning_us": sum(s["planning_us"] for s in every),
            "wal_bytes": sum(s["wal_bytes"] for s in every),
        },
    }


def table(figures: dict[str, Any], postgres_cpu_ms: float | None) -> str:
    """The statements' figures as the report's text."""
    total = figures["all"]
    of_cpu = (
        f", of {postgres_cpu_ms * 1000:,.0f} µs of PostgreSQL's CPU"
        if postgres_cpu_ms is not None
        else ""
    )
    lines = [
        f"PostgreSQL's statements per visitor: {total['calls']:.2f} calls of "
        f"{total['statements']} statements, {total['us']:,.0f} µs executing and planning "
        f"(planning {total['planning_us']:,.0f} µs){of_cpu}; the top {len(figures['top'])}:",
        "| statement | calls | µs | planning µs | planned | rows | WAL bytes |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in figures["top"]:
        lines.append(
            f"| `{s['statement']}` | {s['calls']:.2f} | {s['us']:,.0f} | "
            f"{s['planning_us']:,.0f} | {s['planned_share']:.0%} | {s['rows']:.2f} | "
            f"{s['wal_bytes']:,.0f} |"
        )
    return "\n".join(lines)
