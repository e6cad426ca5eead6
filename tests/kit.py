"""Shared pieces for engine and feature tests: a simulator, settings, a running engine."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.config import Settings
from sponsorbot.engine.core import Engine
from sponsorbot.engine.routing import Router
from sponsorbot.simulator.client import SimulatorClient
from sponsorbot.simulator.server import create_app
from tests.loopback import served
from tests.processes import free_port

SECRET = "test-secret-key-that-is-long-enough-1234567890"


@dataclass
class Telegram:
    """A simulated Telegram running in this process, reached over real HTTP."""

    url: str
    sim: SimulatorClient


@contextlib.asynccontextmanager
async def simulated_telegram(**options: Any) -> AsyncIterator[Telegram]:
    """Start the simulator on a free loopback port for the duration of the block.

    The one simulator starter of the tests: it binds port 0 and reads the port back, so two
    starts never race for a port.
    """
    options.setdefault("seed", 11)
    options.setdefault("webhook_retry_base", 0.05)
    async with served(create_app(**options), shutdown_timeout=0.5) as url:
        client = SimulatorClient(url)
        try:
            yield Telegram(url, client)
        finally:
            await client.close()


def tron_urls(url: str) -> dict[str, str]:
    """TronGrid and every price source pointed at `url`: the simulator, or nobody."""
    names = ("trongrid_url", "price_coingecko_url", "price_kraken_url", "price_binance_url")
    return dict.fromkeys(names, url)


def make_settings(dsn: str, telegram_url: str, data_dir: Path, **overrides: Any) -> Settings:
    """Settings for a test engine: fast retries, short locks where asked."""
    values: dict[str, Any] = {
        "database_url": dsn,
        "telegram_api": telegram_url,
        "data_dir": data_dir,
        "secret_key": SECRET,
        "pool_min_size": 1,
        "pool_max_size": 10,
    }
    values.update(overrides)
    return Settings(**values)


@dataclass
class RunningEngine:
    """An engine whose worker loop runs in a task until the block ends."""

    engine: Engine
    stop: asyncio.Event
    task: asyncio.Task[None] | None

    async def halt(self) -> None:
        """Stop the worker loop and wait for it."""
        self.stop.set()
        if self.task is not None:
            await self.task


@contextlib.asynccontextmanager
async def running_engine(
    settings: Settings,
    pool: asyncpg.Pool,
    dsn: str,
    router: Router | None = None,
    *,
    worker: bool = True,
    retry_base_s: float = 0.02,
) -> AsyncIterator[RunningEngine]:
    """An engine on the test's database; the worker role runs unless `worker=False`."""
    engine = Engine(settings, pool, dsn, router, retry_base_s=retry_base_s)
    stop = asyncio.Event()
    engine.listen()
    task = asyncio.create_task(engine.run_worker(stop)) if worker else None
    running = RunningEngine(engine, stop, task)
    try:
        yield running
    finally:
        await running.halt()
        await engine.close()


async def eventually(
    check: Callable[[], Awaitable[bool]], timeout: float = 20.0, every: float = 0.05
) -> None:
    """Wait until `check()` is true, or fail after `timeout` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        if await check():
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(every)


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on a free loopback port; yields its base URL."""
    import uvicorn

    from sponsorbot.runtime import _Server

    port = free_port()
    server = _Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="off")
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            await task
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
