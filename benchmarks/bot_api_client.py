"""Client CPU per Bot API call: aiohttp's ClientSession vs the lean HTTP/1.1 pool, side by side.

    python benchmarks/bot_api_client.py [--calls 20000] [--concurrency 64] [--rounds 3]

A local aiohttp server (in its own process, so its CPU is not counted) answers every POST like
Telegram would. The client makes the calls through BotApi, on uvloop when it is installed,
alternating the two paths round by round, and prints the client process's CPU time
(time.process_time) per call for each.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import time
from collections.abc import Mapping
from typing import Any

import aiohttp
import orjson
from aiohttp import web
from yarl import URL

from sponsorbot.loadtest.processes import free_port
from sponsorbot.runtime import run_async
from sponsorbot.telegram import BotApi
from sponsorbot.telegram.client import _dumps, _network_error
from sponsorbot.telegram.errors import TelegramError

TOKEN = "1234567890:AAHfakeSecretForBench_0123456789-xy"
ANSWER = orjson.dumps(
    {
        "ok": True,
        "result": {
            "status": "member",
            "user": {"id": 42, "is_bot": False, "first_name": "Visitor", "language_code": "en"},
        },
    }
)


def serve(port: int) -> None:
    """The stand-in Bot API (runs in the child process)."""

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=ANSWER, content_type="application/json")

    app = web.Application()
    app.router.add_post("/bot{token}/{method}", answer)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


class AiohttpBotApi(BotApi):
    """BotApi with its JSON calls sent through aiohttp, as before the lean pool (its URLs
    cached per bot and method, as that client cached them)."""

    def __init__(self, base_url: str, **options: Any) -> None:
        super().__init__(base_url, **options)
        self._urls: dict[tuple[str, str], URL] = {}

    async def _post(
        self, token: str, method: str, params: Mapping[str, Any], timeout_s: float
    ) -> tuple[int, str | None, bytes] | TelegramError:
        session = self._get_session()
        try:
            url = self._urls.get((token, method))
            if url is None:
                url = self._urls[token, method] = URL(f"{self.base_url}/bot{token}/{method}")
            async with session.post(
                url,
                data=_dumps(params),
                headers={"Content-Type": "application/json"},
                timeout=aiohttp.ClientTimeout(total=timeout_s),
            ) as resp:
                body = await resp.read()
                return resp.status, resp.headers.get("Retry-After"), body
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
            return _network_error(method, exc, token)


async def wait_until_up(port: int, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)
        else:
            writer.close()
            return


async def hammer(api: BotApi, calls: int, concurrency: int) -> tuple[float, float]:
    """Make `calls` calls from `concurrency` tasks: (CPU µs per call, calls per second)."""
    bot = api.bot(TOKEN)
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            # The worker's mix: two membership checks, then the answer.
            if remaining % 3:
                await bot.get_chat_member(-1001234567890, 42)
            else:
                await bot.call("sendMessage", {"chat_id": 42, "text": "Join first, then /start"})

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu / calls * 1e6, calls / wall


async def bench(port: int, calls: int, concurrency: int, rounds: int) -> None:
    await wait_until_up(port)
    base = f"http://127.0.0.1:{port}"
    kinds: dict[str, type[BotApi]] = {"aiohttp": AiohttpBotApi, "lean": BotApi}
    results: dict[str, list[float]] = {name: [] for name in kinds}
    for round_no in range(rounds):
        for name, cls in kinds.items():
            api = cls(base, connect_limit=concurrency)
            try:
                await hammer(api, min(calls, 2000), concurrency)  # warm: connections, caches
                cpu_us, rate = await hammer(api, calls, concurrency)
            finally:
                await api.close()
            results[name].append(cpu_us)
            print(f"round {round_no + 1} {name:8} {cpu_us:7.1f} µs CPU/call  {rate:8.0f} calls/s")
    old, new = (statistics.median(results[k]) for k in ("aiohttp", "lean"))
    print(f"median   aiohttp {old:.1f} µs, lean {new:.1f} µs: {new / old:.0%} of aiohttp's CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    port = free_port()
    server = multiprocessing.get_context("spawn").Process(target=serve, args=(port,))
    server.start()
    try:
        run_async(bench(port, args.calls, args.concurrency, args.rounds))
    finally:
        server.terminate()
        server.join(5)


if __name__ == "__main__":
    main()
