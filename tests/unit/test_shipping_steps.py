"""The functions install.sh and update.sh run as the steps of their plans (issue 16), each run
on its own, with stand-ins for the programs that would change this machine: asking /healthz,
copying a release (its owners and modes), a failing command stopping its step, replacing the
workers, and the native update's venv, built beside the running one and swapped in.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.unit.test_shipping_scripts import fake_programs, installed_tree, source_and_run

NEEDS_ROOT = pytest.mark.skipif(
    os.geteuid() != 0, reason="giving files to root or uid 10001 needs root, as the scripts do"
)


@contextmanager
def serving_healthz(where: Path) -> Iterator[str]:
    """A web server on 127.0.0.1 that answers 200 on /healthz, as a healthy api: its port."""
    where.mkdir(exist_ok=True)
    (where / "healthz").write_text("ok")
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "-d", str(where)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = re.search(r"port (\d+)", server.stdout.readline())
        assert port is not None
        yield port[1]
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_http_status_asks_without_curl(tmp_path: Path) -> None:
    with serving_healthz(tmp_path) as port:
        body = f"http_status {port} /healthz; http_status {port} /nothing; wait_healthy {port} 4"
        result = source_and_run("update.sh", body)
        assert result.stdout.splitlines() == [
            "200",
            "404",
            f"healthy: 127.0.0.1:{port}/healthz answers 200",
        ]
    result = source_and_run("update.sh", f"http_status {port} /healthz || echo refused")
    assert result.stdout == "refused\n"


# ---------------------------------------------------------------- copying a release


def test_copy_release_replaces_the_code_and_keeps_the_owners_files(tmp_path: Path) -> None:
    new, home = tmp_path / "new", tmp_path / "home"
    (new / "src" / "sponsorbot").mkdir(parents=True)
    (new / "src" / "sponsorbot" / "kept.py").write_text("new\n")
    (new / "deploy").mkdir()
    (new / "deploy" / "Caddyfile").write_text("new site\n")
    (home / "src" / "sponsorbot").mkdir(parents=True)
    (home / "src" / "sponsorbot" / "dropped.py").write_text("old\n")
    (home / "deploy").mkdir()
    (home / "deploy" / "Caddyfile").write_text("old site\n")
    (home / ".env").write_text("SPONSORBOT_SECRET_KEY=x\n")
    (home / "backups").mkdir()
    inode = (home / "deploy" / "Caddyfile").stat().st_ino
    result = source_and_run("update.sh", f'copy_release "{new}" "{home}"')
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (home / "src" / "sponsorbot").iterdir()) == ["kept.py"]
    assert (home / "deploy" / "Caddyfile").read_text() == "new site\n"
    # Compose bind-mounts this file into Caddy: the same inode keeps the mount current.
    assert (home / "deploy" / "Caddyfile").stat().st_ino == inode
    assert (home / ".env").read_text() == "SPONSORBOT_SECRET_KEY=x\n"
    assert (home / "backups").is_dir()


RELEASE_FILES = [
    "update.sh",
    "compose.yaml",
    "deploy/common.sh",
    "deploy/systemd/sponsorbot-api.service",
    "src/sponsorbot/__init__.py",
]


@NEEDS_ROOT
@pytest.mark.parametrize("in_place", [False, True], ids=["copied", "unpacked-in-place"])
def test_the_installed_release_belongs_to_root(tmp_path: Path, in_place: bool) -> None:
    # Unpacked by a user (uid 1000) and copied by root's tar, the files would keep that owner,
    # who could then change update.sh, the units or compose.yaml, all of which root runs.
    home = tmp_path / "opt" / "sponsorbot"
    new = home if in_place else tmp_path / "sponsorbot-0.2.0"
    for name in RELEASE_FILES:
        (new / name).parent.mkdir(parents=True, exist_ok=True)
        (new / name).write_text("#!/bin/sh\n")
    home.mkdir(parents=True, exist_ok=True)
    (home / ".env").write_text("SPONSORBOT_SECRET_KEY=x\n")
    (home / ".env").chmod(0o600)
    (home / "backups").mkdir()
    for path in {new, home, *new.rglob("*")} - {home / ".env", home / "backups"}:
        os.chown(path, 1000, 1000)
        path.chmod(0o777 if path.is_dir() or path.name.endswith(".sh") else 0o666)
    os.chown(home / "backups", 10001, 10001)
    result = source_and_run("update.sh", f'copy_release "{new}" "{home}"')
    assert result.returncode == 0, result.stderr
    for path in [home, *(home / name for name in RELEASE_FILES)]:
        while path != home.parent:
            info = path.stat()
            assert (info.st_uid, info.st_gid) == (0, 0), path
            assert info.st_mode & 0o022 == 0, f"{path}: {stat.filemode(info.st_mode)}"
            path = path.parent
    assert stat.S_IMODE((home / "update.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((home / "compose.yaml").stat().st_mode) == 0o644
    # The owner's files are not the release's: .env stays private, backups the image user's.
    assert stat.S_IMODE((home / ".env").stat().st_mode) == 0o600
    assert (home / ".env").read_text() == "SPONSORBOT_SECRET_KEY=x\n"
    assert (home / "backups").stat().st_uid == 10001


# ---------------------------------------------------------------- a failing step


def test_a_failing_command_inside_a_step_stops_the_plan() -> None:
    body = 'inner() { false; echo "went on"; }\nstep "one" inner\nstep "two" echo "two ran"\n'
    result = source_and_run("update.sh", body + "run_plan")
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["[1/2] one"]
    assert result.stderr.splitlines()[-1] == "update.sh: step 1 failed: one"
    fine = source_and_run("update.sh", 'step "one" true\nstep "two" echo "two ran"\nrun_plan')
    assert fine.returncode == 0 and fine.stdout.splitlines()[-1] == "two ran"


def test_a_broken_archive_leaves_the_installed_code(tmp_path: Path) -> None:
    # The old code went on after the failed tar and removed src/ before copying nothing.
    home = installed_tree(tmp_path, native=False)
    broken = tmp_path / "sponsorbot-0.2.0.tar.gz"
    broken.write_bytes(b"not a gzip stream")
    body = f'RELEASE="{broken}" NEW_VERSION=0.2.0\nstep "unpack" unpack_release\nrun_plan'
    result = source_and_run("update.sh", body, SPONSORBOT_INSTALL_ROOT=str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == "update.sh: step 1 failed: unpack"
    assert (home / "src" / "sponsorbot" / "__init__.py").read_text() == '__version__ = "0.1.0"\n'


def test_a_failed_restart_fails_its_step(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    failing = f'echo "$0 $*" >>"{log}"; [[ "$*" != {{}} ]]'
    env = fake_programs(
        tmp_path / "fake",
        systemctl=failing.format('"restart sponsorbot-api.service"'),
        docker=failing.format('"compose up -d --no-deps api"'),
    )
    home = installed_tree(tmp_path, native=False)
    where = {"PATH": env["PATH"], "SPONSORBOT_INSTALL_ROOT": str(tmp_path)}
    started = source_and_run(
        "install.sh", 'WORKERS=2\nstep "start" start_services\nrun_plan', **where
    )
    assert started.returncode == 1
    assert started.stderr.splitlines()[-1] == "install.sh: step 1 failed: start"
    assert "sponsorbot-worker@" not in log.read_text()
    # The old api still answers /healthz: the step must not take that for the new one.
    with serving_healthz(tmp_path / "old-api") as port:
        (home / ".env").write_text(f"SPONSORBOT_API_PORT={port}\n")
        restarted = source_and_run(
            "update.sh", 'step "restart" restart_docker_api\nrun_plan', **where
        )
    assert restarted.returncode == 1
    assert restarted.stderr.splitlines()[-1] == "update.sh: step 1 failed: restart"
    assert "healthy" not in restarted.stdout


# ---------------------------------------------------------------- docker and systemd


FAKE_DOCKER = """#!/bin/bash
# Just enough of docker for replace_workers: containers are lines of {state}.
echo "$*" >>"{log}"
case "$*" in
compose\\ version) exit 0 ;;
"compose ps -q worker") cat "{state}" ;;
"compose up -d --no-deps --no-recreate --scale worker="*)
\tn=${{7#worker=}}
\twhile [[ $(wc -l <"{state}") -lt $n ]]; do
\t\techo "new$(wc -l <"{log}")" >>"{state}"
\tdone ;;
rm\\ *) grep -vx "$2" "{state}" >"{state}.tmp"; mv "{state}.tmp" "{state}" ;;
inspect\\ *) echo "true 0" ;;
esac
"""


def test_workers_are_replaced_one_at_a_time(tmp_path: Path) -> None:
    bin_dir, state, log = tmp_path / "bin", tmp_path / "containers", tmp_path / "docker.log"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(FAKE_DOCKER.format(state=state, log=log))
    (bin_dir / "docker").chmod(0o755)
    (tmp_path / "opt" / "sponsorbot").mkdir(parents=True)
    state.write_text("old1\nold2\nold3\n")
    result = source_and_run(
        "update.sh",
        "replace_workers 3",
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        SPONSORBOT_INSTALL_ROOT=str(tmp_path),
        SPONSORBOT_SETTLE_SECONDS="0",
    )
    assert result.returncode == 0, result.stderr
    calls = [c for c in log.read_text().splitlines() if not c.startswith(("compose v", "insp"))]
    up = "compose up -d --no-deps --no-recreate --scale worker=3 worker"
    for old in ("old1", "old2", "old3"):
        start = calls.index(f"stop --time 20 {old}")
        assert calls[start + 1 : start + 3] == [f"rm {old}", up]
    running = state.read_text().split()
    assert len(running) == 3 and not any(c.startswith("old") for c in running)


@pytest.mark.parametrize("failing", [None, 2])
def test_native_workers_restart_in_turn(tmp_path: Path, failing: int | None) -> None:
    bin_dir, log = tmp_path / "bin", tmp_path / "systemctl.log"
    bin_dir.mkdir()
    down = f"sponsorbot-worker@{failing}.service" if failing else "none"
    (bin_dir / "systemctl").write_text(
        f'#!/bin/bash\necho "$*" >>"{log}"\n[[ "$*" != "is-active --quiet {down}" ]]\n'
    )
    (bin_dir / "systemctl").chmod(0o755)
    wants = tmp_path / "etc" / "systemd" / "system" / "multi-user.target.wants"
    wants.mkdir(parents=True)
    for n in (2, 1, 10):
        (wants / f"sponsorbot-worker@{n}.service").symlink_to("/nonexistent")
    result = source_and_run(
        "update.sh",
        "native_restart_workers",
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        SPONSORBOT_INSTALL_ROOT=str(tmp_path),
        SPONSORBOT_SETTLE_SECONDS="0",
    )
    expected = []
    for n in (1, 2, 10):
        unit = f"sponsorbot-worker@{n}.service"
        expected += [f"restart {unit}", f"is-active --quiet {unit}"]
        if n == failing:
            break
    assert log.read_text().splitlines() == expected
    if failing:
        assert result.returncode == 1
        assert result.stderr == (f"update.sh: {down} did not stay up: journalctl -u {down}\n")
    else:
        assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- the native update's venv

# python3 -m venv makes a real venv (without pip, for speed) and puts in a pip whose install
# writes bin/sponsorbot with the venv's own python in its #! line, as pip does.
FAKE_PYTHON3 = """[[ $1 == -m && $2 == venv ]] || exec "{python}" "$@"
"{python}" -m venv --without-pip "${{@:3}}"
venv=${{!#}}
cat >"$venv/bin/pip" <<EOF
#!/bin/bash
cat >"$venv/bin/sponsorbot" <<'SCRIPT'
#!$venv/bin/python
import sys
print("new", sys.prefix)
SCRIPT
chmod 755 "$venv/bin/sponsorbot"
EOF
chmod 755 "$venv/bin/pip"
"""


def test_the_new_venv_is_built_beside_the_running_one_then_swapped_in(tmp_path: Path) -> None:
    home = tmp_path / "opt" / "sponsorbot"
    running = home / "venv" / "bin" / "sponsorbot"
    running.parent.mkdir(parents=True)
    running.write_text("#!/bin/sh\necho old\n")
    running.chmod(0o755)
    before = running.stat()
    env = fake_programs(tmp_path / "fake", python3=FAKE_PYTHON3.format(python=sys.executable))
    where = {"PATH": env["PATH"], "SPONSORBOT_INSTALL_ROOT": str(tmp_path)}
    built = source_and_run("update.sh", "build_venv", **where)
    assert built.returncode == 0, built.stderr
    # The running api and workers read their venv as they go: pip left it alone.
    assert running.read_text() == "#!/bin/sh\necho old\n"
    assert running.stat().st_mtime_ns == before.st_mtime_ns
    script = (home / "venv.new" / "bin" / "sponsorbot").read_text()
    assert script.splitlines()[0] == f"#!{home}/venv/bin/python"
    assert f'VIRTUAL_ENV="{home}/venv"' in (home / "venv.new" / "bin" / "activate").read_text()
    if os.geteuid() == 0:
        assert (home / "venv.new" / "bin" / "sponsorbot").stat().st_uid == 0
    swapped = source_and_run("update.sh", "swap_venv before.tar", **where)
    assert swapped.returncode == 0, swapped.stderr
    assert "the previous venv is /opt/sponsorbot/venv.old; to go back to it:" in swapped.stdout
    assert not (home / "venv.new").exists()
    assert (home / "venv.old" / "bin" / "sponsorbot").read_text() == "#!/bin/sh\necho old\n"
    ran = subprocess.run(
        [str(home / "venv" / "bin" / "sponsorbot")], capture_output=True, text=True, check=False
    )
    assert ran.stdout == f"new {home}/venv\n", ran.stderr


@pytest.mark.parametrize("valid", [True, False])
def test_the_caddy_site_goes_back_when_caddy_refuses_it(tmp_path: Path, valid: bool) -> None:
    log, site = tmp_path / "calls.log", tmp_path / "etc" / "caddy" / "sponsorbot.caddy"
    site.parent.mkdir(parents=True)
    site.write_text("the old site\n")
    env = fake_programs(
        tmp_path / "fake",
        caddy=f'echo "caddy $*" >>"{log}"; {"true" if valid else "false"}',
        systemctl=f'echo "systemctl $*" >>"{log}"',
    )
    where = {"PATH": env["PATH"], "SPONSORBOT_INSTALL_ROOT": str(tmp_path)}
    result = source_and_run("update.sh", "native_caddy 'the new site'$'\\n'", **where)
    calls = log.read_text().splitlines()
    assert calls[0] == "caddy validate --adapter caddyfile --config /etc/caddy/Caddyfile"
    if valid:
        assert result.returncode == 0, result.stderr
        assert site.read_text() == "the new site\n"
        assert calls[1:] == ["systemctl reload caddy"]
    else:
        assert result.returncode == 1
        assert site.read_text() == "the old site\n"
        assert calls[1:] == []
