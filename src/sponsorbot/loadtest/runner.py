"""`sponsorbot loadtest`: start the cluster, set it up, send visitors, report."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.db.embedded import EmbeddedPostgres
from sponsorbot.db.pool import create_pool
from sponsorbot.loadtest import statements
from sponsorbot.loadtest.options import Options
from sponsorbot.loadtest.peer import run_peer
from sponsorbot.loadtest.plot import draw
from sponsorbot.loadtest.processes import (
    Cluster,
    CpuMeter,
    free_port,
    own_pid,
    peak_rss_mb,
    postgres_pids,
    start_simulator,
    wait_http,
)
from sponsorbot.loadtest.report import (
    BACKLOG,
    CREDITED,
    DUE_OUTBOX,
    Window,
    broadcast_figures,
    campaign_figures,
    database_per_visitor,
    database_work,
    measure,
)
from sponsorbot.loadtest.scenario import (
    LoadBot,
    Opened,
    OwnerApi,
    add_recipients,
    send_visitors,
    set_up_bot,
    start_broadcast,
)
from sponsorbot.simulator.client import SimulatorClient

log = logging.getLogger(__name__)


def _environment(
    workdir: Path, sim_url: str, api_port: int, options: Options
) -> tuple[dict[str, str], Path | None]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPONSORBOT_")}
    pgdata: Path | None = None
    if os.environ.get("SPONSORBOT_DATABASE_URL"):
        env["SPONSORBOT_DATABASE_URL"] = os.environ["SPONSORBOT_DATABASE_URL"]
    else:
        pgdata = workdir / "data" / "pgdata"
    env.update(
        SPONSORBOT_DATA_DIR=str(workdir / "data"),
        SPONSORBOT_TELEGRAM_API=sim_url,
        SPONSORBOT_HOST="127.0.0.1",
        SPONSORBOT_PORT=str(api_port),
        SPONSORBOT_PUBLIC_URL=f"http://127.0.0.1:{api_port}",
        SPONSORBOT_LOG_LEVEL="WARNING",
    )
    for name, value in options.settings:
        env[f"SPONSORBOT_{name.upper()}"] = value
    if options.worker_slots is not None:
        # Pinned: the count does not adapt, as before it could.
        env["SPONSORBOT_WORKER_SLOTS"] = str(options.worker_slots)
        env["SPONSORBOT_WORKER_SLOTS_MAX"] = str(options.worker_slots)
    return env, pgdata


def _token(env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "sponsorbot", "token", "create", "--name", "loadtest"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


@contextlib.asynccontextmanager
async def _database(env: dict[str, str]) -> AsyncIterator[asyncpg.Pool]:
    """A pool on the cluster's database (joining the embedded server, if that is it)."""
    server: EmbeddedPostgres | None = None
    dsn = env.get("SPONSORBOT_DATABASE_URL")
    if not dsn:
        server = EmbeddedPostgres(Path(env["SPONSORBOT_DATA_DIR"]))
        dsn = await asyncio.to_thread(server.start)
    pool = await create_pool(dsn, role="loadtest", min_size=1, max_size=4)
    try:
        yield pool
    finally:
        await pool.close()
        if server is not None:
            await asyncio.to_thread(server.release)


async def run_loadtest(options: Options, say: Any = print) -> dict[str, Any]:
    """Run one load test and return its figures."""
    if options.peer is not None:
        return await run_peer(options, say)
    workdir = Path(tempfile.mkdtemp(prefix="sponsorbot-loadtest-"))
    sim_port, api_port = free_port(), free_port()
    sim_url = f"http://127.0.0.1:{sim_port}"
    env, pgdata = _environment(workdir, sim_url, api_port, options)
    if options.citus_url is not None:
        env["SPONSORBOT_DATABASE_URL"] = options.citus_url
        pgdata = None
    cluster = Cluster(workdir, env)
    say(
        f"load test: {options.bots} bots, {options.rate:g}/s for {options.duration:g}s "
        f"after {options.warmup:g}s at half rate, Telegram {options.rtt_ms:g} ms away, "
        f"api + {options.workers} worker(s)"
        f"{_joining(options)}{_broadcasting(options)}{_on_citus(options)}; logs in {workdir}"
    )
    try:
        if options.statements and pgdata is not None:
            await statements.preload(Path(env["SPONSORBOT_DATA_DIR"]))
        await start_simulator(cluster, sim_port, options.rtt_ms)
        cluster.start("api", "run", "--role", "api")
        await wait_http(f"http://127.0.0.1:{api_port}/healthz", cluster)
        for n in range(options.workers):
            cluster.start(f"worker{n + 1}", "run", "--role", "worker")
        token = await asyncio.to_thread(_token, env)
        async with SimulatorClient(sim_url) as sim, _database(env) as pool:
            api = OwnerApi(f"http://127.0.0.1:{api_port}", token)
            try:
                return await _measure(options, say, cluster, sim, pool, api, pgdata, workdir)
            finally:
                await api.close()
    finally:
        cluster.stop()


def _on_citus(options: Options) -> str:
    workers = len(options.citus_nodes) - 1
    return f", on Citus (a coordinator and {workers} workers)" if options.citus_url else ""


async def _measure(
    options: Options,
    say: Any,
    cluster: Cluster,
    sim: SimulatorClient,
    pool: asyncpg.Pool,
    api: OwnerApi,
    pgdata: Path | None,
    workdir: Path,
) -> dict[str, Any]:
    """Set the bots up, warm up, measure, drain and report (the cluster is running)."""
    if options.statements:
        await statements.check(pool)
    made = (set_up_bot(sim, api, n, options.campaigns, options.joins) for n in range(options.bots))
    bots: list[LoadBot] = list(await asyncio.gather(*made))
    bot_ids = [b.api_id for b in bots]
    recipients: set[int] = set()
    if options.broadcast:
        say(f"adding {options.broadcast:,} made-up recipients to each bot ...")
        for bot in bots:
            recipients.update(await add_recipients(sim, pool, bot, options.broadcast))
    warm_count = int(options.rate / 2 * options.warmup)
    users = await sim.create_users(warm_count + int(options.rate * options.duration) + 1)
    await asyncio.sleep(1.0)  # workers take their leases
    cluster.check_alive()
    opened = Opened()
    say("warming up ...")
    await send_visitors(
        sim,
        bots,
        users[:warm_count],
        options.rate / 2,
        options.warmup,
        opened.warmup,
        opened,
    )
    groups = {m.name: [m.proc.pid] for m in cluster.members}
    if not options.citus_nodes:
        groups["postgres"] = postgres_pids(pgdata)
    # Each Citus node apart: report.py sums every "postgres..." group as the database's CPU.
    for name, node_pgdata in options.citus_nodes:
        groups[f"postgres-{name}"] = postgres_pids(Path(node_pgdata))
    groups["loadgen"] = [own_pid()]
    meter = CpuMeter(groups)
    if options.statements:
        await statements.reset(pool)
    db_before = await database_work(pool)
    meter.start()
    say("measuring ...")
    window_start = time.time()
    # The broadcasts start with the window, beside the visitors (not before them).
    broadcasts = asyncio.create_task(_start_broadcasts(api, bots if recipients else []))
    await send_visitors(
        sim,
        bots,
        users[warm_count:],
        options.rate,
        options.duration,
        opened.measured,
        opened,
    )
    window_end = time.time()
    backlog = await pool.fetchval(BACKLOG, bot_ids)
    cpu = meter.stop()
    db_after = await database_work(pool)
    counted = await statements.read(pool, len(opened.measured)) if options.statements else None
    broadcast_ids = await broadcasts
    await opened.joined()
    cluster.check_alive()
    credits_due = opened.joins if options.campaigns else 0
    await _drain(pool, bot_ids, options.drain, credits_due)
    calls = await sim.all_calls()
    window = Window(window_start, window_end, len(opened.measured) + opened.failed)
    points: list[tuple[float, float]] = []
    result = await measure(pool, bot_ids, opened.measured, calls, window, backlog, cpu, points)
    if options.plot is not None:
        title = (
            f"{options.bots} bots, {options.rate:g}/s, api + {options.workers} "
            f"worker(s), Telegram {options.rtt_ms:g} ms away"
        )
        opens = [t for _, t in opened.measured.values()]
        draw(options.plot, title, window_start, points, opens)
    result.update(database_per_visitor(db_before, db_after, len(opened.measured)))
    result["open_failures"] = opened.failed
    if counted is not None:
        result["statements"] = counted
    if options.campaigns or options.joins:
        result["joins"] = {"made": opened.joins, "failed": opened.join_failures}
    if options.campaigns:
        result["campaigns"] = await campaign_figures(pool, bot_ids, opened.joins)
        result["campaigns"]["join_failures"] = opened.join_failures
    if options.broadcast:
        total = options.broadcast * len(bots)
        result.update(broadcast_figures(calls, recipients, window, total))
        result["broadcast_status"] = await _broadcast_status(api, bots, broadcast_ids)
    # Peak resident memory since each process started (VmHWM), read before they stop.
    rss = {m.name: peak_rss_mb(m.proc.pid) for m in cluster.members}
    result["peak_rss_mb"] = rss
    result["worker_peak_rss_mb"] = max(
        (v for k, v in rss.items() if k.startswith("worker") and v is not None),
        default=None,
    )
    result["options"] = {
        k: str(v) if isinstance(v, Path) else v for k, v in options.__dict__.items()
    }
    result["logs"] = str(workdir)
    return result


async def _start_broadcasts(api: OwnerApi, bots: list[LoadBot]) -> list[int]:
    """A broadcast to its made-up recipients on every bot, sent now; their ids."""
    return list(await asyncio.gather(*(start_broadcast(api, bot) for bot in bots)))


async def _broadcast_status(
    api: OwnerApi, bots: list[LoadBot], broadcast_ids: list[int]
) -> dict[str, Any]:
    """What the product says of the broadcasts at the end: how many are in each status, and
    its own counts of what was sent and what failed."""
    found = await asyncio.gather(
        *(
            api.call("GET", f"/bots/{bot.api_id}/broadcasts/{broadcast_id}")
            for bot, broadcast_id in zip(bots, broadcast_ids, strict=True)
        )
    )
    statuses: dict[str, int] = {}
    for b in found:
        statuses[b["status"]] = statuses.get(b["status"], 0) + 1
    return {
        "statuses": statuses,
        **{k: sum(int(b[k]) for b in found) for k in ("sent", "blocked", "failed", "unknown")},
    }


def _joining(options: Options) -> str:
    if options.campaigns:
        return ", a running campaign per bot, every visitor joining through its link"
    if options.joins:
        return ", every visitor joining the second gate channel by its @username"
    return ""


def _broadcasting(options: Options) -> str:
    if not options.broadcast:
        return ""
    return f", a broadcast to {options.broadcast:,} made-up recipients per bot from the window on"


async def _drain(pool: asyncpg.Pool, bot_ids: list[int], seconds: float, joins: int = 0) -> None:
    """Give the backlog up to `seconds` to be answered, so late answers are measured too; with
    campaigns, until the `joins` made are credited (or counted outside the gate) as well: the
    last joins' updates may still be on their way from the simulator."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        settled = await pool.fetchval(BACKLOG, bot_ids) == 0
        settled = settled and await pool.fetchval(DUE_OUTBOX, bot_ids) == 0
        if settled and joins:
            row = await pool.fetchrow(CREDITED, bot_ids)
            settled = row["through_gate"] + row["outside"] >= joins
        # Once settled, one more pause lets the senders' last completions be written.
        await asyncio.sleep(0.5)
        if settled:
            return
