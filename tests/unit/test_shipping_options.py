"""install.sh on the servers buyers really have: a directory that is not ours refused, the api's
port moved, an existing PostgreSQL (checked to be 15 or newer), and an install beside nginx or
Apache, whose printed server block is run through Debian's nginx. Dry runs under a prefix,
watched: nothing on this machine changes.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.processes import free_port
from tests.unit.test_shipping_scripts import (
    REPO,
    changing_calls,
    fake_programs,
    run_cmd,
    source_and_run,
    watch,
)

BASE = ["--dry-run", "--domain", "localhost", "--email", "owner@example.com"]
# 80 and 443 held by the nginx a buyer already runs.
NGINX_ON_80_AND_443 = """cat <<'EOF'
LISTEN 0 511 0.0.0.0:80 0.0.0.0:* users:(("nginx",pid=700,fd=6))
LISTEN 0 511 0.0.0.0:443 0.0.0.0:* users:(("nginx",pid=700,fd=7))
EOF"""


def _install(tmp_path: Path, *args: str, **programs: str) -> tuple[int, str, list[str]]:
    """install.sh with `args` under the prefix tmp_path/root, watched, with stand-ins for
    `programs`: its exit code, its output and the calls that would have changed this machine."""
    env, log = watch(tmp_path)
    if programs:
        env = fake_programs(tmp_path / "fake", env, **programs)
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    env["SPONSORBOT_INSTALL_ROOT"] = str(root)
    result = run_cmd([str(REPO / "install.sh"), *args], env=env, stdin=subprocess.DEVNULL)
    return result.returncode, result.stdout + result.stderr, changing_calls(log)


def _plan(out: str) -> list[str]:
    plan = out.split("The plan (nothing has been changed yet):")[1]
    return [line.strip() for line in plan.splitlines() if line.strip()[:1].isdigit()]


# ---------------------------------------------------------------- never overwrite what is not ours


@pytest.mark.parametrize("native", [False, True], ids=["docker", "native"])
def test_install_refuses_a_directory_that_holds_other_files(tmp_path: Path, native: bool) -> None:
    home = tmp_path / "root" / "srv" / "site"
    home.mkdir(parents=True)
    (home / "index.html").write_text("someone's site")
    args = [*BASE, "--dir", "/srv/site", *(["--native"] if native else [])]
    code, out, changing = _install(tmp_path, *args, ss="true")
    assert code == 1
    assert "/srv/site holds files that are not Sponsorbot's" in out
    assert "The plan" not in out and changing == []
    assert [p.name for p in home.iterdir()] == ["index.html"]


def test_install_takes_a_directory_with_only_a_prepared_env(tmp_path: Path) -> None:
    home = tmp_path / "root" / "opt" / "sponsorbot"
    home.mkdir(parents=True)
    (home / ".env").write_text("SPONSORBOT_API_PORT=9090\n")
    code, out, changing = _install(tmp_path, *BASE, ss="true")
    assert code == 0, out
    assert "wait until the api answers on 127.0.0.1:9090/healthz" in out
    assert changing == []


def test_update_refuses_a_directory_that_is_not_an_installation(tmp_path: Path) -> None:
    home = tmp_path / "srv" / "site"
    home.mkdir(parents=True)
    (home / "index.html").write_text("someone's site")
    env, log = watch(tmp_path)
    env["SPONSORBOT_INSTALL_ROOT"] = str(tmp_path)
    result = run_cmd([str(REPO / "update.sh"), "--dir", "/srv/site", "--yes"], env=env)
    assert result.returncode == 1
    assert "no installation found" in result.stderr
    assert changing_calls(log) == [] and [p.name for p in home.iterdir()] == ["index.html"]


# ---------------------------------------------------------------- the api's port


@pytest.mark.parametrize("native", [False, True], ids=["docker", "native"])
def test_the_api_port_is_an_option_used_everywhere(tmp_path: Path, native: bool) -> None:
    args = [*BASE, "--api-port", "9191", *(["--native"] if native else [])]
    code, out, changing = _install(tmp_path, *args, ss="true")
    assert code == 0, out
    assert "ok   port 9191: free" in out and "port 8080" not in out
    plan = "\n".join(_plan(out))
    assert "wait until the api answers on 127.0.0.1:9191/healthz" in plan
    assert "8080" not in plan
    if native:
        assert "/etc/caddy/sponsorbot.caddy (https://localhost to 127.0.0.1:9191)" in plan
    assert changing == []


@pytest.mark.parametrize("native", [False, True], ids=["docker", "native"])
def test_the_env_carries_the_port_and_a_rerun_keeps_it(tmp_path: Path, native: bool) -> None:
    body = "DOMAIN=bot.example.com EMAIL=a@example.com WORKERS=2 API_PORT=9292 BEHIND_PROXY=0\n"
    body += "docker_env" if not native else "NATIVE=1; native_env"
    result = source_and_run("install.sh", body)
    key = "SPONSORBOT_PORT" if native else "SPONSORBOT_API_PORT"
    assert f"\n{key}=9292\n" in result.stdout
    home = tmp_path / "root" / "opt" / "sponsorbot"
    home.mkdir(parents=True)
    (home / ".env").write_text(f"SPONSORBOT_DOMAIN=localhost\n{key}=9393\n")
    code, out, _ = _install(tmp_path, *BASE, *(["--native"] if native else []), ss="true")
    assert code == 0, out
    assert "wait until the api answers on 127.0.0.1:9393/healthz" in out


@pytest.mark.parametrize("port", ["80", "70000", "http"])
def test_a_bad_api_port_is_refused(tmp_path: Path, port: str) -> None:
    code, out, changing = _install(tmp_path, *BASE, "--api-port", port)
    assert code == 1 and "--api-port must be a port number from 1024 to 65535" in out
    assert changing == []


# ---------------------------------------------------------------- an existing PostgreSQL

URL = "postgresql://sponsorbot:pw-x7q9@db.example.com:5432/sponsorbot"


def _psql_says(number: str) -> str:
    return f'[[ "$*" == *server_version_num* ]] && echo {number}'


def test_an_external_database_replaces_the_local_one(tmp_path: Path) -> None:
    args = [*BASE, "--native", "--database-url", URL]
    code, out, changing = _install(tmp_path, *args, ss="true", psql=_psql_says("170002"))
    assert code == 0, out
    assert "ok   database: the external PostgreSQL is version 17" in out
    plan = "\n".join(_plan(out))
    assert "PostgreSQL" not in plan.replace("PostgreSQL 15", "")
    assert "pw-x7q9" not in out
    assert changing == []


def test_an_external_database_older_than_15_is_refused_before_the_plan(tmp_path: Path) -> None:
    args = [*BASE, "--native", "--database-url", URL]
    code, out, changing = _install(tmp_path, *args, ss="true", psql=_psql_says("140011"))
    assert code == 1
    assert "the external PostgreSQL is version 14: Sponsorbot needs 15 or newer" in out
    assert "The plan" not in out and changing == []


def test_an_unreachable_external_database_is_refused(tmp_path: Path) -> None:
    psql = 'echo "psql: error: connection to server failed: Connection refused" >&2; exit 2'
    args = [*BASE, "--native", "--database-url", URL]
    code, out, _ = _install(tmp_path, *args, ss="true", psql=psql)
    assert code == 1
    assert "the database at --database-url does not answer: psql: error: connection" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--database-url", URL], "--database-url is for --native installs"),
        (["--native", "--database-url", "mysql://x"], "--database-url must look like"),
        (["--native", "--database-url", "postgresql://a b"], "--database-url must look like"),
    ],
)
def test_a_bad_database_url_is_refused(tmp_path: Path, args: list[str], message: str) -> None:
    code, out, changing = _install(tmp_path, *BASE, *args)
    assert code == 1 and message in out and changing == []


# ---------------------------------------------------------------- beside nginx or Apache


@pytest.mark.parametrize("native", [False, True], ids=["docker", "native"])
def test_behind_a_proxy_there_is_no_caddy_and_80_443_may_be_taken(
    tmp_path: Path, native: bool
) -> None:
    args = ["--dry-run", "--domain", "localhost", "--behind-proxy"]
    args += ["--native"] if native else []
    code, out, changing = _install(tmp_path, *args, ss=NGINX_ON_80_AND_443)
    assert code == 0, out
    plan = "\n".join(_plan(out))
    assert "caddy" not in plan.lower().replace("no caddy", "") and "ufw" not in plan
    example = "/opt/sponsorbot/nginx-sponsorbot.conf"
    assert f"write the nginx block for your web server to {example}" in plan
    if not native:
        assert "compose up -d --build" in plan and "no Caddy" in plan
    assert changing == []


def test_the_env_behind_a_proxy_says_so_for_update(tmp_path: Path) -> None:
    body = "DOMAIN=bot.example.com EMAIL= WORKERS=2 API_PORT=8080 BEHIND_PROXY=1 NATIVE=1\n"
    result = source_and_run("install.sh", body + "native_env")
    assert "\nBEHIND_PROXY=yes\n" in result.stdout
    assert "SPONSORBOT_TRUSTED_PROXIES=127.0.0.1/32,::1/128" in result.stdout


class _Echo(http.server.BaseHTTPRequestHandler):
    """An api stand-in that answers with the headers the proxy sent and the body's size."""

    def _answer(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        remaining = size
        while remaining:
            remaining -= len(self.rfile.read(min(remaining, 1 << 20)))
        body = json.dumps({"headers": dict(self.headers), "size": size}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = _answer
    do_POST = _answer

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def echo_api() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _user() -> str:
    # nginx's workers run as nobody when the master is root, and write bodies to the temp dir.
    return "user root;\n" if os.geteuid() == 0 else ""


@pytest.mark.external
@pytest.mark.skipif(shutil.which("nginx") is None, reason="Debian's nginx is not installed")
def test_the_printed_nginx_block_forwards_what_the_api_needs(tmp_path: Path, echo_api: int) -> None:
    """The block install.sh prints, with its TLS lines swapped for a loopback listener (the
    certificate is the owner's business), under Debian's nginx in front of an api stand-in."""
    result = source_and_run("install.sh", f"nginx_site bot.example.com {echo_api}")
    assert result.returncode == 0, result.stderr
    block = result.stdout
    assert f"proxy_pass http://127.0.0.1:{echo_api};" in block
    port = free_port()
    lines = [line for line in block.splitlines() if "ssl" not in line]
    site = "\n".join(lines).replace("server {", f"server {{\n    listen 127.0.0.1:{port};", 1)
    prefix = tmp_path / "nginx"
    (prefix / "logs").mkdir(parents=True)
    conf = prefix / "nginx.conf"
    conf.write_text(
        f"daemon off;\n{_user()}pid {prefix}/nginx.pid;\nerror_log {prefix}/logs/error.log;\n"
        "events {}\nhttp {\n"
        f"client_body_temp_path {prefix}/body;\nproxy_temp_path {prefix}/proxy;\n"
        f"access_log {prefix}/logs/access.log;\n{site}\n}}\n"
    )
    nginx = ["nginx", "-p", str(prefix), "-c", str(conf)]
    checked = run_cmd([*nginx, "-t"])
    assert checked.returncode == 0, checked.stderr
    server = subprocess.Popen(nginx, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(timeout=10) as client:
            for _ in range(100):
                try:
                    client.get(f"{url}/healthz")
                    break
                except httpx.TransportError:
                    server.poll()
                    assert server.returncode is None, server.stderr
                    threading.Event().wait(0.05)
            seen = client.get(
                f"{url}/healthz", headers={"Host": "bot.example.com", "X-Forwarded-For": "6.6.6.6"}
            ).json()
            upload = client.post(f"{url}/api/v1/upload", content=b"x" * (50 * 1024 * 1024))
            too_big = client.post(f"{url}/api/v1/upload", content=b"x" * (52 * 1024 * 1024))
    finally:
        server.terminate()
        server.wait(timeout=10)
    headers = {k.lower(): v for k, v in seen["headers"].items()}
    assert headers["host"] == "bot.example.com"
    # The visitor's own address, never one a client made up: the api believes this header.
    assert headers["x-forwarded-for"] == "127.0.0.1"
    assert headers["x-forwarded-proto"] == "http"
    assert upload.status_code == 200 and upload.json()["size"] == 50 * 1024 * 1024
    assert too_big.status_code == 413
    assert (
        not (prefix / "logs" / "access.log").exists()
        or os.path.getsize(prefix / "logs" / "access.log") == 0
    )


# ---------------------------------------------------------------- a dry run without root


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the dry run as another user")
@pytest.mark.skipif(shutil.which("runuser") is None, reason="runuser is not installed")
def test_a_dry_run_that_cannot_read_the_env_says_so() -> None:
    """As a user who cannot read root's .env, the plan is partial: it says so, not silently."""
    with tempfile.TemporaryDirectory(dir="/tmp") as where:
        _dry_run_as_nobody(Path(where))


def _dry_run_as_nobody(tmp_path: Path) -> None:
    # Under /tmp itself: pytest's own temporary directories are closed to other users.
    tmp_path.chmod(0o755)
    root = tmp_path / "root"
    home = root / "opt" / "sponsorbot"
    home.mkdir(parents=True)
    (home / ".env").write_text("SPONSORBOT_DOMAIN=localhost\nSPONSORBOT_WORKERS=3\n")
    (home / ".env").chmod(0o600)
    for part in (root, root / "opt", home):
        part.chmod(0o755)
    shims = fake_programs(tmp_path / "fake", ss="true")
    (tmp_path / "fake").chmod(0o755)
    command = [str(REPO / "install.sh"), *BASE]
    env = {**shims, "SPONSORBOT_INSTALL_ROOT": str(root)}
    result = run_cmd(["runuser", "-u", "nobody", "--", *command], env=env)
    assert "cannot be read by this user" in result.stderr, result.stdout + result.stderr
    assert "run the dry run with sudo" in result.stderr
