"""The simulator's HTTP server: app factory, an async ``serve`` and a blocking ``run``."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import signal
from email.utils import formatdate
from typing import Any

from aiohttp import web

from sponsorbot.simulator import (
    botapi,
    control,
    phone,
    prices,
    tronaccounts,
    troncontrol,
    trongrid,
)
from sponsorbot.simulator.botapi import SIMULATOR_KEY
from sponsorbot.simulator.state import Options, Simulator

# Uploads through sendDocument and friends can be large; Telegram allows 50 MB.
MAX_BODY = 50 * 1024 * 1024


def create_app(**options: Any) -> web.Application:
    """Build the simulator app; ``options`` are the fields of :class:`Options`
    (seed, latency_ms, jitter_ms, per_bot_per_second, per_chat_per_second, tron_network,
    tron_api_key, trx_price, ...)."""
    sim = Simulator(Options(**options))
    sim.webhooks.on_answer = functools.partial(botapi.run_answer, sim)
    app = web.Application(client_max_size=MAX_BODY)
    app[SIMULATOR_KEY] = sim
    app.router.add_route("*", "/bot{token}/{method}", botapi.handle)
    control.setup(app)
    troncontrol.setup(app)
    trongrid.setup(app)
    tronaccounts.setup(app)
    prices.setup(app)
    phone.setup(app)

    async def close(_app: web.Application) -> None:
        await sim.close()

    async def date_header(_request: web.Request, response: web.StreamResponse) -> None:
        # Telegram's `Date` is Telegram's clock: moved on with the world's, so a test can
        # show a server whose clock is off (aiohttp writes the real time otherwise).
        if sim.world.offset_s:
            response.headers["Date"] = formatdate(sim.world.clock(), usegmt=True)

    app.on_cleanup.append(close)
    app.on_response_prepare.append(date_header)
    return app


async def serve(host: str, port: int, **options: Any) -> None:
    """Serve on ``host:port`` until cancelled."""
    # Long polls and webhook retries in flight must not hold a shutdown for a minute.
    runner = web.AppRunner(create_app(**options), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port, backlog=1024)
        await site.start()
        print(
            f"Telegram, TronGrid and price simulator on http://{host}:{port} (phone: /_sim/phone)",
            flush=True,
        )
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def run(host: str = "127.0.0.1", port: int = 8081, **options: Any) -> None:
    """Serve until SIGINT or SIGTERM, on uvloop when it is installed."""

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await serve(host, port, **options)

    # The simulated world only grows and lives as long as the process: a full collection walks
    # all of it to find next to nothing. In a 200/s load test that was a 0.25-1 s pause every
    # 12 s or so, which showed up as waves in the product's measured latency. The young
    # generations, where a request's short-lived cycles die, are still collected.
    gc.freeze()
    gc.set_threshold(50_000, 20, 1_000_000)
    try:
        import uvloop
    except ImportError:
        asyncio.run(main())
    else:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main())
