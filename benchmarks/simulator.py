"""How many Bot API calls a second one simulator process answers.

Starts the simulator in a subprocess, makes a bot, a channel and some visitors, then hammers
getChatMember and sendMessage (half each) from many concurrent keep-alive connections and
prints calls/s. Flood limits are lifted so every call does the full work of a success.

    python benchmarks/simulator.py [--seconds 10] [--concurrency 64] [--clients 1]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import subprocess
import sys
import time

import aiohttp

from sponsorbot.loadtest.processes import free_port
from sponsorbot.simulator.client import SimulatorClient


async def wait_until_up(base: str, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession() as http:
        while True:
            try:
                async with http.get(f"{base}/_sim/bots") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the simulator did not start")
            await asyncio.sleep(0.1)


async def prepare(base: str, users: int) -> tuple[str, int, list[int]]:
    async with SimulatorClient(base) as sim:
        bot = await sim.create_bot("bench_bot")
        channel = await sim.create_channel("Bench", username="bench")
        await sim.make_admin(channel["id"], bot["id"])
        await sim.set_limits(per_bot_per_second=10**9, per_chat_per_second=10**9)
        ids = []
        for i in range(users):
            user = await sim.create_user(f"U{i}")
            await sim.open_link(user["id"], "bench_bot", "x")
            ids.append(user["id"])
        return bot["token"], channel["id"], ids


async def hammer(
    base: str, token: str, channel: int, users: list[int], seconds: float, concurrency: int
) -> tuple[int, int]:
    """Run ``concurrency`` workers for ``seconds``; return (calls, failures)."""
    connector = aiohttp.TCPConnector(limit=concurrency)
    calls = failures = 0
    stop = time.monotonic() + seconds
    async with aiohttp.ClientSession(connector=connector) as http:

        async def worker(n: int) -> None:
            nonlocal calls, failures
            i = n
            while time.monotonic() < stop:
                user = users[i % len(users)]
                body: dict[str, object]
                if i % 2:
                    method, body = "getChatMember", {"chat_id": channel, "user_id": user}
                else:
                    method, body = "sendMessage", {"chat_id": user, "text": "Join the channel"}
                async with http.post(f"{base}/bot{token}/{method}", json=body) as response:
                    await response.read()
                    failures += response.status != 200
                calls += 1
                i += concurrency

        await asyncio.gather(*(worker(n) for n in range(concurrency)))
    return calls, failures


def client_process(args: tuple[str, str, int, list[int], float, int]) -> tuple[int, int]:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    return asyncio.run(hammer(*args))


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux), to show the server's load."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=64, help="connections per client")
    parser.add_argument("--clients", type=int, default=1, help="client processes")
    parser.add_argument("--users", type=int, default=200)
    options = parser.parse_args()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from sponsorbot.simulator.server import run; "
            f"run(host='127.0.0.1', port={port}, seed=1)",
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        asyncio.run(wait_until_up(base))
        token, channel, users = asyncio.run(prepare(base, options.users))
        job = (base, token, channel, users, options.seconds, options.concurrency)
        with multiprocessing.Pool(options.clients) as pool:
            cpu_before, started = cpu_seconds(server.pid), time.monotonic()
            results = pool.map(client_process, [job] * options.clients)
            elapsed, cpu = time.monotonic() - started, cpu_seconds(server.pid) - cpu_before
    finally:
        server.terminate()
        server.wait(10)
    calls = sum(r[0] for r in results)
    failures = sum(r[1] for r in results)
    print(
        f"{calls / elapsed:,.0f} calls/s  ({calls} calls in {elapsed:.1f} s, "
        f"{failures} failed, {options.clients} client process(es) x "
        f"{options.concurrency} connections)"
    )
    print(
        f"server process: {cpu / elapsed:.0%} of one core busy, "
        f"{calls / cpu:,.0f} calls per CPU-second"
    )


if __name__ == "__main__":
    main()
