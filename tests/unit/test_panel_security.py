"""The panel's security helpers on their own: redirects, proxies, cookies, keys, codes, hashing
off the event loop, and templates the Content-Security-Policy can serve."""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import re
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pyotp
import pytest
from argon2 import PasswordHasher, extract_parameters
from starlette.requests import Request

from sponsorbot.features.accounts import security
from sponsorbot.features.accounts.security import (
    PanelKeys,
    check_password_async,
    hash_password,
    recovery_codes,
    totp_step,
)
from sponsorbot.web.panel.web import (
    PanelConfig,
    address_of,
    cookie_name,
    is_secure,
    safe_next,
    security_headers,
)

TEMPLATES = Path(__file__).resolve().parents[2] / "src" / "sponsorbot" / "web" / "templates"
PROXY = ipaddress.ip_network("10.0.0.0/8")


def _request(
    config: PanelConfig,
    peer: str = "10.0.0.2",
    headers: dict[str, str] | None = None,
    host: str = "panel.example",
    scheme: str = "http",
) -> Request:
    raw = [(b"host", host.encode())] + [
        (k.lower().encode(), v.encode()) for k, v in (headers or {}).items()
    ]
    app = SimpleNamespace(state=SimpleNamespace(panel=SimpleNamespace(config=config)))
    scope = {
        "type": "http",
        "method": "GET",
        "scheme": scheme,
        "path": "/",
        "query_string": b"",
        "headers": raw,
        "client": (peer, 4711),
        "server": (host, 80),
        "app": app,
    }
    return Request(scope)


@pytest.mark.parametrize(
    "target",
    [
        "/\t/evil.example",
        "/\n/evil.example",
        "/\x00x",
        "/\x7f",
        "//evil.example",
        "/\\evil.example",
        "https://evil.example/",
        "javascript:alert(1)",
        "evil.example",
        "",
        None,
    ],
)
def test_safe_next_refuses_anything_but_a_plain_local_path(target: str | None) -> None:
    """L14: control characters (browsers strip them into //host), schemes and hosts go home."""
    assert safe_next(target) == "/"


def test_safe_next_keeps_local_paths_with_their_query() -> None:
    assert safe_next("/bots/3/content?q=a%20b&page=2") == "/bots/3/content?q=a%20b&page=2"


def test_the_peer_is_the_address_when_it_is_not_a_trusted_proxy() -> None:
    """M5: a forwarding header from anyone else is ignored, so it cannot be forged."""
    config = PanelConfig(trusted_networks=(PROXY,))
    request = _request(config, peer="198.51.100.7", headers={"X-Forwarded-For": "203.0.113.9"})
    assert address_of(request) == "198.51.100.7"
    assert address_of(_request(PanelConfig(), headers={"X-Forwarded-For": "1.2.3.4"})) == (
        "10.0.0.2"
    )


def test_behind_trusted_proxies_the_right_most_untrusted_forwarded_address_counts() -> None:
    """M5: the client may prepend anything; the address our proxy saw is the right-most one
    that is not one of our proxies."""
    config = PanelConfig(trusted_networks=(PROXY,))
    forged = {"X-Forwarded-For": "6.6.6.6, 203.0.113.9, 10.0.0.5"}
    assert address_of(_request(config, headers=forged)) == "203.0.113.9"
    assert address_of(_request(config, headers={"X-Forwarded-For": "garbage"})) == "10.0.0.2"
    assert address_of(_request(config)) == "10.0.0.2"


def test_cookies_are_secure_unless_plain_http_on_loopback() -> None:
    """M13: automatic Secure (and the __Host- prefix) everywhere but plain-http loopback."""
    auto = PanelConfig()
    assert is_secure(_request(auto, host="panel.example"))
    assert cookie_name(_request(auto, host="panel.example"), "sb_session") == "__Host-sb_session"
    for host in ("127.0.0.1:8080", "localhost", "[::1]:8000", "127.3.2.1"):
        assert not is_secure(_request(auto, host=host)), host
    assert cookie_name(_request(auto, host="127.0.0.1"), "sb_session") == "sb_session"
    assert is_secure(_request(auto, host="127.0.0.1", scheme="https"))
    assert is_secure(_request(PanelConfig(panel_url="https://panel.example"), host="localhost"))
    behind = PanelConfig(trusted_networks=(PROXY,))
    proto = {"X-Forwarded-Proto": "https"}
    assert is_secure(_request(behind, host="localhost", headers=proto))
    assert not is_secure(_request(auto, peer="127.0.0.1", host="localhost", headers=proto))
    assert not is_secure(_request(PanelConfig(secure_cookies=False), host="panel.example"))
    assert is_secure(_request(PanelConfig(secure_cookies=True), host="localhost"))


def test_security_headers_carry_the_policy_and_hsts_only_when_secure() -> None:
    """L9: CSP without inline script or style, nosniff, and HSTS over https."""
    secure = security_headers(_request(PanelConfig(), host="panel.example"))
    assert secure["Content-Security-Policy"].startswith("default-src 'self'")
    assert "unsafe-inline" not in secure["Content-Security-Policy"]
    assert secure["X-Content-Type-Options"] == "nosniff"
    assert secure["Strict-Transport-Security"].startswith("max-age=")
    plain = security_headers(_request(PanelConfig(), host="127.0.0.1"))
    assert "Strict-Transport-Security" not in plain


INLINE = re.compile(r"<script(?![^>]*\bsrc=)|<style|\sstyle=|\son[a-z]+=|[\"']on[a-z]+[\"']\s*:")


def test_no_template_has_inline_script_style_or_handlers() -> None:
    """L9: the policy forbids inline code and styles; every template must do without."""
    offenders = [
        f"{path.name}: {line.strip()[:80]}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for line in path.read_text().splitlines()
        if INLINE.search(line)
    ]
    assert offenders == []


def test_totp_secrets_are_sealed_and_clear_ones_from_before_still_read() -> None:
    """L3: a sealed secret does not show the secret; a clear one still opens; another key
    cannot open it."""
    keys = PanelKeys(b"installation key")
    secret = pyotp.random_base32()
    sealed = keys.seal(secret)
    assert sealed.startswith("v1:") and secret not in sealed
    assert keys.open(sealed) == secret
    assert keys.open(secret) == secret and not keys.is_sealed(secret)
    assert PanelKeys(b"another key").open(sealed) is None
    assert PanelKeys(None).open(sealed) is None
    assert PanelKeys(None).seal(secret) == secret


def test_recovery_codes_are_long_and_hashed_without_the_key() -> None:
    """100-bit codes, stored as a tagged SHA-256 that owes nothing to the key, so they survive
    a key rotation (old sha256 digests still match)."""
    codes = recovery_codes()
    assert len(set(codes)) == 10
    assert all(re.fullmatch(r"[A-Z2-7]{5}(-[A-Z2-7]{5}){3}", c) for c in codes)
    keys = PanelKeys(b"installation key")
    stored = keys.recovery_digest(codes[0])
    assert stored != hashlib.sha256(codes[0].encode()).digest()
    assert stored == keys.recovery_digest(codes[0].lower())
    assert stored == PanelKeys(b"the next installation key").recovery_digest(codes[0])
    legacy = hashlib.sha256(b"ABC123-DEF456").digest()
    assert legacy in keys.recovery_candidates(" abc123-def456 ")


def test_a_totp_code_is_not_accepted_at_or_below_the_last_used_step() -> None:
    """M4: replaying an observed code fails once its step was used."""
    secret = pyotp.random_base32()
    now = datetime(2026, 3, 20, 9, 0, 10, tzinfo=UTC)
    code = pyotp.TOTP(secret).at(now)
    step = totp_step(secret, code, now)
    assert step == int(now.timestamp()) // 30
    assert totp_step(secret, code, now, after=step) is None
    assert totp_step(secret, code, now, after=step - 1) == step
    assert totp_step(secret, "12345", now) is None


async def test_password_hashing_runs_off_the_event_loop_two_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """M6: argon2 runs in worker threads, at most two at once, and the loop keeps ticking."""
    stored = hash_password("a password long enough")
    loop_thread = threading.get_ident()
    threads: set[int] = set()
    running = 0
    most = 0
    lock = threading.Lock()
    real = security.check_password

    def counting(hashed: str | None, password: str) -> bool:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        threads.add(threading.get_ident())
        try:
            time.sleep(0.05)
            return real(hashed, password)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(security, "check_password", counting)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    tick = asyncio.create_task(ticker())
    results = await asyncio.gather(
        *(check_password_async(stored, "a password long enough") for _ in range(6))
    )
    tick.cancel()
    assert all(results)
    assert loop_thread not in threads
    assert most == 2
    assert ticks > 10


@pytest.mark.slow
def test_the_product_hashes_with_argon2s_recommended_parameters() -> None:
    """The tests hash cheaply (tests/conftest.py); a fresh process hashes at full strength."""
    code = (
        "from sponsorbot.features.accounts.security import hash_password;"
        "print(hash_password('a password long enough'))"
    )
    stored = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()
    recommended = PasswordHasher()
    used = extract_parameters(stored)
    assert (used.time_cost, used.memory_cost, used.parallelism) == (
        recommended.time_cost,
        recommended.memory_cost,
        recommended.parallelism,
    )
    assert security.check_password(stored, "a password long enough")
    assert extract_parameters(hash_password("another password")).memory_cost == 1024
