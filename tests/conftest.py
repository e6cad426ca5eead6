"""Test infrastructure: tiers, one throwaway PostgreSQL per run, a fresh database per test.

Tiers (docs/testing.md): plain `pytest` runs every test that stays in this process, real
PostgreSQL included; `slow`, `browser`, `external` and `fuzz` tests run when asked for by
`-m` (`.ci/run` runs them all). A run with pytest-xdist workers (`-n 4`, the default) shares
one server started by the controller; each worker migrates its own template database, and
every database test gets its own database cloned from it.

Set SPONSORBOT_TEST_DATABASE_URL to use another server instead (it is used as it is), or
SPONSORBOT_TEST_POSTGRES=debian for a throwaway cluster of Debian's `postgresql` package (15 on
Debian 12: the oldest major version we support), or SPONSORBOT_TEST_POSTGRES=citus for a Citus
cluster, its tests' databases distributed (tests/integration/citus_kit.py).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import asyncpg
import pytest
from argon2 import PasswordHasher
from hypothesis import settings as hypothesis_settings

from sponsorbot.db.embedded import EmbeddedPostgres, dsn_for
from sponsorbot.db.migrate import migrate
from sponsorbot.db.pool import connect, create_pool
from sponsorbot.features.accounts.security import use_password_hasher
from sponsorbot.web.panel import i18n
from tests.debian_pg import DebianPostgres
from tests.examples import DEV
from tests.integration.citus_kit import CitusDatabases, TestCluster, tier_skip

URL_VARIABLE = "SPONSORBOT_TEST_DATABASE_URL"
# The integration tests against a Citus cluster of 1 coordinator and 2 workers (the citus step
# of .ci/run; tests/integration/citus_kit.py).
CITUS = os.environ.get("SPONSORBOT_TEST_POSTGRES") == "citus"
# Each xdist worker migrates a template of its own, so no clone waits on another's migration.
TEMPLATE = f"sponsorbot_template_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"

# Tests under these paths belong to a tier whatever their own marks say, so a new file there
# cannot forget its mark. Paths are relative to the repository.
TIER_PATHS: dict[str, tuple[str, ...]] = {
    "browser": ("tests/browser/",),
    "external": (
        "tests/simulator/conformance/",
        "tests/unit/test_shipping",
        "tests/integration/test_native_stack.py",
        "tests/integration/test_pg_restart.py",
    ),
    "fuzz": ("tests/integration/test_api_fuzz.py",),
}

# Under xdist, a test marked xdist_group runs on the same worker as the rest of its group:
# these modules share an expensive module-scoped fixture (a demo, venvs, an installed stack),
# which each worker would otherwise build again. The conformance clients also share
# ~/.cache/sponsorbot-peer with the load test's aiogram peer.
GROUPS: dict[str, tuple[str, ...]] = {
    "peer-venvs": ("tests/simulator/conformance/",),
    "demo-history": ("tests/integration/test_demo_history.py",),
    "native-stack": ("tests/integration/test_native_stack.py",),
    "shipping": ("tests/unit/test_shipping.py", "tests/unit/test_shipping_scripts.py"),
}

# Hypothesis: few examples while developing, today's full counts in CI's `thorough` pass
# (tests/examples.py caps the counts a test names itself).
hypothesis_settings.register_profile("dev", max_examples=DEV)
hypothesis_settings.register_profile("thorough", max_examples=100)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Production argon2 takes 64 MiB and tens of milliseconds a hash; the tests hash hundreds of
# passwords. tests/unit/test_panel_security.py checks the production parameters themselves.
use_password_hasher(PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark tests by where they live, and property tests as `property`."""
    for item in items:
        where = item.path.relative_to(config.rootpath).as_posix()
        for mark, prefixes in TIER_PATHS.items():
            if where.startswith(prefixes):
                item.add_marker(mark)
        for group, prefixes in GROUPS.items():
            if where.startswith(prefixes):
                item.add_marker(pytest.mark.xdist_group(group))
        if getattr(getattr(item, "function", None), "is_hypothesis_test", False):
            item.add_marker("property")
        skip = tier_skip(item.nodeid) if CITUS and "citus" not in item.keywords else None
        if skip is not None:
            item.add_marker(pytest.mark.skip(reason=skip))


class _Server:
    """The run's own throwaway server: embedded, or Debian's when asked for."""

    def __init__(self) -> None:
        self._stop: Callable[[], None]
        if CITUS:
            cluster = TestCluster()
            self.uri = cluster.uri
            self._stop = cluster.stop
        elif os.environ.get("SPONSORBOT_TEST_POSTGRES") == "debian":
            debian = DebianPostgres()
            self.uri = debian.start()
            self._stop = debian.stop
            _settle(self.uri)
        else:
            # Not under pytest's own temporary folder: as root, the server runs as another user
            # that needs every folder above its data open to it, and each new pytest session
            # closes /tmp/pytest-of-root again (0700), which would kill a running suite's server.
            folder = Path(tempfile.mkdtemp(prefix="sponsorbot-test-pg-"))
            server = EmbeddedPostgres(folder)

            def stop() -> None:
                server.release()
                shutil.rmtree(folder, ignore_errors=True)

            _settle(server.start())
            # max_connections is read at start only: the second start takes it.
            server.release()
            self.uri = server.start()
            self._stop = stop

    def stop(self) -> None:
        """Stop the server and remove its files."""
        self._stop()


# Settings of the run's own server. It need not survive a crash: no fsync, no waiting for the
# WAL (a test that restarts a server has one of its own, tests/debian_pg.py). And parallel
# workers' slow tests each start several processes with pools of up to 20 connections: the
# default of 100 ran out in a run on 2 workers, and a refused connection looked like a bug.
SERVER_SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "400",
}


def _settle(uri: str) -> None:
    """Write SERVER_SETTINGS into the server's configuration and reload it."""

    async def alter() -> None:
        conn = await asyncpg.connect(uri)
        try:
            for name, value in SERVER_SETTINGS.items():
                await conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
            await conn.execute("SELECT pg_reload_conf()")
        finally:
            await conn.close()

    # A loop of its own, never installed as the current one: pytest-asyncio owns that.
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(alter())
    finally:
        loop.close()


def _distributes(config: pytest.Config) -> bool:
    """True in the controller of a run that hands tests to xdist workers."""
    return (
        not hasattr(config, "workerinput")
        and config.pluginmanager.hasplugin("xdist")
        and getattr(config.option, "dist", "no") != "no"
        and bool(getattr(config.option, "numprocesses", 0))
    )


_SERVER = pytest.StashKey[_Server]()


def pytest_configure(config: pytest.Config) -> None:
    """The controller of a parallel run starts one server for all its workers."""
    if _distributes(config) and not os.environ.get(URL_VARIABLE):
        server = _Server()
        config.stash[_SERVER] = server
        # The workers start after this and inherit it.
        os.environ[URL_VARIABLE] = server.uri


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the server the controller started."""
    server = config.stash.get(_SERVER, None)
    if server is not None:
        os.environ.pop(URL_VARIABLE, None)
        server.stop()


@pytest.fixture(autouse=True)
def _panel_speaks_english() -> Iterator[None]:
    """The panel's language is a context variable: set by a synchronous test, it stays set for
    every later test in the same worker. Each test starts in English, whatever ran before."""
    i18n.use_language("en")
    yield
    i18n.use_language("en")


@pytest.fixture(scope="session")
def pg_uri() -> Iterator[str]:
    """The URI of the session's PostgreSQL server (its maintenance database)."""
    url = os.environ.get(URL_VARIABLE)
    if url:
        yield url
        return
    server = _Server()
    try:
        yield server.uri
    finally:
        server.stop()


@pytest.fixture(scope="session")
async def template_db(pg_uri: str) -> str:
    """A database migrated once, cloned by every test."""
    if CITUS:
        return ""
    admin = await asyncpg.connect(pg_uri)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {TEMPLATE}")
    finally:
        await admin.close()
    conn = await connect(dsn_for(pg_uri, TEMPLATE))
    try:
        await migrate(conn)
    finally:
        await conn.close()
    return TEMPLATE


class Databases:
    """Databases for the tests: each cloned one test ahead, and dropped after, in the background.

    A clone of the migrated template takes the server a few hundred milliseconds of disk work,
    a fifth of the fast tier's time when each test waited for its own; made while the test
    before runs, it is usually ready when asked for.
    """

    def __init__(self, admin: asyncpg.Pool, template: str) -> None:
        self._admin = admin
        self._template = template
        self._ahead: asyncio.Task[str] | None = None
        self._drops: set[asyncio.Task[None]] = set()

    async def take(self) -> str:
        """A new database's name; the next one starts cloning at once."""
        ready = self._ahead or asyncio.create_task(self._create())
        self._ahead = asyncio.create_task(self._create())
        return await ready

    def give_back(self, name: str) -> None:
        """Drop a database taken earlier, without waiting."""
        task = asyncio.create_task(self._drop(name))
        self._drops.add(task)
        task.add_done_callback(self._drops.discard)

    async def close(self) -> None:
        """Drop the database made ahead and wait for every drop."""
        if self._ahead is not None:
            name = await self._ahead
            self._ahead = None
            await self._drop(name)
        await asyncio.gather(*self._drops)

    async def _create(self) -> str:
        name = f"t_{uuid.uuid4().hex[:16]}"
        await self._admin.execute(f"CREATE DATABASE {name} TEMPLATE {self._template}")
        return name

    async def _drop(self, name: str) -> None:
        await self._admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
async def migrated_databases(
    pg_uri: str, template_db: str
) -> AsyncIterator[Databases | CitusDatabases]:
    """The session's source of migrated databases."""
    if CITUS:
        on_cluster = CitusDatabases(pg_uri)
        await on_cluster.open()
        yield on_cluster
        await on_cluster.close()
        return
    admin = await asyncpg.create_pool(pg_uri, min_size=1, max_size=3)
    databases = Databases(admin, template_db)
    try:
        yield databases
    finally:
        await databases.close()
        await admin.close()


@pytest.fixture
async def empty_dsn(pg_uri: str) -> AsyncIterator[str]:
    """A new, empty database (for migration tests)."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    admin = await asyncpg.connect(pg_uri)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
        yield dsn_for(pg_uri, name)
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()


@pytest.fixture
async def db_dsn(pg_uri: str, migrated_databases: Databases | CitusDatabases) -> AsyncIterator[str]:
    """A new database with every migration applied."""
    name = await migrated_databases.take()
    yield dsn_for(pg_uri, name)
    migrated_databases.give_back(name)


@pytest.fixture
async def pool(db_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on the test's own migrated database."""
    p = await create_pool(db_dsn, role="test", min_size=1, max_size=10)
    yield p
    await p.close()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No SPONSORBOT_ variables from the outside, and a data dir of the test's own."""
    for key in list(os.environ):
        if key.startswith("SPONSORBOT_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return tmp_path
