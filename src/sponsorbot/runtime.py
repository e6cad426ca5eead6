"""What `sponsorbot run` starts: the roles, the signals, an orderly shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import uvicorn

from sponsorbot.config import Role, Settings
from sponsorbot.db.database import Database, open_database
from sponsorbot.engine.bots import KeyMismatch
from sponsorbot.engine.core import Engine
from sponsorbot.engine.routing import Router
from sponsorbot.features.all import install as install_features
from sponsorbot.features.base import Features
from sponsorbot.web.app import create_app
from sponsorbot.web.panel import announce_setup_code

log = logging.getLogger(__name__)


class StartupError(Exception):
    """A role could not start (the port is taken, the database refused us)."""


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: this module owns SIGTERM and SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


_T = TypeVar("_T")


def run_async(main: Coroutine[Any, Any, _T]) -> _T:
    """Run a coroutine on uvloop when it is installed; what it returns."""
    # Everything imported so far lives as long as the process: keep it out of the collector's
    # way, and collect the young generation less often (py-spy on a loaded worker: 7% of its
    # time was the cyclic garbage collector walking long-lived objects).
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    else:
        return uvloop.run(main)


async def run_roles(
    settings: Settings, roles: frozenset[Role], router: Router | None = None
) -> None:
    """Open the database, migrate, run the roles until SIGTERM/SIGINT, then stop them in order.

    The features are set up here, once (a test may pass its own `router` instead of them).
    """
    name = "+".join(sorted(r.value for r in roles))
    async with open_database(settings, name) as db:
        if Role.API in roles:
            await announce_setup_code(db.pool)
        engine = Engine(settings, db.pool, db.dsn, router)
        try:
            await engine.bots.check_key()
        except KeyMismatch as exc:
            raise StartupError(str(exc)) from None
        features = install_features(engine) if router is None else None
        try:
            await _serve(settings, db, engine, features, roles)
        finally:
            await engine.close()


async def _serve(
    settings: Settings,
    db: Database,
    engine: Engine,
    features: Features | None,
    roles: frozenset[Role],
) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tasks: dict[str, asyncio.Task[Any]] = {}
    server: _Server | None = None
    if Role.API in roles:
        if features is None:
            raise StartupError("the api role needs the features")
        config = uvicorn.Config(
            create_app(settings, db, features),
            host=settings.host,
            port=settings.port,
            log_config=None,
            access_log=False,
            # Forwarding headers are believed only from SPONSORBOT_TRUSTED_PROXIES, by the
            # panel itself: uvicorn would otherwise trust them from 127.0.0.1.
            proxy_headers=False,
            lifespan="off",
            timeout_graceful_shutdown=max(1, int(settings.shutdown_grace_s / 2)),
        )
        server = _Server(config)
        tasks["api"] = asyncio.create_task(server.serve(), name="api")
    if Role.WORKER in roles:
        tasks["worker"] = asyncio.create_task(engine.run_worker(stop), name="worker")
    else:
        engine.listen()
    stopper = asyncio.create_task(stop.wait())
    try:
        done, _ = await asyncio.wait([stopper, *tasks.values()], return_when="FIRST_COMPLETED")
        failed = [t for t in done if t is not stopper]
        if server is not None and tasks["api"] in failed and not server.started:
            raise StartupError(f"the api role could not listen on {settings.host}:{settings.port}")
        log.info("stopping: %s", ", ".join(tasks))
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        stop.set()
        if server is not None:
            server.should_exit = True
        _, pending = await asyncio.wait(
            [*tasks.values(), stopper], timeout=settings.shutdown_grace_s
        )
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
