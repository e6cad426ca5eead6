"""An aiohttp app served on a free loopback port for the length of a block: the stand-ins the
tests talk to over real HTTP (the simulator, a TronGrid, the price sources, a Bot API)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web


@contextlib.asynccontextmanager
async def served(app: web.Application, shutdown_timeout: float = 1.0) -> AsyncIterator[str]:
    """Serve `app` on 127.0.0.1; yields its base URL. Port 0 is bound and read back, so two
    starts never race for a port. No access log: a Bot API path carries a token."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        host, port = runner.addresses[0][:2]
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()
