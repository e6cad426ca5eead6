"""`sponsorbot demo`: start everything, set it up, keep visitors coming, stop on Ctrl-C.

The simulator and the product (`sponsorbot run`: api and worker) run as child processes in
sessions of their own, so a Ctrl-C reaches only this process, which then stops them in order.
This process also holds the embedded PostgreSQL (writing the set-up and the history), and the
server stops when the last of us leaves it. With `--citus N` the database is instead a local Citus
cluster of a coordinator and N workers in `<data dir>/citus` (`sponsorbot citus up`, Citus built
from SPONSORBOT_CITUS_SOURCE), started before the processes and stopped after them.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import logging
import os
import shutil
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import asyncpg

from sponsorbot.config import load_settings
from sponsorbot.db.citus_schema import SEQUENTIAL
from sponsorbot.db.database import Database
from sponsorbot.db.migrate import migrate
from sponsorbot.db.pool import on_citus
from sponsorbot.demo import broadcasts, campaigns, history, setup, shop
from sponsorbot.demo.trickle import Trickle
from sponsorbot.demo.world import SEED, World, build
from sponsorbot.loadtest.processes import Cluster, wait_http
from sponsorbot.loadtest.scenario import OwnerApi, SetupError
from sponsorbot.simulator.client import SimulatorClient, SimulatorError
from sponsorbot.web.panel.web import DEMO_EMAIL_VARIABLE, DEMO_PASSWORD_VARIABLE

log = logging.getLogger(__name__)

STATE_FILE = "demo.json"
# The demo's own mark on a directory it made: it removes or reuses only a directory that has it,
# so `--data-dir /var/lib/sponsorbot` can never wipe an installation.
MARKER = ".sponsorbot-demo"
# What a demo directory made before the marker existed holds; such a one is adopted.
OLD_DEMO_ENTRIES = frozenset({STATE_FILE, "pgdata", "logs", "secret.key"})
LOCK_FILE = ".demo.lock"


@dataclass(frozen=True)
class Options:
    """Where the demo keeps its data and where it listens."""

    data_dir: Path
    port: int = 8080
    sim_port: int = 8081
    reset: bool = False
    # Workers of a local Citus cluster to run on (0: the embedded server), its source tarball,
    # and the coordinator's URL once the cluster is up.
    citus: int = 0
    citus_source: Path | None = None
    database_url: str = ""


class DemoError(Exception):
    """The demo could not start; the message says why."""


@dataclass
class Ready:
    """What the demo prints once it is ready."""

    panel_url: str
    phone_url: str
    # The owner's own Telegram, linked to the panel: the team's alerts arrive there.
    owner_phone_url: str
    link: str
    code: str
    seconds: float
    fresh: bool
    events: int
    report_url: str | None = None


def _environment(options: Options, sim_url: str) -> dict[str, str]:
    # The demo always runs on its own embedded database, whatever this shell points at.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPONSORBOT_")}
    env.update(
        SPONSORBOT_DATA_DIR=str(options.data_dir),
        SPONSORBOT_TELEGRAM_API=sim_url,
        # The simulator stands in for TronGrid and the TRX price sources too.
        SPONSORBOT_TRONGRID_URL=sim_url,
        SPONSORBOT_PRICE_COINGECKO_URL=sim_url,
        SPONSORBOT_PRICE_KRAKEN_URL=sim_url,
        SPONSORBOT_PRICE_BINANCE_URL=sim_url,
        SPONSORBOT_HOST="127.0.0.1",
        SPONSORBOT_PORT=str(options.port),
        SPONSORBOT_LOG_LEVEL="WARNING",
    )
    if options.database_url:
        env["SPONSORBOT_DATABASE_URL"] = options.database_url
    # Its sign-in page shows the demo's account: only this process sets these.
    env[DEMO_EMAIL_VARIABLE] = setup.OWNER_EMAIL
    env[DEMO_PASSWORD_VARIABLE] = setup.OWNER_PASSWORD
    return env


def _read_state(path: Path) -> dict[str, object]:
    try:
        loaded = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _fingerprint(world: World) -> str:
    """What must match between the kept database and a newly built world (hashed: no token
    is written down in clear, even a simulated one)."""
    ids = {
        "tokens": [b.token for b in world.bots],
        "channels": [[c.chat_id for c in b.channels] for b in world.bots],
        "files": [b.file_ids for b in world.bots],
        "sponsors": [[s.chat_id, *s.bot_ids] for s in world.sponsors],
    }
    return hashlib.sha256(json.dumps(ids).encode()).hexdigest()


class Demo:
    """One run of the demo: its processes, its database handle and its live visitors."""

    def __init__(self, options: Options, say: Callable[[str], None]) -> None:
        self.options = options
        self.say = say
        self.sim_url = f"http://127.0.0.1:{options.sim_port}"
        self.panel_url = f"http://127.0.0.1:{options.port}"
        logs = options.data_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.cluster = Cluster(logs, _environment(options, self.sim_url))
        self.db: Database | None = None
        self.sim = SimulatorClient(self.sim_url)
        self.trickle: asyncio.Task[None] | None = None

    async def _open_database(self) -> asyncpg.Pool:
        settings = load_settings(
            data_dir=self.options.data_dir,
            database_url=self.options.database_url,
            pool_min_size=1,
            pool_max_size=4,
        )
        self.db = await Database.open(settings, "demo")
        conn = await self.db.connect("demo-migrate")
        try:
            await migrate(conn)
        finally:
            await conn.close()
        return self.db.pool

    async def _build_world(self) -> World:
        await wait_http(f"{self.sim_url}/_sim/bots", self.cluster, within_s=30)
        return await build(self.sim)

    async def start(self) -> Ready:
        """Start the processes, set the demo up (or pick it up again), start the visitors."""
        began = time.monotonic()
        state_path = self.options.data_dir / STATE_FILE
        state = _read_state(state_path)
        # After a clean stop the database is ready for a new world, so the product (the slowest
        # to start) can start at once; after a crash it waits until the old world is dropped.
        kept = self.options.data_dir / ("citus" if self.options.citus else "pgdata")
        early = state.get("clean") is True or not kept.exists()
        self.cluster.start(
            "simulator", "simulator", "--port", str(self.options.sim_port), "--seed", str(SEED)
        )
        if early:
            self.cluster.start("product", "run")
        world_task = asyncio.create_task(self._build_world())
        try:
            pool = await self._open_database()
            await setup.ensure_owner(pool)
            fresh = not await setup.has_bots(pool)
            if not fresh and not early:
                await setup.forget_old_world(pool)
        except BaseException:
            world_task.cancel()
            raise
        state["clean"] = False
        state_path.write_text(json.dumps(state))
        if not early:
            self.cluster.start("product", "run")
        world = await world_task
        log.info("simulated world built after %.1f s", time.monotonic() - began)
        if not fresh and state.get("world") != _fingerprint(world):
            raise DemoError(
                "the kept demo data does not match the simulated world this version builds; "
                "start again with --reset"
            )
        await wait_http(f"{self.panel_url}/healthz", self.cluster, within_s=60)
        log.info("product up after %.1f s", time.monotonic() - began)
        if not fresh:
            await campaigns.refresh_links(pool, world, self.sim_url)
        now = datetime.now(UTC)
        token_id, token = await setup.api_token(pool)
        api = OwnerApi(self.panel_url, token)
        try:
            bots = await setup.connect(self.sim, api, pool, world, fresh)
            log.info("bots, gate and content set up after %.1f s", time.monotonic() - began)
            planned = campaigns.planned(world, now) if fresh else []
            # The campaigns are made through the product while the history is made here.
            making = asyncio.create_task(campaigns.create(api, planned, now))
            try:
                events, windows = await self._history(bots, planned, making, state, now)
            finally:
                if not making.done():
                    making.cancel()
                await asyncio.gather(making, return_exceptions=True)
            if fresh:
                # Chosen from the people the history wrote, so only now.
                made = await broadcasts.create(api, pool, bots, now)
                # Chosen before the demo says it is ready, so the phone's person, who may open
                # the bot any moment after, is not among the finished broadcast's recipients.
                await broadcasts.block_late(pool, self.sim, made)
                log.info("broadcasts sent after %.1f s", time.monotonic() - began)
                await shop.create(api, pool, self.sim, bots[0], now)
                log.info("shop set up after %.1f s", time.monotonic() - began)
            await setup.link_owner(pool, self.sim, world.owner_user, bots[0].sim.plan.username)
        finally:
            await api.close()
            await setup.revoke(pool, token_id)
        log.info(
            "%d events of history, campaigns, written after %.1f s",
            events,
            time.monotonic() - began,
        )
        state.update(world=_fingerprint(world), history_until=now.isoformat())
        state_path.write_text(json.dumps(state))
        # Live visitors now and then leave a running campaign's channel, as some people do.
        leaving: dict[int, list[int]] = {}
        for window in windows:
            if window.until >= now:
                for bot_id in window.bot_ids:
                    leaving.setdefault(bot_id, []).append(window.chat_id)
        self.trickle = asyncio.create_task(
            Trickle(self.sim, bots, world.visitors, int(now.timestamp()), leaving).run(),
            name="trickle",
        )
        report = await campaigns.report_token(pool)
        first = bots[0]
        return Ready(
            panel_url=self.panel_url,
            phone_url=(
                f"{self.sim_url}/_sim/phone?user={world.phone_user}&bot={first.sim.plan.username}"
            ),
            owner_phone_url=(
                f"{self.sim_url}/_sim/phone?user={world.owner_user}&bot={first.sim.plan.username}"
            ),
            link=f"https://t.me/{first.sim.plan.username}?start={first.contents[0].code}",
            code=first.contents[0].code,
            seconds=time.monotonic() - began,
            fresh=fresh,
            events=events,
            report_url=f"{self.panel_url}/r/{report}" if report else None,
        )

    async def _history(
        self,
        bots: list[setup.ProductBot],
        planned: list[campaigns.Made],
        making: asyncio.Task[list[int]],
        state: dict[str, object],
        now: datetime,
    ) -> tuple[int, list[history.Window]]:
        """Write the history since the last one (a month on a fresh demo) with the planned
        campaigns' joins, once `making` has made them; the events written and the windows of
        the campaigns in it (a kept demo's: its running campaigns)."""
        assert self.db is not None
        since = now - timedelta(days=history.DAYS)
        if planned:
            windows = [m.window for m in planned]
        else:
            if isinstance(state.get("history_until"), str):
                since = max(since, datetime.fromisoformat(str(state["history_until"])))
            windows = await campaigns.running(self.db.pool, since, now)
        if now - since <= timedelta(minutes=1):
            return 0, windows
        seed = int(since.timestamp())
        taken = frozenset() if planned else await history.usernames(self.db.pool)
        histories, outcomes = await asyncio.to_thread(
            campaigns.make_history, bots, since, now, seed, planned, windows, taken
        )
        loose = [] if planned else campaigns.loose(histories)
        ids = await making
        plain = await asyncpg.connect(self.db.dsn)
        try:
            await history.months(plain, since, now)
            citus = await on_citus(plain)
            async with plain.transaction():
                if citus:
                    # It writes a reference table (campaigns) after distributed ones, which
                    # Citus allows only over one connection per node.
                    await plain.execute(SEQUENTIAL)
                # The joins name the campaigns' links, which exist once `making` is done.
                links = await campaigns.links(plain, windows, ids)
                events = await history.write(plain, histories, since, now, links)
                await campaigns.save(plain, outcomes, ids, loose)
        finally:
            await plain.close()
        return events, windows

    def check_alive(self) -> None:
        """Raise if a child process or the live visitors died."""
        self.cluster.check_alive()
        if self.trickle is not None and self.trickle.done() and not self.trickle.cancelled():
            self.trickle.result()

    async def stop(self) -> None:
        """Stop the visitors, the product and the simulator, then leave the database."""
        if self.trickle is not None:
            self.trickle.cancel()
            await asyncio.gather(self.trickle, return_exceptions=True)
        await self.sim.close()
        await asyncio.to_thread(self.cluster.stop)
        if self.db is not None:
            try:
                await setup.forget_old_world(self.db.pool)
                path = self.options.data_dir / STATE_FILE
                state = _read_state(path)
                state["clean"] = True
                path.write_text(json.dumps(state))
            finally:
                await self.db.close()


def _print_ready(ready: Ready, say: Callable[[str], None]) -> None:
    how = "set up" if ready.fresh else "picked up again"
    say("")
    say(f"Sponsorbot demo ready in {ready.seconds:.1f} s (demo data {how}).")
    say("")
    say(f"  Panel:    {ready.panel_url}/")
    say(f"  Sign in:  {setup.OWNER_EMAIL}  /  {setup.OWNER_PASSWORD}")
    say(f"  Phone:    {ready.phone_url}")
    say(f"            (type the start code {ready.code} and press Open to meet the gate;")
    say(f"            the content link is {ready.link})")
    say(f"  Owner:    {ready.owner_phone_url}")
    say("            (the owner's Telegram, linked to the panel: new orders arrive there with")
    say("            Approve, Reject and Ask for a change)")
    if ready.report_url:
        say(f"  Report:   {ready.report_url}")
        say("            (what the sponsor of the running campaign sees, no sign-in)")
    say("")
    say("Live visitors keep coming. Ctrl-C stops everything.")


def _lock(data_dir: Path) -> int:
    """One demo per data dir: a second one (or a --reset) must not pull the first's data away.

    The lock file sits inside the claimed directory, which --reset empties but never removes.
    """
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DemoError(f"a demo is already running in {data_dir}") from None
    return fd


def _check_ports(options: Options) -> None:
    """Fail early and clearly: a taken port would otherwise show up as a child's crash, or
    worse, as someone else's simulator answering ours."""
    for port, flag in ((options.port, "--port"), (options.sim_port, "--sim-port")):
        with socket.socket() as sock:
            # As the servers bind: a port a demo just stopped using (TIME_WAIT) is free.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                raise DemoError(f"port {port} is taken; choose another with {flag}") from None


# What a failed start looks like from here; each becomes one line for the user.
START_FAILURES = (
    SimulatorError,
    SetupError,
    aiohttp.ClientError,
    asyncpg.PostgresError,
    RuntimeError,
    OSError,
)


async def run_demo(options: Options, say: Callable[[str], None] = print) -> None:
    """Run the demo until SIGINT or SIGTERM; nothing it started is left running."""
    _check_ports(options)
    claim_dir(options.data_dir)
    lock = _lock(options.data_dir)
    try:
        await _run_locked(options, say)
    finally:
        os.close(lock)


def claim_dir(data_dir: Path) -> None:
    """Make `data_dir` the demo's, or refuse: the demo never removes what it did not make.

    A missing or empty directory becomes the demo's (it gets the marker); one that has the
    marker, or holds only what an older demo wrote, is the demo's already. Anything else (an
    installation, a home directory) is refused before a single file is touched.
    """
    if (data_dir / MARKER).is_file():
        return
    entries = {entry.name for entry in data_dir.iterdir()} if data_dir.is_dir() else set()
    if data_dir.exists() and not data_dir.is_dir():
        raise DemoError(f"{data_dir} is a file, not a directory; choose another --data-dir")
    ours = not entries or (STATE_FILE in entries and entries <= OLD_DEMO_ENTRIES)
    if not ours:
        shown = ", ".join(sorted(entries)[:3]) + (", ..." if len(entries) > 3 else "")
        raise DemoError(
            f"{data_dir} holds files the demo did not make ({shown}); the demo only uses and "
            "removes a directory of its own: choose an empty or new --data-dir"
        )
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / MARKER).write_text("made by sponsorbot demo; it may remove this directory\n")


def _clear(data_dir: Path) -> None:
    """Empty a directory the demo has claimed, keeping its marker."""
    for entry in data_dir.iterdir():
        if entry.name in (MARKER, LOCK_FILE):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


async def _run_locked(options: Options, say: Callable[[str], None]) -> None:
    # A demo whose set-up never finished cannot be picked up again: start it from scratch.
    unfinished = "world" not in _read_state(options.data_dir / STATE_FILE)
    if options.reset or unfinished:
        _stop_cluster(options.data_dir)
        _clear(options.data_dir)
    say(f"starting the demo in {options.data_dir} ...")
    if options.citus:
        options = replace(
            options, database_url=await asyncio.to_thread(_start_cluster, options, say)
        )
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    demo = Demo(options, say)
    try:
        starting = asyncio.create_task(demo.start())
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait([starting, stopper], return_when="FIRST_COMPLETED")
        if not starting.done():
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            return
        try:
            ready = starting.result()
        except START_FAILURES as exc:
            raise DemoError(str(exc) or type(exc).__name__) from exc
        _print_ready(ready, say)
        while not stop.is_set():
            demo.check_alive()
            await asyncio.wait([stopper], timeout=1.0)
    finally:
        say("stopping the demo ...")
        try:
            await demo.stop()
        finally:
            if options.citus:
                await asyncio.to_thread(_stop_cluster, options.data_dir)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        say("stopped; nothing is left running.")


def _start_cluster(options: Options, say: Callable[[str], None]) -> str:
    """`--citus N`: the demo's Citus cluster started (made and Citus built first, if need be);
    the coordinator's URL."""
    from sponsorbot.ops.citus import CitusClusterError, up
    from sponsorbot.ops.citus_build import CitusBuildError, build

    if options.citus_source is None:
        raise DemoError("--citus needs the Citus source: set SPONSORBOT_CITUS_SOURCE")
    try:
        install = build(options.citus_source, echo=say)
        return up(options.data_dir / "citus", install, options.citus, True, say).url
    except (CitusBuildError, CitusClusterError) as exc:
        raise DemoError(str(exc)) from None


def _stop_cluster(data_dir: Path) -> None:
    """Stop the demo's Citus cluster, if it has one (its data stays, like the embedded server's)."""
    from sponsorbot.ops.citus import STATE_FILE as CLUSTER_FILE
    from sponsorbot.ops.citus import down

    if (data_dir / "citus" / CLUSTER_FILE).is_file():
        down(data_dir / "citus", echo=lambda _: None)
