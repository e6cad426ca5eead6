"""The panel's sign-in, hardened: second-step counting and replays, trusted proxies, pauses
per pair, quiet audit, enumeration, cookies, passwords, secrets at rest, links, headers and
bounded forms."""

from __future__ import annotations

import hashlib
import ipaddress
import time
from datetime import timedelta

import httpx
import pyotp
import pytest

from sponsorbot.features.accounts.security import hash_password_async
from sponsorbot.features.accounts.users import LockoutPolicy
from sponsorbot.web.panel import announce_setup_code
from sponsorbot.web.panel.web import SESSION_COOKIE, PanelConfig
from tests.integration.panel_kit import (
    PASSWORD,
    PanelApp,
    add_member,
    client,
    csrf_of,
    sign_in,
)

NEW_PASSWORD = "a brand new passphrase"
CODES = '<ul class="codes" dir="ltr"><li><code>'


def _config(panel: PanelApp) -> PanelConfig:
    config: PanelConfig = panel.app.state.panel.config
    return config


def _from(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


async def _post_signin(
    http: httpx.AsyncClient, email: str, password: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    token = await csrf_of(http, "/signin")
    data = {"csrf": token, "email": email, "password": password}
    return await http.post("/signin", data=data, headers=headers or {})


async def _two_step(http: httpx.AsyncClient, code: str) -> httpx.Response:
    token = await csrf_of(http, "/signin/two-step")
    return await http.post("/signin/two-step", data={"csrf": token, "code": code})


async def _turn_on_two_step(panel: PanelApp, http: httpx.AsyncClient) -> tuple[str, list[str]]:
    page = await http.get("/account/two-step")
    secret = page.text.split('name="secret" value="')[1].split('"')[0]
    token = await csrf_of(http, "/account")
    code = pyotp.TOTP(secret).at(panel.clock())
    on = await http.post("/account/two-step", data={"csrf": token, "secret": secret, "code": code})
    assert on.status_code == 200
    codes = [c.split("<")[0] for c in on.text.split(CODES)[1].split("<li><code>")]
    return secret, codes


async def _sign_out(http: httpx.AsyncClient) -> None:
    token = await csrf_of(http, "/account")
    await http.post("/signout", data={"csrf": token})


# -- M4 ----------------------------------------------------------------------------------------


async def test_a_correct_password_does_not_reset_the_count_of_wrong_codes(panel: PanelApp) -> None:
    """M4: wrong codes keep counting across fresh password steps; past the limit the password
    step itself is refused until the window has passed."""
    email = await add_member(panel.pool, "owner")
    secret = pyotp.random_base32()
    await panel.pool.execute("UPDATE users SET totp_secret = $1", secret)
    async with client(panel.app) as http:
        await sign_in(http, email)
        for _ in range(4):
            assert (await _two_step(http, "000000")).status_code == 401
        assert (await sign_in(http, email)).headers["location"] == "/signin/two-step"
        assert (await _two_step(http, "000000")).status_code == 401
        forced = await _two_step(http, pyotp.TOTP(secret).at(panel.clock()))
        assert forced.headers["location"] == "/signin"  # even the right code: password again
        assert (await sign_in(http, email)).status_code == 429
        panel.clock.advance(timedelta(minutes=16))
        assert (await sign_in(http, email)).headers["location"] == "/signin/two-step"
        ok = await _two_step(http, pyotp.TOTP(secret).at(panel.clock()))
        assert ok.status_code == 303 and ok.headers["location"] == "/"


async def test_an_authenticator_code_works_once(panel: PanelApp) -> None:
    """M4: the last used step is stored; the same code (or an older one) is refused."""
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        await sign_in(http, email)
        secret, _codes = await _turn_on_two_step(panel, http)
        await _sign_out(http)
        code = pyotp.TOTP(secret).at(panel.clock())
        await sign_in(http, email)
        assert (await _two_step(http, code)).status_code == 303
        await _sign_out(http)
        await sign_in(http, email)
        assert (await _two_step(http, code)).status_code == 401  # replayed
        older = pyotp.TOTP(secret).at(panel.clock() - timedelta(seconds=30))
        assert (await _two_step(http, older)).status_code == 401
        panel.clock.advance(timedelta(seconds=30))
        assert (await _two_step(http, pyotp.TOTP(secret).at(panel.clock()))).status_code == 303


async def test_the_second_step_slows_down_like_the_password(panel: PanelApp) -> None:
    """M4: wrong codes make the next answer wait, as wrong passwords do."""
    email = await add_member(panel.pool, "owner")
    await panel.pool.execute("UPDATE users SET totp_secret = $1", pyotp.random_base32())
    # Lower bounds only: a busy machine makes every answer slower, never faster. Each wrong
    # code adds 0.4 s, so the third answer waits at least 0.8 s.
    _config(panel).lockout = LockoutPolicy(delay_step_s=0.4, max_delay_s=2.0)
    async with client(panel.app) as http:
        await sign_in(http, email)
        for _ in range(2):
            await _two_step(http, "000000")
        started = time.monotonic()
        await _two_step(http, "000000")
        assert time.monotonic() - started >= 0.75


# -- M5 and L10 --------------------------------------------------------------------------------


async def test_behind_a_trusted_proxy_one_attacker_cannot_lock_the_owner_out(
    panel: PanelApp,
) -> None:
    """M5: the forwarded address counts behind a trusted proxy, so an attacker's failures
    pause only their own address, and the owner signs in from theirs."""
    _config(panel).trusted_networks = (ipaddress.ip_network("127.0.0.0/8"),)
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as attacker, client(panel.app) as owner:
        for _ in range(8):
            await _post_signin(attacker, email, "guess", _from("203.0.113.66"))
        assert (
            await _post_signin(attacker, email, PASSWORD, _from("203.0.113.66"))
        ).status_code == (429)
        mine = await _post_signin(owner, email, PASSWORD, _from("198.51.100.1"))
        assert mine.status_code == 303
    addresses = await panel.pool.fetch("SELECT DISTINCT address FROM audit_log ORDER BY 1")
    assert [r["address"] for r in addresses] == ["198.51.100.1", "203.0.113.66"]


async def test_without_trust_a_forwarded_header_changes_nothing(panel: PanelApp) -> None:
    """M5: a header from an untrusted peer cannot rotate the counted address."""
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        for i in range(5):
            await _post_signin(http, email, "guess", _from(f"203.0.113.{i}"))
        assert (await _post_signin(http, email, PASSWORD, _from("198.51.100.9"))).status_code == 429


async def test_refused_and_failed_attempts_are_one_audit_row_each(panel: PanelApp) -> None:
    """M5: anonymous hammering writes one row per kind, e-mail and address per window."""
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        for _ in range(30):
            await _post_signin(http, email, "guess")
        panel.clock.advance(timedelta(minutes=16))
        await _post_signin(http, email, "guess")
    rows = await panel.pool.fetch("SELECT kind, after FROM audit_log ORDER BY id")
    assert [(r["kind"], r["after"]) for r in rows] == [
        ("signin.failed", {"attempts": 5}),
        ("signin.locked", None),
        ("signin.refused_locked", {"attempts": 25}),
        ("signin.failed", None),
    ]


async def test_unknown_and_known_e_mails_answer_alike(panel: PanelApp) -> None:
    """L10: the pause derives from failures by e-mail, account or not."""
    known = await add_member(panel.pool, "owner")
    answers = {}
    for email in (known, "nobody@example.com"):
        async with client(panel.app) as http:
            statuses = [(await _post_signin(http, email, "guess")).status_code for _ in range(6)]
            answers[email] = statuses
        await panel.pool.execute("DELETE FROM signin_failures")
    assert answers[known] == answers["nobody@example.com"] == [401] * 5 + [429]


# -- M6 ----------------------------------------------------------------------------------------


async def test_setup_checks_the_code_before_hashing_the_password(
    panel: PanelApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M6: a wrong setup code costs no argon2 hash."""
    hashed: list[str] = []

    async def counting(password: str) -> str:
        hashed.append(password)
        return await hash_password_async(password)

    monkeypatch.setattr("sponsorbot.web.panel.routes_auth.hash_password_async", counting)
    code = await announce_setup_code(panel.pool, _config(panel))
    assert code is not None
    form = {
        "name": "Owner",
        "email": "owner@example.com",
        "password": PASSWORD,
        "password2": PASSWORD,
    }
    async with client(panel.app) as http:
        csrf = await csrf_of(http, "/setup")
        wrong = await http.post("/setup", data={**form, "csrf": csrf, "code": "AAAA-BBBB-CCCC"})
        assert wrong.status_code == 422 and hashed == []
        ok = await http.post("/setup", data={**form, "csrf": csrf, "code": code})
        assert ok.status_code == 303 and hashed == [PASSWORD]


# -- M13 ---------------------------------------------------------------------------------------


async def test_cookies_are_secure_with_the_host_prefix_off_loopback(panel: PanelApp) -> None:
    """M13: automatic mode: a non-loopback host gets Secure __Host- cookies and HSTS; plain
    http on 127.0.0.1 keeps plain cookies (the demo, tests)."""
    _config(panel).secure_cookies = None
    email = await add_member(panel.pool, "owner")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=panel.app), base_url="https://panel.example"
    ) as http:
        response = await sign_in(http, email)
        cookie = next(c for c in response.headers.get_list("set-cookie") if "sb_session=" in c)
        assert cookie.startswith(f"__Host-{SESSION_COOKIE}=") and "Secure" in cookie
        assert (await http.get("/")).status_code == 200
        assert "Strict-Transport-Security" in response.headers
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=panel.app), base_url="http://127.0.0.1:8000"
    ) as http:
        response = await sign_in(http, email)
        cookie = next(c for c in response.headers.get_list("set-cookie") if "sb_session=" in c)
        assert cookie.startswith(f"{SESSION_COOKIE}=") and "Secure" not in cookie
        assert "Strict-Transport-Security" not in response.headers


async def test_a_session_ends_after_its_absolute_lifetime(panel: PanelApp) -> None:
    """M13: however active, a session ends 14 days after signing in."""
    _config(panel).idle_timeout = timedelta(days=3)
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        await sign_in(http, email)
        for _ in range(6):
            panel.clock.advance(timedelta(days=2))
            assert (await http.get("/")).status_code == 200
        panel.clock.advance(timedelta(days=2, seconds=1))
        assert (await http.get("/")).status_code == 303


# -- M15 ---------------------------------------------------------------------------------------


async def test_a_member_changes_their_password_and_other_sessions_end(panel: PanelApp) -> None:
    """M15: the current password is required; other sessions end, this one stays."""
    email = await add_member(panel.pool, "editor")
    async with client(panel.app) as http, client(panel.app) as other:
        await sign_in(http, email)
        await sign_in(other, email)
        token = await csrf_of(http, "/account")
        form = {"csrf": token, "password": NEW_PASSWORD, "password2": NEW_PASSWORD}
        wrong = await http.post("/account/password", data={**form, "current": "not it"})
        assert wrong.status_code == 422 and "not your current password" in wrong.text
        short = await http.post(
            "/account/password", data={**form, "current": PASSWORD, "password": "short"}
        )
        assert short.status_code == 422
        ok = await http.post("/account/password", data={**form, "current": PASSWORD})
        assert ok.status_code == 200
        assert (await http.get("/")).status_code == 200
        assert (await other.get("/")).status_code == 303
    async with client(panel.app) as http:
        assert (await sign_in(http, email)).status_code == 401
        assert (await sign_in(http, email, NEW_PASSWORD)).status_code == 303
    kinds = await panel.pool.fetch("SELECT kind FROM audit_log WHERE user_id IS NOT NULL")
    assert "account.password_changed" in [r["kind"] for r in kinds]


async def test_the_owner_makes_a_one_time_reset_link(panel: PanelApp) -> None:
    """M15 and L13: the link comes from the configured panel URL, sets the password once,
    and ends the member's sessions; a used or expired link is gone."""
    _config(panel).panel_url = "https://panel.example.org/"
    owner = await add_member(panel.pool, "owner")
    editor = await add_member(panel.pool, "editor")
    editor_id = await panel.pool.fetchval("SELECT id FROM users WHERE email = $1", editor)
    async with client(panel.app) as boss, client(panel.app) as member:
        await sign_in(member, editor)
        await sign_in(boss, owner)
        token = await csrf_of(boss, "/team")
        made = await boss.post(f"/team/{editor_id}/reset", data={"csrf": token})
        assert made.status_code == 200
        link = made.text.split('class="copy" readonly value="')[1].split('"')[0]
        assert link.startswith("https://panel.example.org/reset/")
        path = link.removeprefix("https://panel.example.org")
        stored = await panel.pool.fetchval("SELECT token_hash FROM password_resets")
        assert bytes(stored) == hashlib.sha256(path.split("/")[-1].encode()).digest()
    async with client(panel.app) as http:
        page = await http.get(path)
        assert page.status_code == 200 and editor in page.text
        csrf = await csrf_of(http, path)
        form = {"csrf": csrf, "password": NEW_PASSWORD, "password2": NEW_PASSWORD}
        done = await http.post(path, data=form)
        assert done.status_code == 303 and done.headers["location"] == "/signin"
        assert (await http.post(path, data=form)).status_code == 404
        assert (await sign_in(http, editor, NEW_PASSWORD)).status_code == 303
    assert (
        await panel.pool.fetchval(
            "SELECT count(*) FROM panel_sessions WHERE user_id = $1", editor_id
        )
        == 1
    )  # the old session ended; this is the new sign-in
    async with client(panel.app) as boss:
        await sign_in(boss, owner)
        token = await csrf_of(boss, "/team")
        made = await boss.post(f"/team/{editor_id}/reset", data={"csrf": token})
        link = made.text.split('class="copy" readonly value="')[1].split('"')[0]
    panel.clock.advance(timedelta(hours=24, seconds=1))
    async with client(panel.app) as http:
        assert (await http.get(link.removeprefix("https://panel.example.org"))).status_code == 404


async def test_invitation_links_use_the_configured_panel_url(panel: PanelApp) -> None:
    """L13: not the Host header the request happened to carry."""
    _config(panel).panel_url = "https://panel.example.org"
    owner = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        await sign_in(http, owner)
        token = await csrf_of(http, "/team")
        made = await http.post(
            "/team/invitations",
            data={"csrf": token, "email": "new@example.com", "role": "editor"},
            headers={"Host": "evil.example"},
        )
        assert 'value="https://panel.example.org/invite/' in made.text
        assert "evil.example" not in made.text


async def test_turning_two_step_off_or_renewing_codes_needs_the_password_or_a_code(
    panel: PanelApp,
) -> None:
    """M15: a left-open session alone cannot weaken the account."""
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        await sign_in(http, email)
        secret, old_codes = await _turn_on_two_step(panel, http)
        token = await csrf_of(http, "/account")
        bare = await http.post("/account/two-step/off", data={"csrf": token})
        assert bare.status_code == 422
        renew = await http.post(
            "/account/two-step/recovery-codes", data={"csrf": token, "confirm_codes": "wrong"}
        )
        assert renew.status_code == 422
        panel.clock.advance(timedelta(seconds=30))
        code = pyotp.TOTP(secret).at(panel.clock())
        renew = await http.post(
            "/account/two-step/recovery-codes", data={"csrf": token, "confirm_codes": code}
        )
        assert renew.status_code == 200
        new_codes = [c.split("<")[0] for c in renew.text.split(CODES)[1].split("<li><code>")]
        assert len(new_codes) == 10 and not set(new_codes) & set(old_codes)
        assert await panel.pool.fetchval("SELECT totp_secret IS NOT NULL FROM users")
        off = await http.post(
            "/account/two-step/off", data={"csrf": token, "confirm_off": PASSWORD}
        )
        assert off.status_code == 303
        assert await panel.pool.fetchval("SELECT totp_secret IS NULL FROM users")


# -- L3 ----------------------------------------------------------------------------------------


async def test_two_step_secrets_are_sealed_and_clear_ones_are_sealed_on_use(
    panel: PanelApp,
) -> None:
    """L3: the database holds no clear TOTP secret nor a plain hash of a recovery code; a
    clear secret from before still works and is sealed at its next use."""
    email = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        await sign_in(http, email)
        secret, codes = await _turn_on_two_step(panel, http)
        row = await panel.pool.fetchrow("SELECT totp_secret, recovery_codes FROM users")
        assert row["totp_secret"].startswith("v1:") and secret not in row["totp_secret"]
        plain = {hashlib.sha256(c.encode()).digest() for c in codes}
        assert not plain & {bytes(d) for d in row["recovery_codes"]}
        await _sign_out(http)
        await sign_in(http, email)
        assert (await _two_step(http, codes[0].lower())).status_code == 303
        await _sign_out(http)

        legacy = pyotp.random_base32()
        await panel.pool.execute("UPDATE users SET totp_secret = $1", legacy)
        panel.clock.advance(timedelta(seconds=60))
        await sign_in(http, email)
        assert (await _two_step(http, pyotp.TOTP(legacy).at(panel.clock()))).status_code == 303
        resealed = await panel.pool.fetchval("SELECT totp_secret FROM users")
        assert resealed.startswith("v1:") and legacy not in resealed


# -- L14, M1, L9 -------------------------------------------------------------------------------


async def test_the_htmx_redirect_never_leaves_the_site(panel: PanelApp) -> None:
    """L14: a tab in `next` would become //host once a browser strips it."""
    async with client(panel.app) as http:
        token = await csrf_of(http)
        answer = await http.post(
            "/language",
            data={"csrf": token, "language": "fa", "next": "/\t/evil.example"},
            headers={"HX-Request": "true"},
        )
        assert answer.status_code == 204 and answer.headers["HX-Redirect"] == "/"


async def test_anonymous_forms_cannot_carry_files_or_many_fields(panel: PanelApp) -> None:
    """M1: the CSRF check parses anonymous forms with tight bounds: a clear 400, no spooling."""
    async with client(panel.app) as http:
        token = await csrf_of(http)
        with_file = await http.post(
            "/signin",
            data={"csrf": token, "email": "a@example.com"},
            files={"upload": ("small.bin", b"x" * 1000)},
        )
        assert with_file.status_code == 400
        many = {f"f{i}": "x" for i in range(60)}
        assert (await http.post("/signin", data={"csrf": token, **many})).status_code == 400
        huge = await http.post("/signin", data={"csrf": token, "email": "x" * 70_000})
        assert huge.status_code in (400, 413)  # 413: the body limit in front, if any
        in_header = await http.post(
            "/signin",
            data={"email": "a@example.com"},
            files={"upload": ("small.bin", b"x" * 1000)},
            headers={"X-CSRF-Token": token},
        )
        assert in_header.status_code == 400  # the route's own parse is bounded as well
        ok = await http.post("/signin", data={"csrf": token, "email": "a@example.com"})
        assert ok.status_code == 401


async def test_every_panel_response_carries_the_security_headers(panel: PanelApp) -> None:
    """L9: pages, redirects and static files; the owner API is left to its own headers."""
    async with client(panel.app) as http:
        for path in ("/signin", "/", "/static/panel.js", "/nowhere"):
            answer = await http.get(path)
            assert answer.headers["Content-Security-Policy"].startswith("default-src 'self'"), path
            assert answer.headers["X-Content-Type-Options"] == "nosniff", path
            assert answer.headers["X-Frame-Options"] == "DENY", path
        api = await http.get("/api/openapi.json")
        assert "Content-Security-Policy" not in api.headers


async def test_a_burst_of_parallel_guesses_is_counted_one_by_one(panel: PanelApp) -> None:
    """M4/M5: parallel attempts all read the failure count before any was written, so a burst
    got every guess checked; now each waits for the one before and meets the limit."""
    import asyncio

    owner = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        token = await csrf_of(http, "/signin")
        data = {"csrf": token, "email": owner, "password": "not the password at all"}
        answers = await asyncio.gather(*(http.post("/signin", data=data) for _ in range(20)))
    statuses = sorted(a.status_code for a in answers)
    limit = _config(panel).lockout.pair_limit
    assert statuses.count(401) == limit and statuses.count(429) == 20 - limit
    checked = await panel.pool.fetchval("SELECT count(*) FROM signin_failures")
    assert checked == limit
