"""A panel under a given SPONSORBOT_SECRET_KEY, and a member who signs in with two-step: what
the key rotation and server move tests share."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import asyncpg
import pyotp

from sponsorbot.db.database import Database
from sponsorbot.engine.core import Engine
from sponsorbot.features.all import install
from sponsorbot.web.app import create_app
from sponsorbot.web.deps import Services
from tests.integration.panel_kit import (
    Clock,
    PanelApp,
    add_member,
    client,
    csrf_of,
    fast_config,
    sign_in,
)
from tests.kit import eventually, make_settings, tron_urls

# Nobody listens there: the panel's sign-in pages never call Telegram, and the jobs of a
# start in these tests must reach nothing outside either (TronGrid, the price sources).
NOBODY = "http://127.0.0.1:9"
OFFLINE = {"telegram_api": NOBODY, **tron_urls(NOBODY)}
CODES = re.compile(r'<ul class="codes" dir="ltr">(.*?)</ul>', re.DOTALL)
CODE = re.compile(r"<code>([A-Z2-7-]+)</code>")


@dataclasses.dataclass
class TwoStep:
    """A member with two-step sign-in on: the authenticator's secret and recovery codes."""

    email: str
    secret: str
    codes: list[str]


@contextlib.asynccontextmanager
async def keyed_panel(
    pool: asyncpg.Pool, dsn: str, tmp_path: Path, secret_key: str, clock: Clock
) -> AsyncIterator[PanelApp]:
    """The api app on `dsn` as a start with this SPONSORBOT_SECRET_KEY makes it: the engine's
    key check first (which refuses a key that opens nothing), then the features."""
    settings = make_settings(dsn, NOBODY, tmp_path, **(OFFLINE | {"secret_key": secret_key}))
    engine = Engine(settings, pool, dsn)
    await engine.bots.check_key()
    features = install(engine)
    config = dataclasses.replace(fast_config(clock), secret_key=secret_key.encode())
    app = create_app(settings, Database(dsn, pool, None), features, config)
    try:
        yield PanelApp(app, clock, pool, engine, Services.of(features), NOBODY, None)
    finally:
        await engine.close()


async def turn_on_two_step(panel: PanelApp, role: str = "owner") -> TwoStep:
    """A new member who turns two-step sign-in on in the panel; the codes it showed."""
    email = await add_member(panel.pool, role)
    async with client(panel.app) as http:
        await sign_in(http, email)
        page = await http.get("/account/two-step")
        secret = page.text.split('name="secret" value="')[1].split('"')[0]
        token = await csrf_of(http, "/account")
        code = pyotp.TOTP(secret).at(panel.clock())
        on = await http.post(
            "/account/two-step", data={"csrf": token, "secret": secret, "code": code}
        )
        assert on.status_code == 200, on.text
        shown = CODES.search(on.text)
        assert shown, "no recovery codes shown"
        codes = CODE.findall(shown[1])
        assert len(codes) == 10
    return TwoStep(email, secret, codes)


async def signs_in(panel: PanelApp, email: str, code: str | None, secret: str = "") -> bool:
    """Whether the member gets in with the password and then `code`, or (None) the
    authenticator's code of a moment later than the last one used."""
    if code is None:
        panel.clock.advance(timedelta(minutes=1))
        code = pyotp.TOTP(secret).at(panel.clock())
    async with client(panel.app) as http:
        first = await sign_in(http, email)
        assert first.headers["location"] == "/signin/two-step", first.text
        token = await csrf_of(http, "/signin/two-step")
        second = await http.post("/signin/two-step", data={"csrf": token, "code": code})
        return second.status_code == 303 and (await http.get("/")).status_code == 200


async def run_jobs(engine: Engine, *jobs: str) -> None:
    """Tick the engine's scheduler, as a worker does from its start, until each of `jobs`
    has run once (every job runs at the first tick whose lease it gets)."""
    stop = asyncio.Event()
    ticking = asyncio.create_task(engine.scheduler.run(stop))

    async def ran() -> bool:
        return all(engine.scheduler.runs.get(job, 0) >= 1 for job in jobs)

    try:
        await eventually(ran)
    finally:
        stop.set()
        await ticking
