"""The native install's parts, for real: Debian's PostgreSQL, `sponsorbot run --role api` and a
worker as separate processes, and Debian's Caddy in front with `tls internal`, serving the
deploy/Caddyfile site block the install uses. A browser sets the panel up and signs in over
https.

The browser reaches Caddy over IPv6 loopback (::1) while Caddy reaches the api over IPv4
(127.0.0.1), the only trusted proxy: so the audit log can show that the visitor's address came
through the proxy's header, not from the connection.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest

from tests.browser.kit import CHROMIUM, CHROMIUM_ARGS, NEEDS_CHROMIUM
from tests.debian_pg import DebianPostgres, debian_bin
from tests.processes import clean_environ, free_port, start, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "deploy" / "Caddyfile"
DOMAIN = "sponsorbot.test"
PASSWORD = "a long owner password"
SPOOFED = "203.0.113.9"
# Global options the install leaves to Caddy's defaults, set here so the test touches nothing
# outside its directory: certificates from Caddy's own CA, no admin port, no port 80.
MAIN_CADDYFILE = """{{
\tadmin off
\tlocal_certs
\tskip_install_trust
\tauto_https disable_redirects
\tdefault_bind ::1
\tstorage file_system {storage}
}}
import {site}
"""

pytestmark = [
    pytest.mark.browser,
    NEEDS_CHROMIUM,
    pytest.mark.skipif(shutil.which("caddy") is None, reason="Debian's caddy is not installed"),
    pytest.mark.skipif(debian_bin() is None, reason="Debian's postgresql is not installed"),
]


@dataclass
class Stack:
    """The running stack: the https address, its CA, and the environment of the processes."""

    url: str
    https_port: int
    root_ca: Path
    env: dict[str, str]
    dsn: str


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_tls(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"caddy exited with {proc.returncode}")
        try:
            with socket.create_connection(("::1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("caddy never listened")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Debian's PostgreSQL, the simulator, api, worker and Caddy, each its own process."""
    home = tmp_path_factory.mktemp("native")
    pg = DebianPostgres()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        # The product gets the cluster to itself: its maintenance database will do.
        dsn = pg.start()
        sim_port, api_port, https_port = free_port(), free_port(), free_port()
        url = f"https://{DOMAIN}:{https_port}"
        env = clean_environ(
            SPONSORBOT_DATABASE_URL=dsn,
            SPONSORBOT_DATA_DIR=str(home / "data"),
            SPONSORBOT_TELEGRAM_API=f"http://127.0.0.1:{sim_port}",
            SPONSORBOT_PUBLIC_URL=url,
            SPONSORBOT_PANEL_URL=url,
            SPONSORBOT_TRUSTED_PROXIES="127.0.0.1",
            SPONSORBOT_SECRET_KEY="k" * 48,
            SPONSORBOT_PORT=str(api_port),
        )
        log = home / "processes.log"
        procs.append(start("simulator", "--port", str(sim_port), env=env, log=log))
        api = start("run", "--role", "api", env=env, log=log)
        procs.append(api)
        wait_healthy(api_port, api, timeout=60)
        procs.append(start("run", "--role", "worker", env=env, log=log))

        main = home / "Caddyfile"
        main.write_text(MAIN_CADDYFILE.format(storage=home / "caddy", site=SITE))
        caddy_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "xdg-data"),
            "XDG_CONFIG_HOME": str(home / "xdg-config"),
            "SPONSORBOT_DOMAIN": f"{DOMAIN}:{https_port}",
            "SPONSORBOT_UPSTREAM": f"127.0.0.1:{api_port}",
        }
        caddy_log = (home / "caddy.log").open("ab")
        caddy = subprocess.Popen(
            ["caddy", "run", "--config", str(main), "--adapter", "caddyfile"],
            env=caddy_env,
            stdout=caddy_log,
            stderr=caddy_log,
        )
        procs.append(caddy)
        _wait_tls(https_port, caddy)
        root_ca = home / "caddy" / "pki" / "authorities" / "local" / "root.crt"
        yield Stack(url, https_port, root_ca, env, dsn)
    finally:
        for proc in reversed(procs):
            _stop(proc)
        pg.stop()


def _https_get(stack: Stack, path: str) -> tuple[int, dict[str, str]]:
    """A GET through Caddy that trusts only Caddy's own root certificate."""
    context = ssl.create_default_context(cafile=str(stack.root_ca))
    deadline = time.monotonic() + 20
    while True:
        try:
            with (
                socket.create_connection(("::1", stack.https_port), timeout=5) as raw,
                context.wrap_socket(raw, server_hostname=DOMAIN) as tls,
            ):
                request = f"GET {path} HTTP/1.1\r\nHost: {DOMAIN}\r\nConnection: close\r\n\r\n"
                tls.sendall(request.encode())
                data = b""
                while chunk := tls.recv(65536):
                    data += chunk
            break
        except (ssl.SSLError, ConnectionError):
            # The certificate is issued on the first handshake; allow for it.
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
    return int(head[0].split()[1]), headers


def test_caddy_serves_the_api_over_https_with_a_certificate_its_ca_signed(stack: Stack) -> None:
    status, headers = _https_get(stack, "/healthz")
    assert status == 200
    # The panel asks browsers to stay on https once the cookie is Secure.
    status, headers = _https_get(stack, "/signin")
    assert status == 200
    assert "max-age" in headers.get("strict-transport-security", "")


def _setup_code(stack: Stack) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "sponsorbot", "setup-code"],
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return out.split("setup code: ", 1)[1].split()[0]


async def test_an_owner_sets_up_and_signs_in_through_caddy(stack: Stack) -> None:
    from playwright.async_api import async_playwright, expect

    _https_get(stack, "/healthz")  # the certificate exists before the browser comes
    code = _setup_code(stack)
    base = stack.url
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {DOMAIN} [::1]"],
        )
        try:
            # Caddy's internal CA is not in the browser's store; the test above checks the chain.
            # Every request claims another address: Caddy must replace it with the real one.
            context = await browser.new_context(
                ignore_https_errors=True, extra_http_headers={"X-Forwarded-For": SPOOFED}
            )
            page = await context.new_page()
            await page.goto(f"{base}/setup")
            await page.fill("#f-code", code)
            await page.fill("#f-name", "Sara Owner")
            await page.fill("#f-email", "sara@example.com")
            await page.fill("#f-password", PASSWORD)
            await page.fill("#f-password2", PASSWORD)
            await page.click("main button.primary")
            await expect(page.locator("h1")).to_have_text("Dashboard")

            cookies = await context.cookies()
            session = [c for c in cookies if c["name"].startswith("__Host-")]
            assert session, [c["name"] for c in cookies]
            assert all(c["secure"] and c["httpOnly"] for c in session)

            # A wrong password, then the right one: both recorded with the browser's address.
            await page.click("header >> text=Sign out")
            await page.fill("#f-email", "sara@example.com")
            await page.fill("#f-password", "not the password")
            await page.click("main button.primary")
            await expect(
                page.locator(".error.banner, .banner.error, [role=alert]")
            ).not_to_have_count(0)
            await page.fill("#f-email", "sara@example.com")
            await page.fill("#f-password", PASSWORD)
            await page.click("main button.primary")
            await expect(page.locator("h1")).to_have_text("Dashboard")

            await page.goto(f"{base}/audit")
            await expect(page.locator("main")).to_contain_text("::1")
        finally:
            await browser.close()

    conn = await asyncpg.connect(stack.dsn)
    try:
        rows = await conn.fetch("SELECT kind, address FROM audit_log ORDER BY id")
    finally:
        await conn.close()
    kinds = {row["kind"]: row["address"] for row in rows}
    assert kinds.get("signin.failed") == "::1", rows
    assert kinds.get("team.owner_created") == "::1", rows
    # Neither Caddy's own address (the connection's) nor what the visitor claimed.
    assert all(row["address"] not in ("127.0.0.1", SPOOFED) for row in rows), rows
