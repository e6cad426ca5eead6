"""The `sponsorbot` command."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from sponsorbot import __version__
from sponsorbot.config import Role, Settings, SettingsError, load_settings
from sponsorbot.logs import configure_logging

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
    from sponsorbot.db.database import Database
    from sponsorbot.db.migrate import MigrationError
    from sponsorbot.db.migrate import migrate as apply
    from sponsorbot.runtime import run_async

    settings = _settings()

    async def _main() -> None:
        db = await Database.open(settings, "migrate")
        try:
            conn = await db.connect("migrate")
            try:
                applied = await apply(conn)
            finally:
                await conn.close()
        finally:
            await db.close()
        if applied:
            typer.echo(f"applied {len(applied)} migration(s): {', '.join(map(str, applied))}")
        else:
            typer.echo("the database is up to date")

    try:
        run_async(_main())
    except MigrationError as exc:
        raise _fail(str(exc), 1) from None


def main() -> None:
    """Entry point of the console script."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
