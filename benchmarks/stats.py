"""Time the statistics pages and the owner API's statistics over a year of events.

    python benchmarks/stats.py [--events 10000000] [--bots 10] [--days 365] [--repeat 20]
                               [--zone Asia/Tehran] [--database-url URL] [--db-name NAME]
                               [--keep [DIR]] [--reuse] [--json PATH] [--quiet]

Fills a database with `--events` events over `--bots` bots and the last `--days` days (visits
with an evening rhythm on the workspace's clock, gates, joins through campaign links, leaves,
people, the sender's per-minute counts), all in set-based SQL, one UTC month at a time. Then
runs the roll-up job until it has caught up, and times every statistics page and API call
through the real ASGI app in this process (a signed-in panel session; an analyst's API token):
each `--repeat` times after two warm-ups, the pages taken in turn so that a noisy neighbour
hurts them all alike. The wall time of an in-process request is its server time.

Prints JSON: the fill, the roll-up's time per hour of events, the roll-up tables' sizes, and
the p50, p95 and max milliseconds of each page, with the pages over the 150 ms target.

By default the database is a fresh embedded PostgreSQL in a temporary directory, removed at the
end. `--database-url` names a server to use instead: the benchmark makes a database of its own
there (`--db-name`) and drops it at the end. `--keep` keeps what was filled (the embedded
server's data in DIR), so that a later `--reuse` run times the pages again without filling;
it first applies the migrations the database has not got, and rolls up what they need.

On two shared cores, a million events take about 70 s in all; ten million about five minutes
(fill 1.5 to 2.5 min, roll-up 1.5 to 2.5 min, pages 1 to 2 min) and 5 GB of disk. "today" is
cut on the real clock: its figures depend on the hour the benchmark runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
import httpx
from pydantic import SecretStr
from starlette.routing import Match

from sponsorbot.config import Settings
from sponsorbot.db.database import Database
from sponsorbot.db.embedded import EmbeddedPostgres, dsn_for
from sponsorbot.db.migrate import migrate
from sponsorbot.db.pool import connect, create_pool
from sponsorbot.engine.core import Engine
from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.features.accounts.security import hash_password
from sponsorbot.features.all import install
from sponsorbot.features.stats.rollup import roll_up
from sponsorbot.web.app import create_app
from sponsorbot.web.panel import PanelConfig

# benchmarks/ is a folder of scripts: its sibling module is found next to this file.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from stats_fill import SECRET, Log, fill

TARGET_P95_MS = 150.0
WARM_UPS = 2
PASSWORD = "stats benchmark password"
# Nothing listens there: no page timed here calls the Bot API.
NOWHERE = "http://127.0.0.1:9"
BASE_URL = "http://127.0.0.1"
CSRF_FIELD = re.compile(r'name="csrf" value="([^"]+)"')
ROLLUP_TABLES = """
SELECT tablename FROM pg_tables
WHERE schemaname = current_schema() AND tablename LIKE 'stats\\_%' AND tablename <> 'stats_rollup'
ORDER BY 1
"""


async def run_rollup(pool: asyncpg.Pool, zone: str) -> dict[str, Any]:
    """Fold every finished hour; the time per hour of events, and the roll-ups' sizes."""
    await pool.execute("UPDATE workspace SET time_zone = $1 WHERE id = 1", zone)
    oldest = await pool.fetchval(
        "SELECT least((SELECT min(at) FROM events), (SELECT min(first_seen) FROM people),"
        " (SELECT min(minute) FROM send_stats))"
    )
    began = time.perf_counter()
    steps = 0
    while taken := await roll_up(pool, budget_s=3600.0):
        steps += taken
    total_s = time.perf_counter() - began
    done = await pool.fetchval("SELECT done_until FROM stats_rollup WHERE id = 1")
    first = await pool.fetchval("SELECT date_trunc('hour', $1::timestamptz, $2)", oldest, zone)
    hours = int((done - first) / timedelta(hours=1)) if done and first else 0
    async with pool.acquire() as conn:
        names = [str(r["tablename"]) for r in await conn.fetch(ROLLUP_TABLES)]
        # What autovacuum would do to the new rows: the pages' index-only scans need it.
        await conn.execute(f"VACUUM (ANALYZE) {', '.join(names)}")
        tables = {
            t: {
                "rows": int(await conn.fetchval(f"SELECT count(*) FROM {t}")),
                "mb": round(
                    int(await conn.fetchval("SELECT pg_total_relation_size($1::regclass)", t))
                    / 2**20,
                    1,
                ),
            }
            for t in names
        }
    return {
        "total_s": round(total_s, 1),
        "steps": steps,
        "hours": hours,
        "ms_per_hour": round(total_s * 1000 / hours, 2) if hours else None,
        "tables": tables,
    }


# --- the pages ------------------------------------------------------------------------------


@dataclass
class Page:
    """One thing to time: a name, who asks (panel or api) and the URL."""

    name: str
    client: str
    url: str
    times_ms: list[float] = field(default_factory=list)
    status: int = 0


def has_route(app: Any, url: str) -> bool:
    """Whether the app has a GET route for `url`'s path (a page being written may not yet)."""
    scope = {
        "type": "http",
        "path": url.split("?", 1)[0],
        "root_path": "",
        "method": "GET",
        "headers": [],
        "query_string": b"",
    }
    return any(route.matches(scope)[0] == Match.FULL for route in app.router.routes)


def pages_of(app: Any, info: dict[str, Any], today: datetime) -> tuple[list[Page], list[str]]:
    """The pages and API calls to time, and notes on the ones this app has not got."""
    bot = info["bot"]
    user = info["visitor"] or 1_000_000_001
    pages = [Page("dashboard", "panel", "/")]
    for span in ("today", "7d", "30d"):
        pages.append(Page(f"stats_{span}_all", "panel", f"/stats?range={span}"))
        pages.append(Page(f"stats_{span}_bot", "panel", f"/stats?range={span}&bot={bot}"))
    year = f"from={(today - timedelta(days=364)).date()}&to={today.date()}"
    pages += [
        Page("stats_custom_365d_all", "panel", f"/stats?range=custom&{year}"),
        Page("stats_csv_content_30d_all", "panel", "/stats.csv?table=content&range=30d"),
        Page("content_page_bot", "panel", f"/bots/{bot}/content"),
    ]
    for span in ("today", "7d", "30d"):
        pages.append(Page(f"api_stats_{span}_all", "api", f"/api/v1/stats?range={span}"))
        pages.append(
            Page(f"api_stats_{span}_bot", "api", f"/api/v1/stats?range={span}&bot_id={bot}")
        )
    # The visitors page: the most recently seen, a search by id, by a username's start and by
    # part of a name, and the busiest visitor of the busiest bot (the panel's address of one
    # visitor is either form below).
    visitors = [
        [Page("visitors_recent", "panel", "/visitors")],
        [Page("visitors_search_id", "panel", f"/visitors?q={user}")],
        [Page("visitors_search_username", "panel", "/visitors?q=sara")],
        [Page("visitors_search_name", "panel", "/visitors?q=negar")],
        # Nobody's name or username: the name scan reads as far as it ever does.
        [Page("visitors_search_no_match", "panel", "/visitors?q=qxqxq")],
        [
            Page("visitor_page", "panel", f"/visitors/{bot}/{user}"),
            Page("visitor_page", "panel", f"/bots/{bot}/visitors/{user}"),
        ],
        [Page("api_visitors_search", "api", "/api/v1/visitors?q=sara")],
        [Page("api_visitor", "api", f"/api/v1/bots/{bot}/visitors/{user}")],
    ]
    skipped = []
    for forms in visitors:
        found = [p for p in forms if has_route(app, p.url)]
        if found:
            pages.append(found[0])
        else:
            tried = " or ".join(p.url.split("?", 1)[0] for p in forms)
            skipped.append(f"{forms[0].name}: the app has no route for {tried}")
    return pages, skipped


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (the p95 of 20 requests is the 19th fastest)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@contextlib.asynccontextmanager
async def served_app(dsn: str, data_dir: Path) -> AsyncIterator[Any]:
    """The api role's app over the database, as `sponsorbot run` builds it."""
    settings = Settings(
        database_url=dsn, telegram_api=NOWHERE, data_dir=data_dir, secret_key=SecretStr(SECRET)
    )
    pool = await create_pool(
        dsn, role="api", min_size=settings.pool_min_size, max_size=settings.pool_max_size
    )
    engine = Engine(settings, pool, dsn)
    try:
        features = install(engine)
        app = create_app(settings, Database(dsn, pool, None), features, PanelConfig())
        app.state.bench_features = features
        yield app
    finally:
        await engine.close()
        await pool.close()


async def sign_in(http: httpx.AsyncClient, pool: asyncpg.Pool) -> None:
    """Sign `http` in to the panel as an admin made for the benchmark."""
    email = f"bench-{secrets.token_hex(4)}@example.com"
    await pool.execute(
        "INSERT INTO users (email, name, password_hash, role) VALUES ($1, 'Bench', $2, 'admin')",
        email,
        hash_password(PASSWORD),
    )
    form = await http.get("/signin")
    match = CSRF_FIELD.search(form.text)
    if match is None:
        raise RuntimeError("the sign-in page has no CSRF field")
    answer = await http.post(
        "/signin", data={"csrf": match[1], "email": email, "password": PASSWORD}
    )
    if answer.status_code != 303:
        raise RuntimeError(f"sign-in answered {answer.status_code}")


async def time_pages(
    dsn: str, data_dir: Path, info: dict[str, Any], repeat: int, log: Log
) -> tuple[list[Page], list[str]]:
    """Every page `repeat` times after the warm-ups, round after round."""
    async with served_app(dsn, data_dir) as app:
        pool: asyncpg.Pool = app.state.db.pool
        _, token = await app.state.bench_features.get(TokenService).create("bench", "analyst")
        # A page that fails answers 500 and is listed under not_200; the run goes on.
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with (
            httpx.AsyncClient(transport=transport, base_url=BASE_URL) as panel,
            httpx.AsyncClient(
                transport=transport,
                base_url=BASE_URL,
                headers={"Authorization": f"Bearer {token}"},
            ) as api,
        ):
            await sign_in(panel, pool)
            clients = {"panel": panel, "api": api}
            pages, skipped = pages_of(app, info, datetime.now(UTC).astimezone(info["zone"]))

            async def once(page: Page) -> float:
                began = time.perf_counter()
                answer = await clients[page.client].get(page.url)
                spent = (time.perf_counter() - began) * 1000
                if page.status in (0, 200):
                    page.status = answer.status_code
                return spent

            for _ in range(WARM_UPS):
                for page in pages:
                    await once(page)
            log(f"warmed up {len(pages)} pages; timing {repeat} rounds")
            for _ in range(repeat):
                for page in pages:
                    page.times_ms.append(await once(page))
    return pages, skipped


# --- the run --------------------------------------------------------------------------------


def parse(argv: list[str] | None) -> argparse.Namespace:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--bots", type=int, default=10)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--repeat", type=int, default=20, help="timed requests per page")
    parser.add_argument("--zone", default="Asia/Tehran", help="the workspace's time zone")
    parser.add_argument("--database-url", help="a server to use instead of an embedded one")
    parser.add_argument("--db-name", default="sponsorbot_stats_bench")
    parser.add_argument(
        "--keep",
        nargs="?",
        const="",
        metavar="DIR",
        help="keep the filled database (the embedded server's data in DIR)",
    )
    parser.add_argument("--reuse", action="store_true", help="time a database kept before")
    parser.add_argument("--seed", type=float, default=0.42, help="for random(), -1 to 1")
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    ZoneInfo(args.zone)  # an unknown zone fails here, not an hour into the run
    if args.reuse and not args.keep and not args.database_url:
        parser.error("--reuse needs the DIR of an earlier --keep, or --database-url")
    if args.events < 1 or args.bots < 1 or args.days < 1 or args.repeat < 1:
        parser.error("--events, --bots, --days and --repeat are at least 1")
    return args


@contextlib.asynccontextmanager
async def server(args: argparse.Namespace, log: Log) -> AsyncIterator[tuple[str, Path]]:
    """The server's URI and a scratch dir: the given server, or an embedded one."""
    scratch = Path(tempfile.mkdtemp(prefix="sponsorbot-stats-bench-"))
    embedded = None
    try:
        if args.database_url:
            yield args.database_url, scratch
            return
        home = scratch
        if args.keep is not None:
            home = Path(args.keep or tempfile.mkdtemp(prefix="sponsorbot-stats-kept-"))
        embedded = EmbeddedPostgres(home)
        uri = await asyncio.to_thread(embedded.start)
        log(f"embedded PostgreSQL in {embedded.pgdata}")
        yield uri, scratch
    finally:
        if embedded is not None:
            await asyncio.to_thread(embedded.release)
        shutil.rmtree(scratch, ignore_errors=True)


def code_version() -> str | None:
    """The commit the product code is at, marked when the work tree has changes too."""
    here = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return f"{head} + changes in src" if dirty else head


def load() -> list[float]:
    """The load average over 1, 5 and 15 minutes."""
    return [round(x, 2) for x in os.getloadavg()]


async def admin(uri: str, sql: str) -> None:
    conn = await asyncpg.connect(uri)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def bench(argv: list[str] | None = None, log: Log | None = None) -> dict[str, Any]:
    """Run the benchmark; returns what it prints."""
    args = parse(argv)
    say: Log = log or (lambda line: None if args.quiet else print(line, file=sys.stderr))
    name = args.db_name
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise SystemExit("--db-name: lower-case letters, digits and _")
    async with server(args, say) as (uri, scratch):
        dsn = dsn_for(uri, name)
        applied: list[int] = []
        if not args.reuse:
            await admin(uri, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            await admin(uri, f"CREATE DATABASE {name}")
        try:
            conn = await connect(dsn)
            try:
                if args.reuse:
                    described = await conn.fetchval(
                        "SELECT shobj_description(oid, 'pg_database') FROM pg_database"
                        " WHERE datname = current_database()"
                    )
                    if not described:
                        raise SystemExit(f"{name} holds no benchmark filled with --keep")
                    result = json.loads(described)
                    # The code timed may need migrations the kept database has not got yet.
                    applied = await migrate(conn)
                else:
                    await migrate(conn)
                    result = await fill(conn, args, say)
            finally:
                await conn.close()
            if args.reuse and applied:
                say(f"applied the migrations {applied}; rolling up what they need")
                pool = await create_pool(dsn, role="bench", min_size=1, max_size=2)
                try:
                    caught_up = await run_rollup(pool, args.zone)
                finally:
                    await pool.close()
                say(f"caught up in {caught_up['total_s']} s")
            if not args.reuse:
                say(f"{result['events']:,} events; rolling up")
                pool = await create_pool(dsn, role="bench", min_size=1, max_size=2)
                try:
                    result["rollup"] = await run_rollup(pool, args.zone)
                finally:
                    await pool.close()
                say(f"rolled up in {result['rollup']['total_s']} s")
                await admin(
                    dsn,
                    f"COMMENT ON DATABASE {name} IS "
                    + "'"
                    + json.dumps(result).replace("'", "''")
                    + "'",
                )
            info = {**result, "zone": ZoneInfo(args.zone)}
            # A shared machine's load says how far to trust the timings.
            machine: dict[str, Any] = {
                "code": code_version(),
                "cpus": os.cpu_count(),
                "load_before": load(),
            }
            pages, skipped = await time_pages(dsn, scratch, info, args.repeat, say)
            machine["load_after"] = load()
        finally:
            if args.keep is None and not args.reuse:
                await admin(uri, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            else:
                say(f"kept the database {name}" + (f" in {args.keep}" if args.keep else ""))
    report = report_of(args, result, pages, skipped, machine)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if args.json:
        args.json.write_text(text + "\n")
    return report


def report_of(
    args: argparse.Namespace,
    filled: dict[str, Any],
    pages: list[Page],
    skipped: list[str],
    machine: dict[str, Any],
) -> dict[str, Any]:
    """The JSON the benchmark prints."""
    timed = {
        p.name: {
            "p50_ms": round(statistics.median(p.times_ms), 1),
            "p95_ms": round(percentile(p.times_ms, 0.95), 1),
            "max_ms": round(max(p.times_ms), 1),
            "status": p.status,
        }
        for p in pages
    }
    return {
        "events": filled["events"],
        "events_asked": args.events,
        "machine": machine,
        "bots": args.bots,
        "days": args.days,
        "zone": args.zone,
        "repeat": args.repeat,
        "fill_s": filled["fill_s"],
        "vacuum_s": filled["vacuum_s"],
        "rows": filled["rows"],
        "rollup": {
            k: filled["rollup"][k] for k in ("total_s", "hours", "ms_per_hour", "steps", "tables")
        },
        "pages": timed,
        "target_p95_ms": TARGET_P95_MS,
        "over_target": [n for n, t in timed.items() if t["p95_ms"] > TARGET_P95_MS],
        "not_200": [n for n, t in timed.items() if t["status"] != 200],
        "skipped": skipped,
    }


def run(main: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
    """On uvloop when installed, as `sponsorbot run` is."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    result: dict[str, Any] = uvloop.run(main)
    return result


if __name__ == "__main__":
    print(json.dumps(run(bench()), indent=2, ensure_ascii=False))
