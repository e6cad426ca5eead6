"""Getting in: setup code, sign-in, sessions, CSRF, two-step, lockout, sign-out everywhere."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import asyncpg
import pyotp
import pytest

from sponsorbot.web.panel import announce_setup_code
from sponsorbot.web.panel.web import (
    DEMO_EMAIL_VARIABLE,
    DEMO_PASSWORD_VARIABLE,
    SESSION_COOKIE,
)
from tests.integration.panel_kit import (
    PASSWORD,
    PanelApp,
    add_member,
    client,
    csrf_of,
    panel_app,
    sign_in,
)

DEMO_BOX = re.compile(r'<div class="notice" id="demo-account".*?</div>', re.DOTALL)


@pytest.fixture
async def demo_panel(
    monkeypatch: pytest.MonkeyPatch, pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> AsyncIterator[PanelApp]:
    """The panel as `sponsorbot demo`'s product builds it: the demo passes its account down
    in the environment."""
    monkeypatch.setenv(DEMO_EMAIL_VARIABLE, "demo@example.com")
    monkeypatch.setenv(DEMO_PASSWORD_VARIABLE, PASSWORD)
    async with panel_app(pool, db_dsn, tmp_path) as app:
        yield app


def _setup_form(csrf: str, code: str, **extra: str) -> dict[str, str]:
    form = {
        "csrf": csrf,
        "code": code,
        "name": "Owner",
        "email": "owner@example.com",
        "password": PASSWORD,
        "password2": PASSWORD,
    }
    form.update(extra)
    return form


async def test_setup_with_the_console_code_creates_the_owner_then_closes(
    panel: PanelApp, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await announce_setup_code(panel.pool)
    assert code is not None and code in capsys.readouterr().err
    stored = await panel.pool.fetchval("SELECT count(*) FROM setup_codes")
    assert stored == 1
    assert code.encode() not in bytes(
        await panel.pool.fetchval("SELECT code_hash FROM setup_codes")
    )
    async with client(panel.app) as http:
        csrf = await csrf_of(http, "/setup")
        wrong = await http.post("/setup", data=_setup_form(csrf, "AAAA-BBBB-CCCC"))
        assert wrong.status_code == 422 and "wrong or has expired" in wrong.text
        short = await http.post("/setup", data=_setup_form(csrf, code, password2="x", password="x"))
        assert short.status_code == 422 and "at least" in short.text
        ok = await http.post("/setup", data=_setup_form(csrf, code.lower()))
        assert ok.status_code == 303 and ok.headers["location"] == "/"
        assert (await http.get("/")).status_code == 200
        assert (await http.get("/setup")).status_code == 404
    assert await announce_setup_code(panel.pool) is None
    kinds = [r["kind"] for r in await panel.pool.fetch("SELECT kind FROM audit_log")]
    assert kinds == ["team.owner_created"]


async def test_the_demos_sign_in_page_shows_its_account(demo_panel: PanelApp) -> None:
    email = await add_member(demo_panel.pool, "owner", "demo@example.com")
    async with client(demo_panel.app) as http:
        page = await http.get("/signin")
        failed = await sign_in(http, email, "wrong password")
        assert (await sign_in(http, email)).status_code == 303  # the account shown signs in
    assert page.status_code == 200 and failed.status_code == 401
    for html in (page.text, failed.text):
        box = DEMO_BOX.search(html)
        assert box, html
        assert "This is the demo: sign in as" in box[0]
        assert "<code>demo@example.com</code>" in box[0]
        assert f'<code class="nowrap">{PASSWORD}</code>' in box[0]  # never split at a hyphen


async def test_a_panel_not_the_demos_shows_no_account_on_sign_in(panel: PanelApp) -> None:
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        page = await http.get("/signin")
        failed = await sign_in(http, email, "wrong password")
    assert page.status_code == 200 and failed.status_code == 401
    for html in (page.text, failed.text):
        assert not DEMO_BOX.search(html) and "This is the demo" not in html


async def test_an_expired_setup_code_is_refused(panel: PanelApp) -> None:
    code = await announce_setup_code(panel.pool, panel.app.state.panel.config)
    assert code is not None
    panel.clock.advance(timedelta(hours=1, seconds=1))
    async with client(panel.app) as http:
        csrf = await csrf_of(http, "/setup")
        response = await http.post("/setup", data=_setup_form(csrf, code))
        assert response.status_code == 422


async def test_forms_without_the_csrf_token_are_refused(panel: PanelApp) -> None:
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        no_token = await http.post("/signin", data={"email": email, "password": PASSWORD})
        assert no_token.status_code == 403
        await csrf_of(http)  # the pre-session cookie is set now, but the form still lacks it
        wrong = await http.post("/signin", data={"csrf": "x" * 43, "email": email})
        assert wrong.status_code == 403
        assert (await sign_in(http, email)).status_code == 303
        no_header = await http.post("/settings", data={"name": "Changed"})
        assert no_header.status_code == 403
        token = await csrf_of(http, "/settings")
        htmx = await http.post(
            "/settings",
            data={"name": "Changed", "time_zone": "UTC", "default_language": "en"},
            headers={"X-CSRF-Token": token, "HX-Request": "true"},
        )
        assert htmx.status_code == 204 and htmx.headers["HX-Redirect"].startswith("/settings")
    assert await panel.pool.fetchval("SELECT name FROM workspace") == "Changed"


async def test_session_cookie_is_httponly_lax_and_ends_after_idle_time(panel: PanelApp) -> None:
    email = await add_member(panel.pool, "admin")
    async with client(panel.app) as http:
        response = await sign_in(http, email)
        cookie = next(
            c for c in response.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE)
        )
        assert "HttpOnly" in cookie and "SameSite=lax" in cookie
        session_id = http.cookies[SESSION_COOKIE]
        stored = await panel.pool.fetchval("SELECT id_hash FROM panel_sessions")
        assert session_id.encode() not in bytes(stored)
        panel.clock.advance(timedelta(hours=1))
        assert (await http.get("/bots")).status_code == 200  # activity pushes the deadline on
        panel.clock.advance(timedelta(hours=2, seconds=1))
        gone = await http.get("/bots")
        assert gone.status_code == 303 and gone.headers["location"] == "/signin?next=%2Fbots"


async def test_wrong_passwords_pause_the_pair_and_are_audited(panel: PanelApp) -> None:
    """M5: five failures pause this e-mail from this address; the failures are one audit row
    that counts them."""
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        for _ in range(5):
            assert (await sign_in(http, email, "wrong password")).status_code == 401
        locked = await sign_in(http, email)  # the right password, but the pair is paused
        assert locked.status_code == 429
        panel.clock.advance(timedelta(minutes=16))
        assert (await sign_in(http, email)).status_code == 303
    rows = await panel.pool.fetch("SELECT kind, after FROM audit_log ORDER BY id")
    assert [r["kind"] for r in rows] == [
        "signin.failed",
        "signin.locked",
        "signin.refused_locked",
        "signin",
    ]
    assert rows[0]["after"] == {"attempts": 5}


async def test_one_address_guessing_many_accounts_is_stopped(panel: PanelApp) -> None:
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        for i in range(20):
            assert (await sign_in(http, f"guess{i}@example.com", "x")).status_code == 401
        assert (await sign_in(http, email)).status_code == 429


async def test_two_step_sign_in_with_code_recovery_code_and_expiry(panel: PanelApp) -> None:
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        await sign_in(http, email)
        page = await http.get("/account/two-step")
        secret = page.text.split('name="secret" value="')[1].split('"')[0]
        token = await csrf_of(http, "/account")
        code = pyotp.TOTP(secret).at(panel.clock())
        on = await http.post(
            "/account/two-step", data={"csrf": token, "secret": secret, "code": code}
        )
        assert on.status_code == 200 and "recovery codes" in on.text
        recovery = on.text.split('<ul class="codes" dir="ltr"><li><code>')[1].split("<")[0]
        await http.post("/signout", data={"csrf": token})

        first = await sign_in(http, email)
        assert first.headers["location"] == "/signin/two-step"
        assert (await http.get("/")).status_code == 303  # half signed in is not signed in
        token = await csrf_of(http, "/signin/two-step")
        bad = await http.post("/signin/two-step", data={"csrf": token, "code": "000000"})
        assert bad.status_code == 401
        good = await http.post(
            "/signin/two-step", data={"csrf": token, "code": pyotp.TOTP(secret).at(panel.clock())}
        )
        assert good.status_code == 303 and (await http.get("/")).status_code == 200
        token = await csrf_of(http, "/account")
        await http.post("/signout", data={"csrf": token})

        await sign_in(http, email)
        panel.clock.advance(timedelta(minutes=5, seconds=1))
        expired = await http.get("/signin/two-step")
        assert expired.headers["location"] == "/signin"

        await sign_in(http, email)
        token = await csrf_of(http, "/signin/two-step")
        used = await http.post("/signin/two-step", data={"csrf": token, "code": recovery})
        assert used.status_code == 303 and (await http.get("/")).status_code == 200
        token = await csrf_of(http, "/account")
        await http.post("/signout", data={"csrf": token})
        await sign_in(http, email)
        token = await csrf_of(http, "/signin/two-step")
        again = await http.post("/signin/two-step", data={"csrf": token, "code": recovery})
        assert again.status_code == 401  # a recovery code works once


async def test_sign_out_everywhere_ends_other_browsers(panel: PanelApp) -> None:
    email = await add_member(panel.pool, "editor")
    async with client(panel.app) as one, client(panel.app) as two:
        await sign_in(one, email)
        await sign_in(two, email)
        token = await csrf_of(one, "/account")
        response = await one.post("/signout/everywhere", data={"csrf": token})
        assert response.headers["location"] == "/signin"
        assert (await two.get("/")).status_code == 303
        assert (await one.get("/")).status_code == 303


async def test_guessing_two_step_codes_locks_the_account(panel: PanelApp) -> None:
    email = await add_member(panel.pool, "owner")
    await panel.pool.execute("UPDATE users SET totp_secret = $1", pyotp.random_base32())
    async with client(panel.app) as http:
        await sign_in(http, email)
        token = await csrf_of(http, "/signin/two-step")
        for _ in range(5):
            wrong = await http.post("/signin/two-step", data={"csrf": token, "code": "123456"})
            assert wrong.status_code == 401
        refused = await http.post("/signin/two-step", data={"csrf": token, "code": "123456"})
        assert refused.headers["location"] == "/signin"
        assert await panel.pool.fetchval("SELECT count(*) FROM panel_sessions") == 0


def test_setup_code_command_prints_a_code_until_an_owner_exists(
    db_dsn: str, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from sponsorbot.cli import app as cli

    env = {"SPONSORBOT_DATABASE_URL": db_dsn, "SPONSORBOT_DATA_DIR": str(tmp_path)}
    first = CliRunner().invoke(cli, ["setup-code"], env=env)
    assert first.exit_code == 0, first.output
    code = first.output.split("setup code: ")[1].split()[0]
    assert len(code) == 14

    async def count_and_add_owner() -> int:
        conn = await asyncpg.connect(db_dsn)
        try:
            n = int(await conn.fetchval("SELECT count(*) FROM setup_codes"))
            await conn.execute(
                "INSERT INTO users (email, name, password_hash, role) "
                "VALUES ('o@example.com', 'O', 'x', 'owner')"
            )
            return n
        finally:
            await conn.close()

    assert asyncio.run(count_and_add_owner()) == 1
    closed = CliRunner().invoke(cli, ["setup-code"], env=env)
    assert closed.exit_code == 1 and "already has an owner" in closed.output
