"""The `sponsorbot` command."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import aiohttp
import typer
from pydantic import ValidationError

from sponsorbot import __version__
from sponsorbot.config import Role, Settings, SettingsError, TronNetwork, load_settings
from sponsorbot.logs import configure_logging
from sponsorbot.tron.address import AddressError
from sponsorbot.tron.check import verify_hash
from sponsorbot.tron.client import TronGridError
from sponsorbot.tron.networks import HashError

if TYPE_CHECKING:
    from sponsorbot.db.database import Database
    from sponsorbot.ops.citus import Cluster

_T = TypeVar("_T")

app = typer.Typer(
    help="Sponsorbot: Telegram uploader bots with a forced-join gate, on PostgreSQL alone.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"sponsorbot: {message}", err=True)
    return typer.Exit(code)


def _settings() -> Settings:
    try:
        settings = load_settings()
    except SettingsError as exc:
        raise _fail(str(exc)) from None
    configure_logging(settings.log_format, settings.log_level)
    return settings


def _on_database(settings: Settings, role: str, work: Callable[[Database], Awaitable[_T]]) -> _T:
    """What `work` returns, run on the database opened (and migrated) for the command `role`
    and closed again before this returns."""
    from sponsorbot.db.database import open_database
    from sponsorbot.runtime import run_async

    async def _main() -> _T:
        async with open_database(settings, role) as db:
            return await work(db)

    return run_async(_main())


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sponsorbot {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Sponsorbot's commands."""


@app.command()
def run(
    role: Annotated[
        Role | None, typer.Option(help="Run one role; both when left out.", case_sensitive=False)
    ] = None,
) -> None:
    """Run the api role (panel, API, webhooks), the worker role, or both."""
    from sponsorbot.runtime import StartupError, run_async, run_roles

    settings = _settings()
    roles = frozenset([role]) if role else frozenset(Role)
    try:
        run_async(run_roles(settings, roles))
    except StartupError as exc:
        raise _fail(str(exc), 1) from None
    except OSError as exc:
        raise _fail(f"cannot start: {exc}", 1) from None


@app.command()
def migrate() -> None:
    """Apply the database migrations that are missing (safe to run any time)."""
    from sponsorbot.db.migrate import MigrationError

    async def _applied(db: Database) -> list[int]:
        return db.applied

    try:
        applied = _on_database(_settings(), "migrate", _applied)
    except MigrationError as exc:
        raise _fail(str(exc), 1) from None
    if applied:
        typer.echo(f"applied {len(applied)} migration(s): {', '.join(map(str, applied))}")
    else:
        typer.echo("the database is up to date")


@app.command()
def backup(
    path: Annotated[Path, typer.Argument(help="The file to write (a tar archive; replaced).")],
) -> None:
    """Write a consistent copy of the database and a manifest into one file (mode 0600)."""
    from sponsorbot.ops.backup import make_backup
    from sponsorbot.ops.backup_archive import BackupError
    from sponsorbot.runtime import run_async

    settings = _settings()
    try:
        run_async(make_backup(settings, path, typer.echo))
    except BackupError as exc:
        raise _fail(str(exc), 1) from None


@app.command()
def restore(
    path: Annotated[Path, typer.Argument(help="A file written by `sponsorbot backup`.")],
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace a database that already holds bots, users or tables not of Sponsorbot.",
        ),
    ] = False,
) -> None:
    """Put a backup into the database (stop the api and the workers first), then migrate it."""
    from sponsorbot.ops.backup_archive import BackupError
    from sponsorbot.ops.backup_restore import restore as restore_backup
    from sponsorbot.runtime import run_async

    settings = _settings()
    try:
        run_async(restore_backup(settings, path, force, typer.echo))
    except BackupError as exc:
        raise _fail(str(exc), 1) from None


@app.command()
def simulator(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8081,
    seed: Annotated[int | None, typer.Option(help="Make ids and tokens reproducible.")] = None,
    latency_ms: Annotated[float, typer.Option(help="Added to every Bot API call.")] = 0.0,
    jitter_ms: Annotated[float, typer.Option(help="Up to this much more, at random.")] = 0.0,
) -> None:
    """Run the simulated Telegram; point SPONSORBOT_TELEGRAM_API at it."""
    from sponsorbot.simulator.server import run as run_simulator

    configure_logging("text", "INFO")
    try:
        run_simulator(host=host, port=port, seed=seed, latency_ms=latency_ms, jitter_ms=jitter_ms)
    except OSError as exc:
        raise _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", 1) from None


@app.command()
def status() -> None:
    """Per bot: mode, token state, queue depth, oldest waiting, in hand, dead, outbox, sends."""
    from sponsorbot.features.stats.health import status_table
    from sponsorbot.features.stats.queries import bot_status

    rows = _on_database(_settings(), "status", lambda db: bot_status(db.pool))
    typer.echo(status_table(rows))


@app.command()
def doctor(
    timeout: Annotated[
        float,
        typer.Option(
            min=0.5, max=60, help="Seconds each call to the database or Telegram may take."
        ),
    ] = 5.0,
) -> None:
    """Check the installation, one line each: database, migrations, secret key, each bot's token
    and webhook, clock, disk. The exit code is 1 when a check FAILs."""
    from sponsorbot.logs import mask_tokens
    from sponsorbot.ops.doctor import run_doctor

    settings = _settings()
    # The report is the output: the libraries' INFO lines would only interleave with it.
    configure_logging(settings.log_format, "WARNING")
    try:
        found = asyncio.run(
            run_doctor(settings, lambda finding: typer.echo(finding.line()), timeout_s=timeout)
        )
    except Exception as exc:  # a check the doctor did not foresee: one line, not a traceback
        reason = f"{type(exc).__name__}: {mask_tokens(str(exc))}"
        raise _fail(f"the doctor stopped: {reason}", 1) from None
    if any(finding.level == "FAIL" for finding in found):
        raise typer.Exit(1)


@app.command()
def redrive(
    bot: Annotated[int | None, typer.Option(min=1, help="Only this bot (its id).")] = None,
    since: Annotated[
        datetime | None,
        typer.Option(
            help="Only what arrived at or after this time (ISO 8601, UTC if no zone). "
            "Without it: only what gave up in the last 24 hours."
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only count them.")] = False,
) -> None:
    """Queue dead updates and messages given up after network errors again, once the cause
    (an outage, a bug since fixed) is gone: by default what gave up in the last 24 hours,
    never the messages of a broadcast cancelled since."""
    from sponsorbot.engine.redrive import redrive as queue_again
    from sponsorbot.engine.redrive import waiting
    from sponsorbot.features.all import redrive_holds

    settings = _settings()
    when = since.replace(tzinfo=UTC) if since is not None and since.tzinfo is None else since
    act = waiting if dry_run else queue_again
    done = _on_database(settings, "redrive", lambda db: act(db.pool, bot, when, redrive_holds()))
    verb = "would queue" if dry_run else "queued"
    typer.echo(f"{verb} {done.updates} dead update(s) and {done.messages} message(s) again")


@app.command("setup-code")
def setup_code() -> None:
    """Print a fresh one-time code for the panel's first-run /setup (while no owner exists)."""
    from sponsorbot.features.accounts.users import new_setup_code
    from sponsorbot.web.panel.web import PanelConfig

    code = _on_database(
        _settings(), "setup-code", lambda db: new_setup_code(db.pool, PanelConfig().clock())
    )
    if code is None:
        raise _fail("the workspace already has an owner: sign in at /signin", 1)
    typer.echo(f"setup code: {code} (valid for one hour; enter it at /setup)")


@app.command("reset-link")
def reset_link(
    email: Annotated[str, typer.Argument(help="The member's e-mail, as they sign in with it.")],
    two_step_off: Annotated[
        bool,
        typer.Option("--two-step-off", help="Also turn their two-step sign-in off (a lost phone)."),
    ] = False,
) -> None:
    """Print a one-time link (24 hours) for a member to set a new password: the way back in
    for an owner who forgot theirs. Whoever runs this holds the server, so no sign-in is asked."""
    from sponsorbot.features.accounts import invitations, users
    from sponsorbot.features.accounts.audit import Actor, record
    from sponsorbot.web.panel.web import PanelConfig

    settings = _settings()

    async def _reset(db: Database) -> str | None:
        found = await users.user_by_email(db.pool, email)
        if found is None:
            return None
        member = found[0]
        now = PanelConfig().clock()
        token = await invitations.new_reset(db.pool, member.id, None, now)
        who = Actor(None, "command line", None)
        await record(db.pool, now, who, "team.reset_link_created", member.email)
        if two_step_off:
            await users.disable_two_step(db.pool, member.id)
            await record(db.pool, now, who, "account.two_step_off", member.email)
        return token

    token = _on_database(settings, "reset-link", _reset)
    if token is None:
        raise _fail(f"no active member signs in with {email!r}", 1)
    base = (settings.panel_url or "").rstrip("/")
    link = f"{base}/reset/{token}" if base else f"/reset/{token} (after the panel's address)"
    typer.echo(f"reset link, for one use within 24 hours: {link}")
    if two_step_off:
        typer.echo("two-step sign-in is off for this member; they can turn it on again")


token_app = typer.Typer(help="Owner API tokens.", no_args_is_help=True)
app.add_typer(token_app, name="token")


@token_app.command("create")
def token_create(
    name: Annotated[str, typer.Option(help="What the token is for (shown in lists).")],
    role: Annotated[
        str, typer.Option(help="owner, admin, editor or analyst.", case_sensitive=False)
    ] = "owner",
) -> None:
    """Create an owner API token; it is printed once, alone on the last line."""
    from sponsorbot.features.accounts.api_tokens import TokenService
    from sponsorbot.features.errors import FeatureError

    settings = _settings()
    try:
        row, token = _on_database(
            settings, "token", lambda db: TokenService(db.pool).create(name, role.lower())
        )
    except FeatureError as exc:
        raise _fail(exc.message) from None
    typer.echo(f"token {row['id']} ({row['role']}) created; it is shown only now:")
    typer.echo(token)


@app.command()
def demo(
    reset: Annotated[bool, typer.Option("--reset", help="Throw the demo data away first.")] = False,
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Where the demo keeps its data (default: <data dir>/demo)."),
    ] = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="The panel's port.")] = 8080,
    sim_port: Annotated[
        int, typer.Option(min=1, max=65535, help="The simulated Telegram's port.")
    ] = 8081,
    citus: Annotated[
        int,
        typer.Option(
            "--citus",
            min=0,
            max=8,
            help="Run on a local Citus cluster of a coordinator and N workers (`sponsorbot "
            "citus up`, built from SPONSORBOT_CITUS_SOURCE) instead of the embedded server.",
        ),
    ] = 0,
) -> None:
    """Try Sponsorbot: a simulated Telegram, 3 bots, a month of history, live visitors."""
    from sponsorbot.demo.runner import DemoError, Options, run_demo
    from sponsorbot.runtime import run_async

    settings = _settings()
    options = Options(
        data_dir or settings.data_dir / "demo",
        port,
        sim_port,
        reset,
        citus=citus,
        citus_source=settings.citus_source,
    )
    try:
        run_async(run_demo(options, typer.echo))
    except DemoError as exc:
        raise _fail(f"the demo could not start: {exc}", 1) from None


# What the load test sets itself for the processes it starts.
_LOADTEST_OWN = frozenset(
    {"data_dir", "telegram_api", "host", "port", "public_url", "database_url"}
)


def _run_settings(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    """`--set NAME=VALUE` pairs, each checked as the product would read it."""
    chosen = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip().lower()
        if not sep or name not in Settings.model_fields:
            raise _fail(f"--set {pair!r}: not NAME=VALUE with NAME a setting's name", 2)
        if name in _LOADTEST_OWN:
            raise _fail(f"--set {name}: the load test sets it itself", 2)
        try:
            Settings.model_validate({name: value})
        except ValidationError as exc:
            raise _fail(f"--set {name}: {exc.errors()[0]['msg']}", 2) from None
        chosen.append((name, value))
    return tuple(chosen)


@app.command()
def loadtest(
    bots: Annotated[int, typer.Option(min=1, max=200, help="Bots to set up.")] = 10,
    rate: Annotated[float, typer.Option(min=0.1, help="Visitors per second, measured.")] = 200,
    duration: Annotated[float, typer.Option(min=1, help="Seconds measured.")] = 60,
    warmup: Annotated[float, typer.Option(min=0, help="Seconds at half rate first.")] = 30,
    rtt: Annotated[float, typer.Option(min=0, help="Telegram's round trip, ms.")] = 40,
    workers: Annotated[int, typer.Option(min=1, max=16, help="Worker processes.")] = 1,
    drain: Annotated[float, typer.Option(min=0, help="Seconds to wait for late answers.")] = 30,
    worker_slots: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=1024,
            help="Pin the updates a worker holds at once (default: adapts, from 32 up to 512).",
        ),
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the figures as JSON here.")
    ] = None,
    plot: Annotated[
        Path | None, typer.Option(help="Draw latency percentiles and rates over time (PNG).")
    ] = None,
    campaigns: Annotated[
        bool,
        typer.Option(
            "--campaigns",
            help="A running campaign per bot in its gate; every visitor joins through its link.",
        ),
    ] = False,
    joins: Annotated[
        bool,
        typer.Option(
            "--joins",
            help="Without campaigns: every visitor joins the second gate channel by @username.",
        ),
    ] = False,
    broadcast: Annotated[
        int,
        typer.Option(
            "--broadcast",
            min=0,
            max=1_000_000,
            metavar="N",
            help="N made-up people per bot who started it earlier; a broadcast to them is sent "
            "on every bot as the measured window opens, and runs on past it.",
        ),
    ] = 0,
    peer: Annotated[
        str | None,
        typer.Option(
            "--peer",
            metavar="aiogram",
            help="Run a peer in place of api, workers and PostgreSQL, under the same load: "
            "the same gate written with aiogram 3 (benchmarks/peer_aiogram.py, in its own "
            "virtual environment, made on first use).",
        ),
    ] = None,
    statements: Annotated[
        bool,
        typer.Option(
            "--statements",
            help="Also report PostgreSQL's time per visitor statement by statement "
            "(pg_stat_statements, loaded into the embedded server; a server of your own must "
            "load it already). Counting adds a little to PostgreSQL's CPU.",
        ),
    ] = False,
    citus: Annotated[
        int,
        typer.Option(
            "--citus",
            min=0,
            max=16,
            metavar="N",
            help="Run on a local Citus cluster of a coordinator and N workers (`sponsorbot "
            "citus up`, built from SPONSORBOT_CITUS_SOURCE) instead of the embedded server; "
            "the CPU of every node is counted.",
        ),
    ] = 0,
    setting: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="NAME=VALUE",
            help="A product setting for this run, by its name in the settings (for example "
            "worker_claim_gather_ms=30); repeatable. Api and workers get no SPONSORBOT_ "
            "variable of the caller's.",
        ),
    ] = None,
) -> None:
    """Start simulator, api and workers as processes, send visitors, report rates and latency."""
    from sponsorbot.loadtest.options import Options
    from sponsorbot.loadtest.plot import PlotUnavailable
    from sponsorbot.loadtest.report import table, write_json
    from sponsorbot.loadtest.runner import run_loadtest
    from sponsorbot.runtime import run_async

    configure_logging("text", "WARNING")
    if peer is not None and statements:
        raise _fail("--statements counts the product's database statements; a peer has none", 2)
    chosen = _run_settings(setting or [])
    if peer is not None and chosen:
        raise _fail("--set chooses the product's settings; a peer has none", 2)
    options = Options(
        bots,
        rate,
        duration,
        warmup,
        rtt,
        workers,
        drain,
        plot,
        worker_slots,
        campaigns,
        joins,
        broadcast=broadcast,
        peer=peer,
        statements=statements,
        settings=chosen,
    )
    figures: dict[str, object] = {}

    async def _main() -> None:
        figures.update(await run_loadtest(options, typer.echo))

    nodes = _loadtest_cluster(citus) if citus else None
    if nodes is not None:
        options = replace(
            options,
            citus_url=nodes.url,
            citus_nodes=tuple((n.name, n.pgdata) for n in nodes.nodes),
        )
    try:
        run_async(_main())
    except (RuntimeError, PlotUnavailable) as exc:
        raise _fail(f"load test failed: {exc}", 1) from None
    finally:
        if nodes is not None:
            _loadtest_cluster_down(nodes)
    setup = f"{bots} bots, api + {workers} worker(s), Telegram {rtt:g} ms away"
    if peer is not None:
        setup = f"{bots} bots, peer: {figures['peer']}, Telegram {rtt:g} ms away"
    if worker_slots is not None:
        setup += f", {worker_slots} slots"
    if campaigns:
        setup += ", campaigns"
    elif joins:
        setup += ", joins"
    if broadcast:
        setup += f", broadcast to {broadcast:,} per bot"
    if citus:
        setup += f", Citus: a coordinator and {citus} workers"
    if chosen:
        setup += ", " + ", ".join(f"{name}={value}" for name, value in chosen)
    typer.echo(table(setup, figures))
    if json_path is not None:
        write_json(json_path, figures)
        typer.echo(f"figures written to {json_path}")
    if plot is not None:
        typer.echo(f"plot drawn in {plot}")


def _loadtest_cluster(workers: int) -> Cluster:
    """`loadtest --citus N`: a new durable cluster (like the embedded server) in a folder of its
    own, Citus built from SPONSORBOT_CITUS_SOURCE (cached)."""
    from sponsorbot.ops.citus import CitusClusterError, up
    from sponsorbot.ops.citus_build import CitusBuildError, build

    tarball = _settings().citus_source
    if tarball is None:
        raise _fail("--citus needs the Citus source: set SPONSORBOT_CITUS_SOURCE", 2)
    folder = Path(tempfile.mkdtemp(prefix="sponsorbot-loadtest-citus-"))
    try:
        return up(folder / "cluster", build(tarball, echo=typer.echo), workers, True, typer.echo)
    except (CitusBuildError, CitusClusterError) as exc:
        raise _fail(str(exc), 1) from None


def _loadtest_cluster_down(nodes: Cluster) -> None:
    from sponsorbot.ops.citus import down

    folder = Path(nodes.coordinator.pgdata).parent
    down(folder, echo=lambda _: None)
    shutil.rmtree(folder.parent, ignore_errors=True)


payments_app = typer.Typer(help="TRON payments of the ad shop.", no_args_is_help=True)
app.add_typer(payments_app, name="payments")


@payments_app.command("verify")
def payments_verify(
    tx_hash: Annotated[str, typer.Argument(help="The transaction hash, or its TronScan link.")],
    network: Annotated[TronNetwork, typer.Option(help="The TRON network the shop takes.")],
    address: Annotated[str, typer.Option(help="The shop's address (T...).")],
    approved_at: Annotated[
        str, typer.Option(help="When the order was approved (ISO 8601 with a time zone).")
    ],
    trx_rate: Annotated[
        str | None,
        typer.Option(help="USDT per TRX locked at approval (TRX is credited in USDT with it)."),
    ] = None,
) -> None:
    """Judge one transaction as the shop's runner would, against the network's TronGrid URL
    (SPONSORBOT_TRONGRID_URL_MAINNET, …, else SPONSORBOT_TRONGRID_URL), printing one JSON line
    (verdict, reason, coin, amount, from, to, credited_usdt). A node whose block 0 is another
    network's is refused (exit 1), as the runner refuses it."""
    settings = _settings()
    try:
        approved = datetime.fromisoformat(approved_at)
    except ValueError:
        raise _fail(f"--approved-at is not an ISO 8601 time: {approved_at!r}") from None
    if approved.tzinfo is None:
        raise _fail("--approved-at needs a time zone (for example 2026-12-01T10:00:00Z)")
    rate: Decimal | None = None
    if trx_rate is not None:
        try:
            rate = Decimal(trx_rate)
        except InvalidOperation:
            rate = None
        if rate is None or not rate.is_finite() or rate <= 0:
            raise _fail(f"--trx-rate is not a positive number: {trx_rate!r}")
    base = settings.trongrid_url_for(network)

    async def _verify() -> dict[str, str | None]:
        async with aiohttp.ClientSession() as session:
            verdict = await verify_hash(
                session,
                base,
                settings.trongrid_api_key,
                tx_hash,
                network,
                address,
                approved,
                rate,
                accept_trx=True,
            )
        return verdict.to_json()

    try:
        line = asyncio.run(_verify())
    except (HashError, AddressError) as exc:
        raise _fail(str(exc)) from None
    except TronGridError as exc:
        raise _fail(f"TronGrid gave no usable answer: {exc}", 1) from None
    typer.echo(json.dumps(line))


citus_app = typer.Typer(help="A local Citus cluster for tests and trials.", no_args_is_help=True)
app.add_typer(citus_app, name="citus")


def _citus_folder(settings: Settings, data_dir: Path | None) -> Path:
    return data_dir if data_dir is not None else settings.data_dir / "citus"


@citus_app.command("up")
def citus_up(
    workers: Annotated[int, typer.Option(min=1, max=16, help="Worker nodes.")] = 2,
    data_dir: Annotated[
        Path | None, typer.Option(help="Where the nodes live (default: <data dir>/citus).")
    ] = None,
    source: Annotated[
        Path | None,
        typer.Option(help="The Citus source tarball (default: SPONSORBOT_CITUS_SOURCE)."),
    ] = None,
    fsync_off: Annotated[
        bool, typer.Option(help="fsync off: faster, and lost in a crash (tests only).")
    ] = False,
) -> None:
    """Build Citus once (cached), start a coordinator and workers on loopback, print its URL."""
    from sponsorbot.ops.citus import CitusClusterError, up
    from sponsorbot.ops.citus_build import CitusBuildError, build

    settings = _settings()
    tarball = source or settings.citus_source
    if tarball is None:
        raise _fail("no Citus source: pass --source or set SPONSORBOT_CITUS_SOURCE")
    try:
        install = build(tarball, echo=typer.echo)
        cluster = up(_citus_folder(settings, data_dir), install, workers, not fsync_off, typer.echo)
    except (CitusBuildError, CitusClusterError) as exc:
        raise _fail(str(exc), 1) from None
    typer.echo(cluster.url)


@citus_app.command("down")
def citus_down(
    data_dir: Annotated[
        Path | None, typer.Option(help="The folder `citus up` used (default: <data dir>/citus).")
    ] = None,
) -> None:
    """Stop the servers `sponsorbot citus up` started there."""
    from sponsorbot.ops.citus import CitusClusterError, down

    try:
        down(_citus_folder(_settings(), data_dir), typer.echo)
    except CitusClusterError as exc:
        raise _fail(str(exc), 1) from None


def main() -> None:
    """Entry point of the console script."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
