"""`sponsorbot backup` and `sponsorbot restore` on real PostgreSQL.

A populated installation (two bots on the simulator, their content, a campaign, a visitor at
the gate, an owner, a day of statistics rolled up) is backed up through the CLI and restored
into a fresh data dir (the embedded server): every table holds the same rows, and `sponsorbot
run` starts on it and serves the bots and the campaign. Refusals: a backup of a newer schema,
an occupied database (bots or users) without --force, another application's tables even with
it, files that are not our backups, crafted archives that would unpack into more than they say.
A restore that fails at any point leaves the target as it was; a backup gives up behind a lock
held too long.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import types
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest

from sponsorbot.db.embedded import EmbeddedPostgres, dsn_for
from sponsorbot.db.migrate import load_migrations, migrate
from sponsorbot.demo.setup import api_token, ensure_owner
from sponsorbot.engine.bots import WRITE_KEY_CHECK
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.features.stats.rollup import roll_up
from sponsorbot.ops import backup_archive
from sponsorbot.ops.backup import make_backup
from sponsorbot.ops.backup_archive import DUMP, MANIFEST, BackupError, Manifest, write_archive
from sponsorbot.ops.backup_restore import EMPTY_SCHEMA, restore
from sponsorbot.ops.backup_tools import PgTool, libpq_target, pick, restore_script
from tests.debian_pg import DebianPostgres, debian_bin
from tests.integration.campaignkit import network
from tests.kit import SECRET, make_settings
from tests.processes import clean_environ, free_port, start, wait_healthy

pytestmark = pytest.mark.slow

NEWEST = max(m.version for m in load_migrations())
OTHER_SECRET = "another-installation-key-that-is-long-enough-0987654321"

# Every table's rows (the partitioned events through their parent), as a count and a digest;
# the function lives in the session's own temporary schema, so it changes nothing compared.
ROWS_OF = """
CREATE FUNCTION pg_temp.rows_of(name) RETURNS text LANGUAGE plpgsql AS $$
DECLARE result text;
BEGIN
    EXECUTE format('SELECT count(*) || '':'' || md5(coalesce(string_agg(t::text, E''\\n''
                    ORDER BY t::text), '''')) FROM public.%I t', $1) INTO result;
    RETURN result;
END $$
"""
FINGERPRINT = """
SELECT c.relname, pg_temp.rows_of(c.relname) AS rows
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
"""
SEQUENCES = "SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = 'public'"
RELATIONS = """
SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public'
"""
# A day and a half ago, hour by hour: what the roll-up folds into the statistics tables.
HISTORY = """
INSERT INTO events (bot_id, at, kind, user_id)
SELECT b.id, date_trunc('hour', now()) - interval '36 hours' + i * interval '37 minutes',
       'started', 5000 + i
FROM bots b, generate_series(1, 30) i
"""
COUNTS = """
SELECT (SELECT count(*) FROM bots) AS bots, (SELECT count(*) FROM contents) AS contents,
       (SELECT count(*) FROM campaigns) AS campaigns, (SELECT count(*) FROM users) AS users,
       (SELECT count(*) FROM stats_hourly) AS hourly, (SELECT count(*) FROM events) AS events,
       (SELECT count(*) FROM people) AS people
"""
A_BOT = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
VALUES ($1, $2, $3, 'xxxx', 'polling', $2, '')
"""
A_USER = "INSERT INTO users (email, name, role, password_hash) VALUES ($1, $1, 'owner', 'x')"
INVOICES = """
CREATE TABLE invoices (id int PRIMARY KEY, total numeric);
INSERT INTO invoices VALUES (1, 9.5)
"""


async def fingerprint(dsn: str) -> dict[str, Any]:
    """Every row of every table, the sequences and the relations of the database."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(ROWS_OF)
        rows = {r["relname"]: r["rows"] for r in await conn.fetch(FINGERPRINT)}
        sequences = {r["sequencename"]: r["last_value"] for r in await conn.fetch(SEQUENCES)}
        relations = sorted((r["relname"], r["relkind"]) for r in await conn.fetch(RELATIONS))
    finally:
        await conn.close()
    return {"rows": rows, "sequences": sequences, "relations": relations}


async def counts(dsn: str) -> dict[str, int]:
    """How many bots, contents, campaigns, users and statistics rows there are."""
    conn = await asyncpg.connect(dsn)
    try:
        return dict(await conn.fetchrow(COUNTS))
    finally:
        await conn.close()


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m sponsorbot ARGS` with only the settings given."""
    return subprocess.run(
        [sys.executable, "-m", "sponsorbot", *args],
        env=clean_environ(SPONSORBOT_LOG_LEVEL="WARNING", **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def refused(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a refusal prints (exit code 1, no traceback)."""
    assert done.returncode == 1, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("sponsorbot: ")
    return lines[0]


def get(url: str, token: str) -> Any:
    """GET an owner API page (of the product on loopback)."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})  # noqa: S310
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        return json.load(response)


async def populate(pool: asyncpg.Pool, dsn: str, tmp_path: Path) -> str:
    """Bots, content, a campaign, a visitor, an owner and statistics; returns an API token."""
    async with network(pool, dsn, tmp_path) as net:
        await net.campaign()
        await net.gate(await net.visitor())
    await ensure_owner(pool)
    _, token = await api_token(pool)
    await pool.execute("SELECT sponsorbot_events_month(now() - interval '36 hours')")
    await pool.execute(HISTORY)
    await roll_up(pool)
    return token


async def test_backup_then_restore_into_a_fresh_data_dir_and_run_on_it(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    token = await populate(pool, db_dsn, tmp_path)
    # A lease the old server's janitor held: the new server must not wait for it to expire.
    await pool.execute(
        "INSERT INTO leases (name, owner, expires_at) VALUES ('janitor', 'old-host', now() + "
        "interval '1 hour') ON CONFLICT (name) DO UPDATE SET expires_at = EXCLUDED.expires_at"
    )
    before = await counts(db_dsn)
    assert before["bots"] == 2 and before["contents"] == 2 and before["campaigns"] == 1
    assert before["users"] == 1 and before["people"] >= 1 and before["hourly"] > 0
    source = await fingerprint(db_dsn)

    archive = tmp_path / "backups" / "sponsorbot.tar"
    archive.parent.mkdir()
    made = cli("backup", str(archive), SPONSORBOT_DATABASE_URL=db_dsn, SPONSORBOT_SECRET_KEY=SECRET)
    assert made.returncode == 0, made.stderr
    assert "SPONSORBOT_SECRET_KEY" in made.stdout and "bot tokens" in made.stdout
    assert SECRET not in made.stdout + made.stderr
    assert archive.stat().st_mode & 0o777 == 0o600
    assert os.listdir(archive.parent) == [archive.name], "a temporary file was left behind"
    with tarfile.open(archive) as tar:
        assert tar.getnames() == [MANIFEST, DUMP]
        manifest = json.load(tar.extractfile(MANIFEST))  # type: ignore[arg-type]
    assert manifest["migration"] == NEWEST and manifest["format"] == "sponsorbot-backup"
    assert manifest["database"] == urlsplit(db_dsn).path.lstrip("/")

    data = tmp_path / "fresh"
    env = {"SPONSORBOT_DATA_DIR": str(data), "SPONSORBOT_SECRET_KEY": SECRET}
    done = cli("restore", str(archive), **env)
    assert done.returncode == 0, done.stderr
    assert "2 bot(s), 1 user(s)" in done.stdout
    assert "the secret key here opens the bot tokens" in done.stdout
    server = EmbeddedPostgres(data)
    restored = server.start()
    try:
        after = await fingerprint(restored)
    finally:
        server.release()
    # Row counts and digests: none left after the restore, one (at least) before.
    assert after["rows"].pop("leases").startswith("0:")
    assert not source["rows"].pop("leases").startswith("0:")
    assert after == source

    port = free_port()
    telegram = f"http://127.0.0.1:{free_port()}"  # nobody there: the bots just cannot poll
    env.update(SPONSORBOT_PORT=str(port), SPONSORBOT_TELEGRAM_API=telegram)
    run = start("run", env=clean_environ(**env), log=tmp_path / "run.log")
    try:
        wait_healthy(port, run)
        bots = get(f"http://127.0.0.1:{port}/api/v1/bots", token)
        campaigns = get(f"http://127.0.0.1:{port}/api/v1/campaigns", token)
    finally:
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=20)
    assert {b["username"] for b in bots["items"]} == {"net0_bot", "net1_bot"}
    assert [c["name"] for c in campaigns["items"]] == ["Winter sponsor"]
    assert run.returncode == 0, (tmp_path / "run.log").read_text()


async def _backup(dsn: str, tmp_path: Path, name: str = "b.tar") -> Path:
    archive = tmp_path / name
    await make_backup(make_settings(dsn, "http://127.0.0.1:9", tmp_path), archive, print)
    return archive


def _rewrite(archive: Path, **changes: Any) -> None:
    """The same dump under a manifest with `changes`."""
    with tarfile.open(archive) as tar:
        manifest = Manifest.from_json(tar.extractfile(MANIFEST).read(), "x")  # type: ignore[union-attr]
        dump = archive.with_name("dump")
        dump.write_bytes(tar.extractfile(DUMP).read())  # type: ignore[union-attr]
    fields = {**manifest.__dict__, **changes}
    write_archive(archive, Manifest(**fields), dump)


async def test_a_backup_of_a_newer_version_is_refused(
    db_dsn: str, empty_dsn: str, tmp_path: Path
) -> None:
    archive = await _backup(db_dsn, tmp_path)
    _rewrite(archive, migration=NEWEST + 1, product_version="9.9.9")
    line = refused(cli("restore", str(archive), SPONSORBOT_DATABASE_URL=empty_dsn))
    assert "made by a newer version of Sponsorbot (9.9.9" in line
    assert "update Sponsorbot first" in line
    assert (await fingerprint(empty_dsn))["relations"] == [], "the target was touched"


async def test_an_occupied_database_is_refused_unless_forced(
    pool: asyncpg.Pool, db_dsn: str, empty_dsn: str, tmp_path: Path
) -> None:
    box = TokenBox(SECRET.encode())
    await pool.execute(WRITE_KEY_CHECK, box.seal("sponsorbot-key-check"))
    await pool.execute(A_BOT, 101, "kept_bot", box.seal("101:" + "a" * 35))
    await pool.execute(A_USER, "owner@backup.test")
    archive = await _backup(db_dsn, tmp_path)
    source = await fingerprint(db_dsn)

    occupied = await _occupied_target(empty_dsn)
    env = {"SPONSORBOT_DATABASE_URL": empty_dsn, "SPONSORBOT_SECRET_KEY": OTHER_SECRET}

    line = refused(cli("restore", str(archive), **env))
    assert "already holds 1 bot(s) and 1 user(s)" in line and "--force" in line
    assert await fingerprint(empty_dsn) == occupied

    done = cli("restore", str(archive), "--force", **env)
    assert done.returncode == 0, done.stderr
    assert "replaced what the database held (1 bot(s), 1 user(s))" in done.stdout
    assert "warning: the secret key here (SPONSORBOT_SECRET_KEY" in done.stdout
    assert "does not open the backup's bot tokens" in done.stdout
    assert await fingerprint(empty_dsn) == source


async def test_an_older_backup_is_migrated_after_restore_and_a_missing_key_is_a_warning(
    empty_dsn: str, db_dsn: str, tmp_path: Path, clean_env: Path
) -> None:
    conn = await asyncpg.connect(empty_dsn)
    try:
        await migrate(conn, load_migrations()[: NEWEST - 2])
        await conn.execute(WRITE_KEY_CHECK, TokenBox(SECRET.encode()).seal("check"))
    finally:
        await conn.close()
    archive = await _backup(empty_dsn, tmp_path)
    said: list[str] = []
    data = tmp_path / "no-key"
    settings = make_settings(db_dsn, "http://127.0.0.1:9", data, secret_key=None)
    await restore(settings, archive, False, said.append)
    printed = "\n".join(said)
    assert f"applied migration(s) {NEWEST - 1}, {NEWEST}" in printed
    assert "warning: there is no secret key here" in printed
    assert str(data / "secret.key") in printed
    assert not (data / "secret.key").exists(), "restore made a key of its own"
    conn = await asyncpg.connect(db_dsn)
    try:
        assert await conn.fetchval("SELECT max(version) FROM schema_migrations") == NEWEST
    finally:
        await conn.close()


async def test_files_that_are_not_our_backups_are_refused(
    db_dsn: str, empty_dsn: str, tmp_path: Path, clean_env: Path
) -> None:
    garbage = tmp_path / "garbage.tar"
    garbage.write_bytes(os.urandom(4096))
    line = refused(cli("restore", str(garbage), SPONSORBOT_DATABASE_URL=empty_dsn))
    assert line == (
        f"sponsorbot: {garbage} is not a Sponsorbot backup "
        "(not an archive written by sponsorbot backup)"
    )

    foreign = tmp_path / "foreign.tar"
    with tarfile.open(foreign, "w") as tar:
        text = b'{"format": "something-else"}'
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    real = await _backup(db_dsn, tmp_path)
    cut = tmp_path / "cut.tar"
    cut.write_bytes(real.read_bytes()[: real.stat().st_size // 2])
    damaged = tmp_path / "damaged.tar"
    _rewrite(real, dump_sha256="0" * 64)
    real.rename(damaged)
    settings = make_settings(empty_dsn, "http://127.0.0.1:9", tmp_path)
    for path, why in [
        (foreign, "is not a Sponsorbot backup (its manifest is someone else's)"),
        (cut, "is damaged"),
        (damaged, "is damaged (the dump does not match its checksum)"),
        (tmp_path / "missing.tar", "does not exist"),
        (tmp_path, "is not a file"),
    ]:
        with pytest.raises(BackupError, match=r"^" + str(path).replace(".", r"\.")) as caught:
            await restore(settings, path, False, print)
        assert why in str(caught.value)
    assert (await fingerprint(empty_dsn))["relations"] == [], "the target was touched"


@pytest.mark.skipif(debian_bin() is None, reason="Debian's postgresql package is not installed")
async def test_a_backup_of_the_embedded_server_restores_into_debians_older_one(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, clean_env: Path
) -> None:
    box = TokenBox(SECRET.encode())
    await pool.execute(A_BOT, 303, "moved_bot", box.seal("303:" + "b" * 35))
    archive = await _backup(db_dsn, tmp_path)
    debian = DebianPostgres()
    uri = debian.start()
    try:
        admin = await asyncpg.connect(uri)
        await admin.execute("CREATE DATABASE moved")
        await admin.close()
        target = dsn_for(uri, "moved")
        said: list[str] = []
        await restore(
            make_settings(target, "http://127.0.0.1:9", tmp_path), archive, False, said.append
        )
        assert "1 bot(s), 0 user(s)" in "\n".join(said)
        assert (await fingerprint(target))["rows"] == (await fingerprint(db_dsn))["rows"]
    finally:
        debian.stop()


def test_the_password_goes_to_the_environment_not_the_command_line() -> None:
    uri, env = libpq_target("postgresql://app:p%40ss%3Aw%2Frd@db.internal:5433/sb?sslmode=require")
    assert uri == "postgresql://app@db.internal:5433/sb?sslmode=require"
    assert env["PGPASSWORD"] == "p@ss:w/rd"
    uri, env = libpq_target("postgresql://app@/sb?host=/run/pg&password=s%26cret&port=5432")
    assert uri == "postgresql://app@/sb?host=/run/pg&port=5432"
    assert env["PGPASSWORD"] == "s&cret"
    uri, env = libpq_target("postgresql://postgres:@/postgres?host=/tmp/x")
    assert uri == "postgresql://postgres@/postgres?host=/tmp/x" and "PGPASSWORD" not in env


async def _occupied_target(dsn: str) -> dict[str, Any]:
    """A migrated database with a bot and a user of its own; its fingerprint."""
    conn = await asyncpg.connect(dsn)
    try:
        await migrate(conn)
        await conn.execute(A_BOT, 202, "other_bot", b"")
        await conn.execute(A_USER, "someone@else.test")
    finally:
        await conn.close()
    return await fingerprint(dsn)


async def test_a_restore_that_fails_leaves_the_target_as_it_was(
    db_dsn: str, empty_dsn: str, tmp_path: Path
) -> None:
    # The backup holds a schema `extra` that the target has too: psql fails on it, after the
    # statement that empties the target's public schema.
    await _execute(db_dsn, "CREATE SCHEMA extra")
    archive = await _backup(db_dsn, tmp_path)
    newer = tmp_path / "newer" / "b.tar"
    newer.parent.mkdir()
    shutil.copy(archive, newer)
    _rewrite(newer, pg_dump_version="99.0")
    occupied = await _occupied_target(empty_dsn)
    await _execute(empty_dsn, "CREATE SCHEMA extra")
    settings = make_settings(empty_dsn, "http://127.0.0.1:9", tmp_path)

    with pytest.raises(BackupError, match="pg_restore of PostgreSQL 99 or newer is needed"):
        await restore(settings, newer, True, print)
    assert await fingerprint(empty_dsn) == occupied
    with pytest.raises(BackupError) as caught:
        await restore(settings, archive, True, print)
    assert 'schema "extra" already exists' in str(caught.value)
    assert str(caught.value).endswith(
        "(nothing was changed: the database holds what it held before)"
    )
    assert await fingerprint(empty_dsn) == occupied


async def test_a_pg_restore_that_stops_half_way_commits_nothing(
    empty_dsn: str, tmp_path: Path
) -> None:
    occupied = await _occupied_target(empty_dsn)
    real = pick("pg_restore", 15, 15)
    # A pg_restore whose script ends early and well-formed, then fails: psql alone would
    # run to the end of its input without an error.
    tools = tmp_path / "bin"
    tools.mkdir()
    fake = tools / "pg_restore"
    fake.write_text(
        "#!/bin/sh\necho 'CREATE TABLE half (id int);'\necho 'pg_restore: error: cut' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    (tools / "psql").symlink_to(real.path.parent / "psql")
    uri, env = libpq_target(empty_dsn)
    with pytest.raises(BackupError, match=r"^pg_restore \S+ \(.*\) failed: cut$"):
        await restore_script(PgTool(fake, real.version), tmp_path / "x", uri, env, 18, EMPTY_SCHEMA)
    assert await fingerprint(empty_dsn) == occupied


async def test_a_database_with_tables_that_are_not_sponsorbots_is_refused_even_forced(
    db_dsn: str, empty_dsn: str, tmp_path: Path, clean_env: Path
) -> None:
    """The restore empties the public schema: another application's tables are never dropped."""
    archive = await _backup(db_dsn, tmp_path)
    await _execute(empty_dsn, INVOICES)
    foreign = await fingerprint(empty_dsn)
    for force in ((), ("--force",)):
        line = refused(cli("restore", str(archive), *force, SPONSORBOT_DATABASE_URL=empty_dsn))
        assert "holds tables that are not Sponsorbot's (invoices)" in line
        assert "never drops what it did not make" in line
        assert await fingerprint(empty_dsn) == foreign

    # Sponsorbot's tables beside another application's, without a bot or a user: refused too.
    conn = await asyncpg.connect(empty_dsn)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    settings = make_settings(empty_dsn, "http://127.0.0.1:9", tmp_path)
    for forced in (False, True):
        with pytest.raises(BackupError, match=r"not Sponsorbot's \(invoices\)"):
            await restore(settings, archive, forced, print)
        assert ("invoices", b"r") in (await fingerprint(empty_dsn))["relations"]


def _crafted(path: Path, dump: Path, dump_bytes: int, sha256: str, *tar_options: str) -> None:
    """An archive of `dump` (by GNU tar, with its options) under a manifest saying the rest."""
    manifest = Manifest(
        "0.1.0", 1, "2025-01-01T00:00:00+00:00", "18.0", "x", "18.0", sha256, dump_bytes
    )
    (dump.parent / MANIFEST).write_text(manifest.to_json())
    subprocess.run(
        ["tar", *tar_options, "-cf", str(path), "-C", str(dump.parent), MANIFEST, dump.name],
        check=True,
    )


@pytest.mark.skipif(shutil.which("tar") is None, reason="GNU tar is not installed")
async def test_an_archive_is_never_unpacked_into_more_than_its_manifest_says(
    db_dsn: str, empty_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings(empty_dsn, "http://127.0.0.1:9", tmp_path)
    parts = tmp_path / "parts"
    parts.mkdir()
    sparse = parts / DUMP
    size = 64 * 1024 * 1024
    sparse.touch()
    os.truncate(sparse, size)
    zeros = hashlib.sha256(bytes(size)).hexdigest()
    small = tmp_path / "sparse" / "b.tar"
    small.parent.mkdir()
    _crafted(small, sparse, size, zeros, "--sparse")
    assert small.stat().st_size < 64 * 1024
    with pytest.raises(BackupError, match=r"database\.dump is a sparse or special member"):
        await restore(settings, small, False, print)
    assert os.listdir(small.parent) == ["b.tar"], "a work directory was left behind"

    real = await _backup(db_dsn, tmp_path)
    with tarfile.open(real) as tar:
        sparse.write_bytes(tar.extractfile(DUMP).read())  # type: ignore[union-attr]
    whole = sparse.stat().st_size
    lying = tmp_path / "lying.tar"
    _crafted(lying, sparse, 1000, backup_archive.sha256_of(sparse))
    with pytest.raises(BackupError, match=f"holds {whole} bytes, its manifest says 1000"):
        await restore(settings, lying, False, print)

    # A disk with one byte free: whatever the dump's size, there is no room for it.
    full = types.SimpleNamespace(total=1, used=0, free=1)
    monkeypatch.setattr(shutil, "disk_usage", lambda _: full)
    with pytest.raises(BackupError, match="no room to unpack the dump of"):
        await restore(settings, real, False, print)
    assert (await fingerprint(empty_dsn))["relations"] == [], "the target was touched"


async def test_a_backup_gives_up_behind_a_lock_held_too_long(db_dsn: str, tmp_path: Path) -> None:
    migration = await asyncpg.connect(db_dsn)
    try:
        await migration.execute("BEGIN; LOCK TABLE bots IN ACCESS EXCLUSIVE MODE")
        settings = make_settings(db_dsn, "http://127.0.0.1:9", tmp_path)
        archive = tmp_path / "b.tar"
        with pytest.raises(BackupError) as caught:
            await asyncio.wait_for(make_backup(settings, archive, print, lock_wait_s=1), 20)
    finally:
        await migration.close()
    assert str(caught.value) == (
        "another client (a migration, an update?) held a table locked for more than 1 s, "
        "so nothing was backed up: try again once it is done"
    )
    assert os.listdir(tmp_path) == [], "a file was left behind"


async def _execute(dsn: str, sql: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()
