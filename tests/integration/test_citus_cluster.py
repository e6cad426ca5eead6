"""`sponsorbot citus up`, `sponsorbot migrate` on the cluster, and `sponsorbot citus down`.

One cluster (a coordinator and 2 workers) for the module, made by the real command. The checks:
migrate distributes every table as sponsorbot.db.citus_schema classes it, a second migrate
changes nothing, different bots' rows land on both workers, the engine's hot statements run or
fail on Citus as pinned below, and `down` leaves no server running.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import psutil
import pytest

from sponsorbot.db.citus_schema import DIST, NOT_BY_BOT, WORKSPACE_TABLES
from sponsorbot.engine import inbox
from tests.integration import citus_kit
from tests.integration.citus_kit import RunningCluster

pytestmark = [
    pytest.mark.slow,
    pytest.mark.external,
    pytest.mark.citus,
    pytest.mark.xdist_group("citus-cluster"),
    pytest.mark.skipif(citus_kit.skip_reason() is not None, reason=str(citus_kit.skip_reason())),
]

WITH_BOT_ID = """
SELECT c.relname AS name FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND a.attname = 'bot_id' AND NOT a.attisdropped
"""
ADD_BOT = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
VALUES ($1::bigint, 'bot' || $1::bigint, '', 'xxxx', 'webhook', 'path-' || $1::bigint, '')
"""
ADD_PERSON = "INSERT INTO people (bot_id, user_id) VALUES ($1, $2)"

# What the engine's statements do on Citus, run for one bot: "ok", or the start of Citus's
# refusal. The single server's intake insert and claim are refused; the engine chooses the
# Citus forms (inbox.INSERTS[True], inbox.one_bot) when the citus extension is present.
ENGINE_ON_CITUS = {
    "inbox.INSERT": "functions used in the DO UPDATE SET clause of INSERTs on distributed"
    " tables must be marked IMMUTABLE",
    "inbox.INSERTS[True].one": "ok",
    "inbox.CLAIM": "complex joins are only supported when all distributed tables are co-located"
    " and joined on their distribution columns",
    "inbox.one_bot(CLAIM)": "ok",
    "inbox.DONE_AND_ENQUEUE": "ok",
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCluster]:
    """A coordinator and 2 workers, up for the module, down after it."""
    running = citus_kit.up(tmp_path_factory.mktemp("citus"))
    try:
        yield running
    finally:
        citus_kit.sponsorbot("citus", "down", "--data-dir", str(running.folder))


@pytest.fixture(scope="module")
def migrated(cluster: RunningCluster) -> RunningCluster:
    """The cluster after a first `sponsorbot migrate`."""
    done = citus_kit.migrate(cluster)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("applied "), done.stdout
    return cluster


async def test_migrate_distributes_every_table_as_classed(migrated: RunningCluster) -> None:
    conn = await asyncpg.connect(migrated.url)
    try:
        with_bot_id = {r["name"] for r in await conn.fetch(WITH_BOT_ID)}
    finally:
        await conn.close()
    found = await citus_kit.placements(migrated.url)
    bot_tables = with_bot_id - set(NOT_BY_BOT)
    assert len(bot_tables) > 20
    group = {found[t]["colocation"] for t in bot_tables if t in found}
    assert len(group) == 1, "the bot tables are in one colocation group"
    for table in bot_tables:
        row = found.get(table)
        assert row is not None, f"{table} is not distributed"
        assert (row["method"], row["column_name"]) == ("h", DIST), table
        assert row["shards"] == 32, table
    for table, (column, _) in NOT_BY_BOT.items():
        assert (found[table]["method"], found[table]["column_name"]) == ("h", column)
        assert found[table]["colocation"] not in group
    for table, (kind, _) in WORKSPACE_TABLES.items():
        if kind == "reference":
            assert (found[table]["method"], found[table]["repmodel"]) == ("n", "t"), table
        else:
            assert table not in found, f"{table} stays a plain coordinator table"
    assert set(found) == bot_tables | set(NOT_BY_BOT) | {
        t for t, (kind, _) in WORKSPACE_TABLES.items() if kind == "reference"
    }


async def test_a_second_migrate_changes_nothing(migrated: RunningCluster) -> None:
    before = {name: dict(row) for name, row in (await citus_kit.placements(migrated.url)).items()}
    done = citus_kit.migrate(migrated)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "the database is up to date"
    after = {name: dict(row) for name, row in (await citus_kit.placements(migrated.url)).items()}
    assert after == before


async def test_different_bots_rows_land_on_both_workers(migrated: RunningCluster) -> None:
    conn = await asyncpg.connect(migrated.url)
    bots = range(910_001, 910_021)
    try:
        for bot in bots:
            await conn.execute(ADD_BOT, bot)
            await conn.execute(ADD_PERSON, bot, 5)
        assert await conn.fetchval("SELECT count(*) FROM people") == len(bots)
        per_node = {
            r["nodeport"]: r["rows"] for r in await conn.fetch(citus_kit.ROWS_PER_NODE, "people")
        }
        # The reference table has a copy on every node, the coordinator included.
        bots_copies = await conn.fetch(citus_kit.ROWS_PER_NODE, "bots")
    finally:
        await conn.close()
    assert set(per_node) == migrated.worker_ports
    assert all(rows > 0 for rows in per_node.values()), per_node
    assert sum(per_node.values()) == len(bots)
    assert {r["nodeport"] for r in bots_copies} >= migrated.worker_ports
    assert {r["rows"] for r in bots_copies} == {len(bots)}


def _outcome(exc: BaseException | None) -> str:
    return "ok" if exc is None else str(exc).splitlines()[0]


async def test_the_engines_statements_on_citus_for_one_bot(migrated: RunningCluster) -> None:
    """A smoke run of the visitor's path (insert, claim, done) for one bot, statement by
    statement, in the single server's forms and the Citus ones (ENGINE_ON_CITUS)."""
    bot = 920_001
    conn = await asyncpg.connect(migrated.url)
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    seen: dict[str, str] = {}

    async def attempt(name: str, sql: str, *args: Any) -> list[asyncpg.Record]:
        try:
            rows: list[asyncpg.Record] = await conn.fetch(sql, *args)
        except asyncpg.PostgresError as exc:
            seen[name] = _outcome(exc)
            return []
        seen[name] = "ok"
        return rows

    try:
        await conn.execute(ADD_BOT, bot)
        await attempt("inbox.INSERT", inbox.INSERT, bot, 1, "message", 42, {"message": {}})
        stored: tuple[Any, ...] = (bot, 2, "message", 42, {"message": {}})
        await attempt("inbox.INSERTS[True].one", inbox.INSERTS[True].one, *stored)
        await attempt("inbox.CLAIM", inbox.CLAIM, 10, 10, [bot], 30.0, 1)
        [taken] = await attempt(
            "inbox.one_bot(CLAIM)", inbox.one_bot(inbox.CLAIM), 10, 10, bot, 30.0, 1
        )
        calls: list[list[Any]] = [[42], ["sendMessage"], [{"chat_id": 42, "text": "hi"}], [0]]
        calls += [[datetime.now(UTC)], [None], [None]]
        await attempt(
            "inbox.DONE_AND_ENQUEUE",
            inbox.DONE_AND_ENQUEUE,
            bot,
            taken["id"],
            *calls,
            taken["attempts"],
        )
    finally:
        await conn.close()
    assert {name: said[: len(ENGINE_ON_CITUS[name])] for name, said in seen.items()} == (
        ENGINE_ON_CITUS
    )


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_down_stops_every_server_it_started(cluster: RunningCluster) -> None:
    pids = {node.pid for node in cluster.state.nodes}
    assert all(pid is not None and psutil.pid_exists(pid) for pid in pids)
    done = citus_kit.sponsorbot("citus", "down", "--data-dir", str(cluster.folder))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("stopped ") == 3
    assert [pid for pid in pids if pid is not None and _alive(pid)] == []
    # No server of ours is left on any of its data dirs.
    dirs = {str(Path(n.pgdata)) for n in cluster.state.nodes}
    left = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if dirs & set(p.info["cmdline"] or []) and _alive(p.pid)
    ]
    assert left == []
