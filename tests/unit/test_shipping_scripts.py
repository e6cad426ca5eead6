"""install.sh, update.sh and scripts/release.sh, run on this machine without changing it, and
the Caddy site they serve, validated by Debian's caddy (issue 16). The steps' own functions:
test_shipping_steps.py; update.sh's versions and runs: test_shipping_update.py.

The dry runs go with every program that could change the machine watched: a stand-in before
it on PATH logs each call and runs the real one only for a call that just looks.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SITE_ENV = {
    "SPONSORBOT_DOMAIN": "bot.example.com",
    "SPONSORBOT_UPSTREAM": "api:8080",
    "SPONSORBOT_ACME_EMAIL": "owner@example.com",
}
# Programs that could change the machine, and the calls of theirs that only look.
WATCHED: dict[str, tuple[str, ...]] = {
    "apt-get": (),
    "apt": (),
    "dpkg": ("--compare-versions *",),
    "systemctl": ("is-active *",),
    "useradd": (),
    "groupadd": (),
    "install": (),
    "chown": (),
    "chmod": (),
    "mkdir": (),
    "cp": (),
    "mv": (),
    "rm": (),
    "ln": (),
    "mktemp": (),
    "tar": ("-tzf *", "-xzOf *"),
    # Not `docker info`: it starts a stopped daemon through its socket.
    "docker": ("--version", "compose version"),
    "docker-compose": ("version",),
    "ufw": ("status",),
    "runuser": (),
    "systemd-run": (),
    "psql": (),
    "caddy": (),
    "pip": (),
    "python3": ("-c *",),
}


def run_cmd(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False, **kwargs)


# ---------------------------------------------------------------- Caddy


@pytest.fixture
def caddy(tmp_path: Path) -> Iterator[Any]:
    """Run Debian's caddy with its home, data and config dirs inside tmp_path."""
    if shutil.which("caddy") is None:
        pytest.skip("caddy is not installed (apt-get install caddy)")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }

    def run(command: str, main: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        args = ["caddy", command, "--adapter", "caddyfile", "--config", str(main)]
        return run_cmd(args, env={**env, **extra}, cwd=tmp_path)

    yield run


def _values(obj: Any, key: str) -> list[Any]:
    """Every value stored under `key` anywhere in a JSON document."""
    if isinstance(obj, dict):
        here = [obj[key]] if key in obj else []
        return here + [v for child in obj.values() for v in _values(child, key)]
    if isinstance(obj, list):
        return [v for child in obj for v in _values(child, key)]
    return []


def _docker_main(tmp_path: Path, globals_: str = "") -> Path:
    """The compose setup: Caddyfile.docker importing deploy/Caddyfile (paths made local)."""
    shutil.copy(REPO / "deploy" / "Caddyfile", tmp_path / "site.caddy")
    text = (REPO / "deploy" / "Caddyfile.docker").read_text()
    assert "import /etc/caddy/site.caddy" in text
    main = tmp_path / "Caddyfile"
    main.write_text(globals_ + text.replace("/etc/caddy/site.caddy", str(tmp_path / "site.caddy")))
    return main


def test_caddy_accepts_the_site_as_compose_mounts_it(caddy: Any, tmp_path: Path) -> None:
    main = _docker_main(tmp_path)
    result = caddy("validate", main, SITE_ENV)
    assert result.returncode == 0, result.stderr
    assert "Valid configuration" in result.stdout
    config = json.loads(caddy("adapt", main, SITE_ENV).stdout)
    assert _values(config, "host") == [["bot.example.com"]]
    assert _values(config, "dial") == ["api:8080"]
    assert set(_values(config, "email")) == {"owner@example.com"}
    # No access log: the webhook paths carry secrets.
    assert not _values(config, "logs")
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert written == {"Caddyfile", "site.caddy"}


def test_the_site_leaves_tls_to_the_main_file(caddy: Any, tmp_path: Path) -> None:
    # A test stack adds `local_certs`: the site must not override it with its own tls.
    main = _docker_main(tmp_path, "{\n\tlocal_certs\n}\n")
    main.write_text(main.read_text().replace("{\n\temail {$SPONSORBOT_ACME_EMAIL}\n}\n", ""))
    config = json.loads(caddy("adapt", main, SITE_ENV).stdout)
    modules = {issuer["module"] for issuer in _values(config, "issuers")[0]}
    assert modules == {"internal"}


def source_and_run(script: str, body: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Source one of the scripts (its main does not run then) and run `body` in REPO."""
    command = f'source "{REPO / script}"\n{body}'
    return run_cmd(["bash", "-c", command], env={**os.environ, **env}, cwd=REPO)


def test_caddy_accepts_the_files_the_native_install_writes(caddy: Any, tmp_path: Path) -> None:
    body = "EMAIL=owner@example.com; caddy_site bot.example.com 127.0.0.1:8080 <deploy/Caddyfile\n"
    body += 'echo "#--"; caddy_main'
    result = source_and_run("install.sh", body)
    assert result.returncode == 0, result.stderr
    site, main = result.stdout.split("#--\n")
    assert "{$" not in site and "127.0.0.1:8080" in site
    (tmp_path / "sponsorbot.caddy").write_text(site)
    assert "import /etc/caddy/sponsorbot.caddy" in main
    main_file = tmp_path / "Caddyfile"
    main_file.write_text(main.replace("/etc/caddy/", f"{tmp_path}/"))
    result = caddy("validate", main_file, {})
    assert result.returncode == 0, result.stderr
    config = json.loads(caddy("adapt", main_file, {}).stdout)
    assert _values(config, "dial") == ["127.0.0.1:8080"]


# ---------------------------------------------------------------- install.sh and update.sh


def watch(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose PATH puts a logging stand-in before each program that could
    change the machine; a stand-in runs the real program only for a call that just looks."""
    shims, log = tmp_path / "shims", tmp_path / "calls.log"
    shims.mkdir()
    for name, looks in WATCHED.items():
        real = shutil.which(name)
        if real is None:
            continue
        patterns = "|".join(f'"{p}"' if "*" not in p else f'"{p[:-1]}"*' for p in looks)
        allow = f'\n\t{patterns}) exec "{real}" "$@" ;;' if patterns else ""
        shim = shims / name
        shim.write_text(
            f'#!/bin/bash\nprintf "%s\\n" "{name} $*" >>"{log}"\ncase "$*" in{allow}\n'
            "\t*) exit 97 ;;\nesac\n"
        )
        shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"}
    return env, log


@pytest.fixture
def watched(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """watch(tmp_path), for the tests here."""
    return watch(tmp_path)


def changing_calls(log: Path) -> list[str]:
    calls = log.read_text().splitlines() if log.exists() else []
    allowed = {
        name: [re.compile(re.escape(p).replace(r"\*", ".*") + "$") for p in looks]
        for name, looks in WATCHED.items()
    }
    changing = []
    for call in calls:
        name, _, args = call.partition(" ")
        if not any(pattern.match(args) for pattern in allowed[name]):
            changing.append(call)
    return changing


def _snapshot() -> dict[str, tuple[int, int, int]]:
    """What an install would touch on this machine: (mtime, size, mode) of every entry."""
    places = ["/etc/caddy", "/etc/systemd/system", "/etc/docker", "/etc/ufw", "/opt"]
    places += ["/var/lib/sponsorbot", "/etc/passwd", "/etc/group", "/etc/apt/sources.list.d"]
    seen = {}
    for place in map(Path, places):
        entries = [place, *place.rglob("*")] if place.is_dir() else [place]
        for entry in entries:
            if entry.exists() or entry.is_symlink():
                info = entry.lstat()
                seen[str(entry)] = (info.st_mtime_ns, info.st_size, info.st_mode)
    return seen


def _ports_busy(*ports: int) -> bool:
    listening = run_cmd(["ss", "-H", "-ltn"]).stdout if shutil.which("ss") else ""
    return any(re.search(rf":{port}\s", listening) for port in ports)


INSTALL_ARGS = ["--dry-run", "--domain", "localhost", "--email", "owner@example.com"]


@pytest.mark.parametrize("native", [False, True], ids=["docker", "native"])
@pytest.mark.parametrize("prefix", [True, False], ids=["prefixed", "this-machine"])
def test_install_dry_run_prints_the_plan_and_changes_nothing(
    watched: tuple[dict[str, str], Path], tmp_path: Path, native: bool, prefix: bool
) -> None:
    if _ports_busy(80, 443):
        pytest.skip("something listens on 80 or 443 here; install.sh would rightly refuse")
    if not prefix and os.geteuid() != 0:
        pytest.skip("the run on this machine's own paths needs root, as install.sh does")
    env, log = watched
    root = tmp_path / "root"
    root.mkdir()
    if prefix:
        env = {**env, "SPONSORBOT_INSTALL_ROOT": str(root)}
    before = _snapshot()
    args = [*INSTALL_ARGS, "--workers", "3", *(["--native"] if native else [])]
    result = run_cmd([str(REPO / "install.sh"), *args], env=env, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stdout + result.stderr
    plan = result.stdout.split("The plan (nothing has been changed yet):")[1]
    assert plan.rstrip().endswith("dry run: nothing was changed")
    assert "/opt/sponsorbot/.env (mode 600) with a new database password and secret key" in plan
    if native:
        assert "sponsorbot-worker@1..3" in plan and "/etc/caddy/sponsorbot.caddy" in plan
        # The guide's backup commands write there from the first day.
        assert "create /var/lib/sponsorbot/backups for the backups (mode 700" in plan
    else:
        assert "docker compose up -d --build" in plan and "3 worker(s)" in plan
        assert "Docker publishes container ports past ufw" in result.stderr
    assert changing_calls(log) == []
    assert list(root.iterdir()) == []
    assert _snapshot() == before


def test_install_dry_run_keeps_an_existing_env(
    watched: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    if _ports_busy(80, 443):
        pytest.skip("something listens on 80 or 443 here; install.sh would rightly refuse")
    env, log = watched
    env_file = tmp_path / "opt" / "sponsorbot" / ".env"
    env_file.parent.mkdir(parents=True)
    env_file.write_text("SPONSORBOT_DOMAIN=localhost\nSPONSORBOT_ACME_EMAIL=a@example.com\n")
    env = {**env, "SPONSORBOT_INSTALL_ROOT": str(tmp_path)}
    result = run_cmd([str(REPO / "install.sh"), *INSTALL_ARGS], env=env)
    assert result.returncode == 0, result.stderr
    assert "/opt/sponsorbot/.env exists: kept, with its secrets" in result.stdout
    assert "new database password" not in result.stdout
    assert "set SPONSORBOT_ACME_EMAIL=owner@example.com in the existing" in result.stdout
    assert "set SPONSORBOT_WORKERS=2 in the existing" in result.stdout
    assert changing_calls(log) == []


def test_env_written_private_and_kept_on_change(tmp_path: Path) -> None:
    where = {"SPONSORBOT_INSTALL_ROOT": str(tmp_path)}
    write = 'DOMAIN=bot.example.com EMAIL=a@example.com WORKERS=2\nf="$ROOT/opt/sponsorbot/.env"\n'
    write += 'write_file 600 "$f" "$(docker_env)"$\'\\n\'\n'
    change = 'f="$ROOT/opt/sponsorbot/.env"; env_set "$f" SPONSORBOT_WORKERS 4\n'
    change += 'env_set "$f" SPONSORBOT_SUBNET 10.9.0.0/24\n'
    first = source_and_run("install.sh", write, **where)
    assert first.returncode == 0, first.stderr
    env_file = tmp_path / "opt" / "sponsorbot" / ".env"
    written = env_file.read_text()
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    secret = re.search(r"^SPONSORBOT_SECRET_KEY=([0-9a-f]+)$", written, re.M)
    assert secret is not None and len(secret[1]) >= 64
    second = source_and_run("install.sh", change, **where)
    assert second.returncode == 0, second.stderr
    kept = env_file.read_text()
    assert f"SPONSORBOT_SECRET_KEY={secret[1]}" in kept
    assert "SPONSORBOT_WORKERS=4" in kept and "SPONSORBOT_WORKERS=2" not in kept
    assert kept.endswith("SPONSORBOT_SUBNET=10.9.0.0/24\n")
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "0"], "--workers must be 1 to 32"),
        (["--domain", "not a name"], "--domain is not a host name"),
        (["--bogus"], "unknown option --bogus"),
    ],
)
def test_install_refuses_bad_input_in_one_line(
    watched: tuple[dict[str, str], Path], tmp_path: Path, args: list[str], message: str
) -> None:
    env = {**watched[0], "SPONSORBOT_INSTALL_ROOT": str(tmp_path)}
    base = {"--domain": "localhost", "--email": "a@example.com"}
    for flag, value in base.items():
        if flag not in args:
            args = [*args, flag, value]
    result = run_cmd([str(REPO / "install.sh"), "--dry-run", *args], env=env)
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr
    assert changing_calls(watched[1]) == []


def test_the_watch_sees_a_change(watched: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    env, log = watched
    run_cmd(["bash", "-c", f"mkdir {tmp_path}/made; tar -tzf x.tar.gz"], env=env)
    assert changing_calls(log) == [f"mkdir {tmp_path}/made"]
    assert not (tmp_path / "made").exists()


def fake_programs(
    where: Path, base: dict[str, str] | None = None, **scripts: str
) -> dict[str, str]:
    """Bash scripts named after programs, in a directory put first on the PATH of `base` (this
    process's environment by default): the environment to run with."""
    base = base or dict(os.environ)
    where.mkdir(exist_ok=True)
    for name, body in scripts.items():
        (where / name).write_text(f"#!/bin/bash\n{body}\n")
        (where / name).chmod(0o755)
    return {**base, "PATH": f"{where}:{base['PATH']}"}


CADDY_ON_80_AND_443 = """cat <<'EOF'
LISTEN 0 4096 *:80 *:* users:(("caddy",pid=812,fd=7))
LISTEN 0 4096 *:443 *:* users:(("caddy",pid=812,fd=8))
EOF"""


@pytest.mark.parametrize("native", [True, False], ids=["native", "docker"])
def test_a_running_caddy_suits_a_native_install_only(
    watched: tuple[dict[str, str], Path], tmp_path: Path, native: bool
) -> None:
    env = fake_programs(tmp_path / "fake", watched[0], ss=CADDY_ON_80_AND_443)
    env["SPONSORBOT_INSTALL_ROOT"] = str(tmp_path)
    (tmp_path / "etc" / "caddy").mkdir(parents=True)
    (tmp_path / "etc" / "caddy" / "Caddyfile").write_text("other.example.com {\n\trespond hi\n}\n")
    args = [*INSTALL_ARGS, *(["--native"] if native else [])]
    result = run_cmd([str(REPO / "install.sh"), *args], env=env, stdin=subprocess.DEVNULL)
    if native:
        assert result.returncode == 0, result.stderr
        held = "held by this server's Caddy, which will serve Sponsorbot's site too"
        assert f"ok   port 80: {held}" in result.stdout
        assert f"ok   port 443: {held}" in result.stdout
        # The owner's Caddyfile is kept and only gains the import of our site.
        assert "add 'import /etc/caddy/sponsorbot.caddy' to the end of your" in result.stdout
    else:
        assert result.returncode == 1
        refusal = result.stderr.strip().splitlines()[-1]
        assert refusal.startswith(
            "install.sh: port 80 is taken by this server's Caddy: the Docker install runs a "
            "Caddy of its own, which needs 80 and 443 (install with --native"
        )
    assert changing_calls(watched[1]) == []


def test_a_dry_run_does_not_wake_docker(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    env = fake_programs(
        tmp_path / "fake",
        ss="true",
        docker=f'echo "docker $*" >>"{log}"; [[ $1 != info ]]',
        systemctl=f'echo "systemctl $*" >>"{log}"; exit 3',
    )
    env["SPONSORBOT_INSTALL_ROOT"] = str(tmp_path / "root")
    result = run_cmd([str(REPO / "install.sh"), *INSTALL_ARGS], env=env, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert "docker info" not in calls
    assert [c for c in calls if c.startswith("systemctl")] == ["systemctl is-active --quiet docker"]
    assert "docker daemon: not active in systemd; a real run asks it (docker info)" in result.stdout
    assert "enable and start the Docker daemon" in result.stdout


# ---------------------------------------------------------------- scripts/release.sh

RELEASED = [
    ".gitattributes",
    "install.sh",
    "update.sh",
    "scripts/release.sh",
    "deploy/common.sh",
    "deploy/Caddyfile",
    "deploy/Caddyfile.docker",
    "deploy/systemd/sponsorbot-api.service",
    "deploy/systemd/sponsorbot-worker@.service",
    "compose.yaml",
    "Dockerfile",
]


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    ident = ["-c", "user.name=test", "-c", "user.email=test@example.com"]
    result = run_cmd(["git", *ident, *args], cwd=repo, env=env)
    assert result.returncode == 0, result.stderr


def _release(repo: Path) -> subprocess.CompletedProcess[str]:
    """release.sh without the wheels (a slow test, test_shipping_wheels, builds those)."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    return run_cmd([str(repo / "scripts" / "release.sh"), "--no-wheels"], cwd=repo, env=env)


def _release_repo(where: Path) -> Path:
    """A repository holding the deployment files (modes kept) and a version to release."""
    repo = where / "repo"
    for name in RELEASED:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, repo / name)
    (repo / "src" / "sponsorbot").mkdir(parents=True)
    (repo / "src" / "sponsorbot" / "__init__.py").write_text('__version__ = "9.9.9"\n')
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "release")
    return repo


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = _release_repo(tmp_path_factory.mktemp("release"))
    result = _release(repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "dist/sponsorbot-9.9.9.tar.gz",
        "dist/sponsorbot-9.9.9.tar.gz.sha256",
    ]
    return repo / "dist" / "sponsorbot-9.9.9.tar.gz"


def test_release_has_lf_text_executable_scripts_and_a_checksum(release: Path) -> None:
    with tarfile.open(release) as archive:
        members = {m.name: m for m in archive.getmembers() if m.isfile()}
        assert set(members) == {f"sponsorbot-9.9.9/{n}" for n in RELEASED} | {
            "sponsorbot-9.9.9/src/sponsorbot/__init__.py"
        }
        for name, member in members.items():
            data = archive.extractfile(member).read()  # type: ignore[union-attr]
            assert b"\r" not in data, name
            if name.endswith(".sh") and data.startswith(b"#!"):
                assert member.mode & 0o111 == 0o111, name
    check = run_cmd(["sha256sum", "-c", release.name + ".sha256"], cwd=release.parent)
    assert check.returncode == 0 and check.stdout.strip() == f"{release.name}: OK"
    expected = hashlib.sha256(release.read_bytes()).hexdigest()
    assert Path(f"{release}.sha256").read_text().split()[0] == expected


def test_release_refuses_crlf_and_lost_executable_bits(tmp_path: Path) -> None:
    repo = _release_repo(tmp_path)
    # Marked -text, git keeps the CRs as committed: release.sh must find them itself.
    (repo / "notes.txt").write_bytes(b"one\r\ntwo\r\n")
    with (repo / ".gitattributes").open("a") as attributes:
        attributes.write("notes.txt -text\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "crlf")
    result = _release(repo)
    assert result.returncode == 1
    assert "CR line endings in: notes.txt" in result.stderr
    assert not (repo / "dist").exists()
    (repo / "notes.txt").write_bytes(b"one\ntwo\n")
    _git(repo, "add", "notes.txt")
    _git(repo, "update-index", "--chmod=-x", "install.sh")
    _git(repo, "commit", "-q", "-m", "lf, and install.sh no longer executable")
    result = _release(repo)
    assert result.returncode == 1
    assert "without their executable bit: sponsorbot-9.9.9/install.sh" in result.stderr


# ---------------------------------------------------------------- update.sh


def installed_tree(root: Path, native: bool) -> Path:
    """An installation as install.sh leaves it, under a prefix (workers 1 and 2 enabled)."""
    home = root / "opt" / "sponsorbot"
    (home / "src" / "sponsorbot").mkdir(parents=True)
    (home / "src" / "sponsorbot" / "__init__.py").write_text('__version__ = "0.1.0"\n')
    (home / "deploy").mkdir()
    (home / "deploy" / "Caddyfile").write_text("an older site\n")
    (home / ".env").write_text("SPONSORBOT_WORKERS=3\n")
    shutil.copy(REPO / "compose.yaml", home)
    if native:
        units = root / "etc" / "systemd" / "system"
        (units / "multi-user.target.wants").mkdir(parents=True)
        (units / "sponsorbot-api.service").touch()
        for n in (1, 2):
            (units / "multi-user.target.wants" / f"sponsorbot-worker@{n}.service").touch()
    return home


@pytest.mark.parametrize("native", [False, True], ids=["docker", "native"])
def test_update_dry_run_plans_backup_first_then_workers_one_by_one(
    watched: tuple[dict[str, str], Path], tmp_path: Path, release: Path, native: bool
) -> None:
    env, log = watched
    installed_tree(tmp_path, native)
    before = {str(p): p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.name != "calls.log"}
    env = {**env, "SPONSORBOT_INSTALL_ROOT": str(tmp_path)}
    result = run_cmd([str(REPO / "update.sh"), "--dry-run", "--release", str(release)], env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   checksum: sponsorbot-9.9.9.tar.gz matches" in result.stdout
    steps = re.findall(r"^\s+\d+\. (.*)$", result.stdout, re.M)
    order = ["back up the database", "unpack Sponsorbot 9.9.9", "migrations", "restart"]
    positions = [next(i for i, s in enumerate(steps) if word in s) for word in order]
    assert positions == sorted(positions), steps
    if native:
        assert "restart the workers one at a time, each running again before the next: 1 2" in steps
    else:
        assert any("replace the 3 worker container(s) one at a time" in s for s in steps)
        assert any("recreate Caddy" in s for s in steps)
    assert result.stdout.rstrip().endswith("dry run: nothing was changed")
    assert changing_calls(log) == []
    after = {str(p): p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.name != "calls.log"}
    assert after == before


def test_update_refuses_a_release_that_does_not_match_its_checksum(
    watched: tuple[dict[str, str], Path], tmp_path: Path, release: Path
) -> None:
    installed_tree(tmp_path, native=False)
    copy = tmp_path / release.name
    shutil.copy(release, copy)
    Path(f"{copy}.sha256").write_text(f"{'0' * 64}  {release.name}\n")
    env = {**watched[0], "SPONSORBOT_INSTALL_ROOT": str(tmp_path)}
    result = run_cmd([str(REPO / "update.sh"), "--dry-run", "--release", str(copy)], env=env)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "update.sh: sponsorbot-9.9.9.tar.gz does not match its checksum: download it again"
    )
    no_install = {**env, "SPONSORBOT_INSTALL_ROOT": str(tmp_path / "empty")}
    result = run_cmd([str(REPO / "update.sh"), "--dry-run"], env=no_install)
    assert result.returncode == 1 and "no installation found" in result.stderr
