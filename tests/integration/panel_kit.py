"""Shared pieces for panel tests: the app on a test database, members of every role, forms."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import httpx
from fastapi import FastAPI

from sponsorbot.db.database import Database
from sponsorbot.engine.core import Engine
from sponsorbot.features.accounts.security import hash_password
from sponsorbot.features.accounts.users import LockoutPolicy
from sponsorbot.features.all import install
from sponsorbot.web.app import create_app
from sponsorbot.web.deps import Services
from sponsorbot.web.panel import PanelConfig
from tests.kit import make_settings, simulated_telegram

PASSWORD = "correct horse battery"
CSRF_FIELD = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass
class Clock:
    """The app's clock, moved by the test."""

    now: datetime = field(default_factory=lambda: datetime(2026, 3, 20, 9, 0, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        """Move time forward."""
        self.now += delta


@dataclass
class PanelApp:
    """The app with its clock, database pool, engine and the simulator's URL."""

    app: FastAPI
    clock: Clock
    pool: asyncpg.Pool
    engine: Engine
    services: Services
    telegram_url: str
    sim: object


def fast_config(clock: Clock) -> PanelConfig:
    """A panel whose failed sign-ins do not sleep, so tests stay fast."""
    return PanelConfig(clock=clock, lockout=LockoutPolicy(delay_step_s=0.0, max_delay_s=0.0))


@contextlib.asynccontextmanager
async def panel_app(pool: asyncpg.Pool, dsn: str, tmp_path: Path) -> AsyncIterator[PanelApp]:
    """The whole api app on the test's database, talking to a simulated Telegram."""
    async with simulated_telegram() as telegram:
        settings = make_settings(dsn, telegram.url, tmp_path)
        engine = Engine(settings, pool, dsn)
        features = install(engine)
        clock = Clock()
        app = create_app(settings, Database(dsn, pool, None), features, fast_config(clock))
        try:
            yield PanelApp(
                app, clock, pool, engine, Services.of(features), telegram.url, telegram.sim
            )
        finally:
            await engine.close()


def client(app: FastAPI) -> httpx.AsyncClient:
    """A browser-like client: keeps cookies, does not follow redirects."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://panel.test", follow_redirects=False
    )


async def add_member(pool: asyncpg.Pool, role: str, email: str | None = None) -> str:
    """A member of `role` with the test password; returns the e-mail."""
    email = email or f"{role}@example.com"
    await pool.execute(
        "INSERT INTO users (email, name, password_hash, role) VALUES ($1, $2, $3, $4)",
        email,
        role.title(),
        hash_password(PASSWORD),
        role,
    )
    return email


async def csrf_of(http: httpx.AsyncClient, path: str = "/signin") -> str:
    """The CSRF token a page's forms carry."""
    page = await http.get(path)
    match = CSRF_FIELD.search(page.text)
    assert match, f"no CSRF field on {path}"
    return match[1]


async def sign_in(http: httpx.AsyncClient, email: str, password: str = PASSWORD) -> httpx.Response:
    """Sign in through the form, as a browser would."""
    token = await csrf_of(http, "/signin")
    return await http.post("/signin", data={"csrf": token, "email": email, "password": password})
