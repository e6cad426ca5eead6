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
from sponsorbot.web.parts.all import WEB_PARTS
from sponsorbot.web.registry import WebPart
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


TEST_KEY = b"an installation key for the panel tests"


def fast_config(clock: Clock) -> PanelConfig:
    """A panel whose failed sign-ins do not sleep, so tests stay fast. The test client talks
    plain http to panel.test, so cookies are not Secure (automatic mode is tested apart)."""
    return PanelConfig(
        clock=clock,
        lockout=LockoutPolicy(delay_step_s=0.0, max_delay_s=0.0),
        secure_cookies=False,
        secret_key=TEST_KEY,
    )


@contextlib.asynccontextmanager
async def panel_app(
    pool: asyncpg.Pool, dsn: str, tmp_path: Path, parts: tuple[WebPart, ...] = WEB_PARTS
) -> AsyncIterator[PanelApp]:
    """The whole api app on the test's database, talking to a simulated Telegram, serving
    `parts` (every web part unless told)."""
    async with simulated_telegram() as telegram:
        settings = make_settings(dsn, telegram.url, tmp_path)
        engine = Engine(settings, pool, dsn)
        features = install(engine)
        clock = Clock()
        db = Database(dsn, pool, None)
        app = create_app(settings, db, features, fast_config(clock), parts)
        try:
            yield PanelApp(app, clock, pool, engine, app.state.services, telegram.url, telegram.sim)
        finally:
            await engine.close()


SECURE_ATTRIBUTE = re.compile(rb";\s*Secure(?=;|$)", re.IGNORECASE)


class _PlainHttpCookies(httpx.AsyncBaseTransport):
    """The app over ASGI, its cookies kept by the client over the test's plain http as a
    browser keeps them over https: a panel on automatic sends Secure cookies to panel.test,
    a host that is not loopback, and httpx would otherwise never send them back."""

    def __init__(self, app: FastAPI) -> None:
        self.inner = httpx.ASGITransport(app=app)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        headers = [
            (k, SECURE_ATTRIBUTE.sub(b"", v) if k.lower() == b"set-cookie" else v)
            for k, v in response.headers.raw
        ]
        return httpx.Response(
            response.status_code,
            headers=headers,
            stream=response.stream,
            extensions=response.extensions,
        )


def client(app: FastAPI) -> httpx.AsyncClient:
    """A browser-like client: keeps cookies, does not follow redirects."""
    return httpx.AsyncClient(
        transport=_PlainHttpCookies(app), base_url="http://panel.test", follow_redirects=False
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
