"""`sponsorbot loadtest --peer aiogram`: the same load on a peer written with aiogram 3.

The peer (`benchmarks/peer_aiogram.py`) is the gate as a user choosing a bot stack would
otherwise write it: aiogram's aiohttp webhook handler, each update handled in the web process,
no queue, nothing durable. It runs in place of api, workers and PostgreSQL, against the same
simulator, set up the same way (bots in webhook mode, two public gate channels where the bot is
an administrator), with the same visitors sent the same way, and reported with the same figures.

It has no database, so everything is read from the simulator's call log: the answer latency
runs from the link's opening (the load generator's clock) to the simulator accepting the gate
message. The product's report gives the same latency beside its own (`open_p50_s`, ...).

aiogram is no dependency of the product (aiogram 3 pins a pydantic older than the product's):
the peer gets its own virtual environment, made here once and reused.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import math
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sponsorbot.loadtest.options import Options
from sponsorbot.loadtest.plot import draw
from sponsorbot.loadtest.processes import (
    Cluster,
    CpuMeter,
    Member,
    free_port,
    own_pid,
    peak_rss_mb,
    start_simulator,
    wait_http,
)
from sponsorbot.loadtest.report import (
    SENDS,
    Window,
    cpu_per_visitor,
    gate_answers,
    latency_figures,
)
from sponsorbot.loadtest.scenario import LoadBot, Opened, send_visitors
from sponsorbot.simulator.client import SimulatorClient

PEERS = ("aiogram",)
# In a source checkout: src/sponsorbot/loadtest/peer.py → benchmarks/peer_aiogram.py.
SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "peer_aiogram.py"
# aiogram's "fast" extra is uvloop (the product runs on it too). Exact pins: the environment
# is named after them, so another pin makes another environment.
REQUIREMENTS = ("aiogram==3.31.0", "uvloop==0.23.0")
READY = "ready"  # written once the environment is complete: aiogram's version
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


class PeerUnavailable(RuntimeError):
    """The peer cannot run here (no source checkout, or its environment could not be made)."""


def venv_dir() -> Path:
    """Where the peer's virtual environment lives: in the user's cache, named after the pins,
    ~/.cache/sponsorbot-peer/aiogram-3.31.0-uvloop-0.23.0 (or under $XDG_CACHE_HOME)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "sponsorbot-peer" / "-".join(r.replace("==", "-") for r in REQUIREMENTS)


def _run(args: list[str], timeout: float) -> str:
    try:
        done = subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
            args, capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PeerUnavailable(f"{' '.join(args[:4])} ...: {exc}") from None
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-2000:]
        raise PeerUnavailable(f"{' '.join(args[:4])} ... exited with {done.returncode}:\n{tail}")
    return done.stdout.strip()


def peer_python(say: Callable[[str], Any] = print) -> tuple[Path, str]:
    """The peer environment's interpreter and aiogram's version; the environment is made
    first if it is not there (python -m venv, then pip install), once, under a lock."""
    home = venv_dir()
    python = home / "bin" / "python"
    ready = home / READY
    if python.exists() and ready.exists():
        return python, ready.read_text().strip()
    try:
        home.parent.mkdir(parents=True, exist_ok=True)
        with (home.parent / f".{home.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another load test may be making it right now
            if python.exists() and ready.exists():
                return python, ready.read_text().strip()
            say(f"making the peer's virtual environment in {home} (once) ...")
            shutil.rmtree(home, ignore_errors=True)  # a half-made one
            _run([sys.executable, "-m", "venv", str(home)], timeout=120)
            pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            pip += ["--retries", "0", "--timeout", "10"]  # no package index: fail fast
            _run([*pip, *REQUIREMENTS], timeout=600)
            version = _run([str(python), "-c", "import aiogram; print(aiogram.__version__)"], 60)
            ready.write_text(version + "\n")
    except OSError as exc:
        raise PeerUnavailable(f"cannot make {home}: {exc}") from None
    return python, version


async def run_peer(options: Options, say: Callable[[str], Any] = print) -> dict[str, Any]:
    """Run one load test on the peer and return its figures."""
    if options.peer not in PEERS:
        raise PeerUnavailable(f"unknown peer {options.peer!r}: one of {', '.join(PEERS)}")
    if options.campaigns or options.joins or options.broadcast or options.worker_slots:
        raise PeerUnavailable(
            "the peer does the plain gate: no --campaigns, --joins, --broadcast, --worker-slots"
        )
    if not SCRIPT.exists():
        raise PeerUnavailable(f"the peer needs a source checkout: {SCRIPT} is not there")
    python, version = await asyncio.to_thread(peer_python, say)
    workdir = Path(tempfile.mkdtemp(prefix="sponsorbot-loadtest-peer-"))
    sim_port, peer_port = free_port(), free_port()
    sim_url = f"http://127.0.0.1:{sim_port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPONSORBOT_")}
    cluster = Cluster(workdir, env)
    say(
        f"load test of the peer, aiogram {version}: {options.bots} bots, {options.rate:g}/s for "
        f"{options.duration:g}s after {options.warmup:g}s at half rate, Telegram "
        f"{options.rtt_ms:g} ms away, one webhook process; logs in {workdir}"
    )
    try:
        await start_simulator(cluster, sim_port, options.rtt_ms)
        async with SimulatorClient(sim_url) as sim:
            made = await asyncio.gather(*(_register(sim, n) for n in range(options.bots)))
            config = {
                "api": sim_url,
                "host": "127.0.0.1",
                "port": peer_port,
                "webhook": f"http://127.0.0.1:{peer_port}",
                "secret": secrets.token_urlsafe(24),
                "bots": [entry for _, entry in made],
            }
            (workdir / "peer.json").write_text(json.dumps(config, indent=2))
            _start(cluster, python, workdir / "peer.json")
            await wait_http(f"http://127.0.0.1:{peer_port}/healthz", cluster)
            bots = [bot for bot, _ in made]
            result = await _measure(options, say, cluster, sim, bots)
    finally:
        cluster.stop()
    result["peer"] = f"aiogram {version}"
    result["peer_errors"] = _errors(workdir / "peer.log")
    result["options"] = {
        k: str(v) if isinstance(v, Path) else v for k, v in options.__dict__.items()
    }
    result["logs"] = str(workdir)
    return result


async def _register(sim: SimulatorClient, n: int) -> tuple[LoadBot, dict[str, Any]]:
    """A bot with two public gate channels where it is an administrator, as the product's
    load test makes them (the owner API's part, the channels' check, is the peer's config)."""
    made = await sim.create_bot(f"load{n}_bot")
    channels = []
    for c in (1, 2):
        channel = await sim.create_channel(f"Load {n} sponsor {c}", username=f"load{n}_sponsor{c}")
        await sim.make_admin(channel["id"], made["id"], can_invite_users=True)
        channels.append(
            {"id": channel["id"], "title": channel["title"], "username": channel["username"]}
        )
    # A content code of the product's shape: the peer only needs one to be there.
    code = "".join(secrets.choice(ALNUM) for _ in range(12))
    bot = LoadBot(made["id"], made["username"], made["id"], code)
    return bot, {"token": made["token"], "channels": channels}


def _start(cluster: Cluster, python: Path, config: Path) -> Member:
    """The peer as a member of the cluster, output in peer.log."""
    log = (cluster.workdir / "peer.log").open("ab")
    proc = subprocess.Popen(  # noqa: S603 - the peer's interpreter, our script
        [str(python), str(SCRIPT), "--config", str(config)],
        env=cluster.env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    member = Member("peer", proc)
    cluster.members.append(member)
    return member


class CallLog:
    """The simulator's call log, read as it grows; the first answer of each visitor."""

    def __init__(self, sim: SimulatorClient, visitors: set[int]) -> None:
        self.sim = sim
        self.visitors = visitors
        self.calls: list[dict[str, Any]] = []
        self.answered: set[int] = set()
        self._since = 0

    async def read(self) -> None:
        """Everything logged since the last read."""
        new = await self.sim.all_calls(self._since)
        if not new:
            return
        self.calls.extend(new)
        self._since = new[-1]["seq"]
        for call in new:
            if call["method"] in SENDS and call["ok"] and call.get("chat_id") in self.visitors:
                self.answered.add(call["chat_id"])


async def _measure(
    options: Options,
    say: Callable[[str], Any],
    cluster: Cluster,
    sim: SimulatorClient,
    bots: list[LoadBot],
) -> dict[str, Any]:
    """Warm up, measure, drain and report, as the product's load test does."""
    warm_count = int(options.rate / 2 * options.warmup)
    users = await sim.create_users(warm_count + int(options.rate * options.duration) + 1)
    cluster.check_alive()
    opened = Opened()
    say("warming up ...")
    await send_visitors(
        sim, bots, users[:warm_count], options.rate / 2, options.warmup, opened.warmup, opened
    )
    groups = {m.name: [m.proc.pid] for m in cluster.members}
    groups["loadgen"] = [own_pid()]
    meter = CpuMeter(groups)
    meter.start()
    say("measuring ...")
    window_start = time.time()
    await send_visitors(
        sim, bots, users[warm_count:], options.rate, options.duration, opened.measured, opened
    )
    window_end = time.time()
    cpu = meter.stop()
    cluster.check_alive()
    everyone = {**opened.warmup, **opened.measured}
    log = CallLog(sim, set(everyone))
    # Late answers count too (the product's load test waits for its backlog the same way);
    # an update the peer dropped is never answered, so this may run to its end.
    deadline = time.monotonic() + options.drain
    while True:
        await log.read()
        if len(log.answered) >= len(everyone) or time.monotonic() >= deadline:
            break
        await asyncio.sleep(0.5)
    window = Window(window_start, window_end, len(opened.measured) + opened.failed)
    result = peer_figures(log.calls, everyone, opened.measured, window, cpu)
    if options.plot is not None:
        # By the link's opening, as the latencies are.
        first, _, _, _ = gate_answers(log.calls, set(opened.measured))
        opens = [t for _, t in opened.measured.values()]
        points = [(t, first[u] - t) for u, (_, t) in opened.measured.items() if u in first]
        title = f"{options.bots} bots, {options.rate:g}/s, aiogram peer"
        title += f", Telegram {options.rtt_ms:g} ms away"
        draw(options.plot, title, window_start, points, opens)
    result["open_failures"] = opened.failed
    result["peak_rss_mb"] = {m.name: peak_rss_mb(m.proc.pid) for m in cluster.members}
    return result


def peer_figures(
    calls: list[dict[str, Any]],
    everyone: dict[int, tuple[int, float]],
    measured: dict[int, tuple[int, float]],
    window: Window,
    cpu: dict[str, float],
) -> dict[str, Any]:
    """The product's figures, from the call log alone: `handled` are the visitors (warm-up
    ones too) answered in the window, the backlog those opened before its end and not
    answered by then; latencies run from the link's opening."""
    first, _, busiest, throttled = gate_answers(calls, set(everyone))
    _, duplicates, _, _ = gate_answers(calls, set(measured))
    never = math.inf
    handled = sum(1 for u in everyone if window.start <= first.get(u, never) < window.end)
    backlog = sum(
        1 for u, (_, t) in everyone.items() if t < window.end and first.get(u, never) >= window.end
    )
    latencies = [first[u] - t for u, (_, t) in measured.items() if u in first]
    from_open = latency_figures(latencies, "open_")
    return {
        "offered_per_s": round(window.offered / window.seconds, 1),
        "handled_per_s": round(handled / window.seconds, 1),
        "handled_other_per_s": 0.0,
        # The peer has no inbox: its answer latency is the one from the link's opening.
        "latency_from": "open",
        **{k.removeprefix("open_"): v for k, v in from_open.items()},
        **from_open,
        "backlog": backlog,
        "max_bot_msgs_per_s": busiest,
        "throttled_429": throttled,
        "dead": None,  # nothing is kept: an update that failed is gone, counted as unanswered
        "duplicates": duplicates,
        "visitors": len(measured),
        "answered": len(latencies),
        "unanswered": len(measured) - len(latencies),
        "cpu_s": cpu,
        **cpu_per_visitor(cpu, len(measured)),
    }


def _errors(log: Path) -> int:
    """Errors the peer logged (aiogram logs an update whose handler failed, then drops it)."""
    with contextlib.suppress(OSError):
        lines = log.read_text(errors="replace").splitlines()
        return sum(1 for line in lines if line.startswith("ERROR"))
    return 0
