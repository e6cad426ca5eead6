"""`sponsorbot backup` and `restore` on a Citus cluster: the backup holds the workers' rows, read
through the coordinator; it is refused while Sponsorbot runs (no snapshot spans the nodes); it
is restored into a new database of the cluster, distributed again; a database that already
holds Sponsorbot's tables is refused.

Runs in the Citus tier only (SPONSORBOT_TEST_POSTGRES=citus); on one server tests/integration/
test_backup.py covers the same commands.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from sponsorbot.db.embedded import dsn_for
from sponsorbot.ops.backup import make_backup
from sponsorbot.ops.backup_archive import BackupError
from sponsorbot.ops.backup_restore import restore
from sponsorbot.ops.citus import DATABASE
from tests.conftest import CITUS
from tests.integration.citus_kit import _NODE_PORTS, _create_on, _port_of
from tests.kit import make_settings

pytestmark = pytest.mark.skipif(
    not CITUS, reason="runs on a Citus cluster (SPONSORBOT_TEST_POSTGRES=citus)"
)

SEED = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
SELECT b, 'backup_bot_' || b, '', 'xxxx', 'polling', 'backup-' || b, ''
FROM generate_series(1, 6) b;
INSERT INTO people (bot_id, user_id, language)
SELECT b, 7000 + u, CASE WHEN u % 2 = 0 THEN 'fa' ELSE 'en' END
FROM generate_series(1, 6) b, generate_series(1, 25) u;
INSERT INTO events (bot_id, kind, user_id) SELECT bot_id, 'started', user_id FROM people;
INSERT INTO users (email, name, role, password_hash) VALUES ('o@example.com', 'o', 'owner', 'x')
"""
# What the two databases are compared by: rows a table, and a digest of the people's rows.
COUNTS = """
SELECT (SELECT count(*) FROM bots) AS bots, (SELECT count(*) FROM people) AS people,
       (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM users) AS users,
       (SELECT sum(hashtext(bot_id || '/' || user_id || '/' || language)) FROM people) AS digest
"""
# The people table's method in Citus's metadata: 'h' when distributed (by hash).
PEOPLE_METHOD = (
    "SELECT partmethod::text FROM pg_dist_partition WHERE logicalrelid = 'people'::regclass"
)
# The people's rows on the workers' shards, not on the coordinator.
ON_WORKERS = """
SELECT count(*) FROM citus_shards WHERE table_name = 'people'::regclass AND nodeport <> $1
"""


async def _counts(dsn: str) -> dict[str, int]:
    conn = await asyncpg.connect(dsn)
    try:
        return dict(await conn.fetchrow(COUNTS))
    finally:
        await conn.close()


@pytest.fixture
async def new_database(pg_uri: str) -> AsyncIterator[str]:
    """A new database on every node of the cluster, with citus and the workers registered."""
    name = f"restore_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(dsn_for(pg_uri, DATABASE))
    try:
        ports = [r["nodeport"] for r in await conn.fetch(_NODE_PORTS)]
    finally:
        await conn.close()
    await asyncio.gather(*(_create_on(pg_uri, port, name) for port in ports))
    dsn = dsn_for(pg_uri, name)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"SELECT citus_set_coordinator_host('127.0.0.1', {ports[0]})")
        for port in ports[1:]:
            await conn.execute(f"SELECT citus_add_node('127.0.0.1', {port})")
    finally:
        await conn.close()
    yield dsn
    for port in ports:
        admin = await asyncpg.connect(pg_uri.replace(f":{_port_of(pg_uri)}/", f":{port}/"))
        try:
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        finally:
            await admin.close()


async def test_a_cluster_is_backed_up_through_the_coordinator_and_restored_into_a_new_database(
    db_dsn: str, new_database: str, tmp_path: Path
) -> None:
    seed = await asyncpg.connect(db_dsn)
    try:
        await seed.execute(SEED)
        coordinator = int(await seed.fetchval("SELECT inet_server_port()"))
        assert await seed.fetchval(ON_WORKERS, coordinator) > 0
    finally:
        await seed.close()
    before = await _counts(db_dsn)
    assert (before["bots"], before["people"], before["events"], before["users"]) == (6, 150, 150, 1)
    said: list[str] = []
    archive = tmp_path / "cluster.tar"
    source = make_settings(db_dsn, "http://127.0.0.1:9", tmp_path / "source")

    # A worker of Sponsorbot is connected: the shards would be read at different moments.
    worker = await asyncpg.connect(
        db_dsn, server_settings={"application_name": "sponsorbot-worker"}
    )
    try:
        with pytest.raises(BackupError, match="Citus cluster and Sponsorbot is running"):
            await make_backup(source, archive, said.append)
    finally:
        await worker.close()
    assert not archive.exists()

    await make_backup(source, archive, said.append)
    target = make_settings(new_database, "http://127.0.0.1:9", tmp_path / "target")
    await restore(target, archive, False, said.append)
    assert await _counts(new_database) == before
    check = await asyncpg.connect(new_database)
    try:
        # Distributed again by the migrations, the rows on the workers.
        assert await check.fetchval(PEOPLE_METHOD) == "h"
        assert await check.fetchval(ON_WORKERS, coordinator) > 0
    finally:
        await check.close()

    # A second restore into it: refused, --force included, nothing changed.
    with pytest.raises(BackupError, match="restored into a new database only"):
        await restore(target, archive, True, said.append)
    assert await _counts(new_database) == before
