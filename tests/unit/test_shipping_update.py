"""update.sh as the owner meets it (issue 16): which releases it takes (newer ones; the same
or an older one only when asked), the native plan with the venv built beside the running one
and Caddy's site, and a whole Docker update, run under a prefix with a stand-in for docker,
during which the release overwrites update.sh itself.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from tests.unit.test_shipping_scripts import (
    REPO,
    changing_calls,
    fake_programs,
    installed_tree,
    run_cmd,
    source_and_run,
    watch,
)
from tests.unit.test_shipping_steps import NEEDS_ROOT, serving_healthz


def make_release(where: Path, version: str, files: dict[str, bytes] | None = None) -> Path:
    """sponsorbot-<version>.tar.gz and its .sha256 in `where`, as scripts/release.sh makes them:
    a version, the Caddy site and compose.yaml, and `files` (path in the release: content)."""
    top = f"sponsorbot-{version}"
    contents = {
        "src/sponsorbot/__init__.py": f'__version__ = "{version}"\n'.encode(),
        "deploy/Caddyfile": (REPO / "deploy" / "Caddyfile").read_bytes(),
        "compose.yaml": (REPO / "compose.yaml").read_bytes(),
        **(files or {}),
    }
    where.mkdir(parents=True, exist_ok=True)
    archive = where / f"{top}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in contents.items():
            member = tarfile.TarInfo(f"{top}/{name}")
            member.size = len(data)
            member.mode = 0o755 if name.endswith(".sh") else 0o644
            tar.addfile(member, io.BytesIO(data))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    Path(f"{archive}.sha256").write_text(f"{digest}  {archive.name}\n")
    return archive


def _dry_run(tmp_path: Path, release: Path, *args: str) -> tuple[str, str, int, list[str]]:
    """update.sh --dry-run under the prefix tmp_path, watched: stdout, stderr, the exit code
    and the calls that would have changed this machine."""
    env, log = watch(tmp_path)
    env["SPONSORBOT_INSTALL_ROOT"] = str(tmp_path)
    command = [str(REPO / "update.sh"), "--dry-run", "--release", str(release), *args]
    result = run_cmd(command, env=env)
    return result.stdout, result.stderr, result.returncode, changing_calls(log)


# ---------------------------------------------------------------- which releases


@pytest.mark.parametrize(
    ("version", "args", "code", "says", "planned"),
    [
        ("0.10.0", [], 0, "ok   release: Sponsorbot 0.10.0", True),
        (
            "0.1.0",
            [],
            0,
            "already at version 0.1.0: nothing to do (--reinstall installs this release again)",
            False,
        ),
        ("0.1.0", ["--reinstall"], 0, "--   reinstalling Sponsorbot 0.1.0 (--reinstall)", True),
        (
            "0.0.9",
            [],
            1,
            "update.sh: Sponsorbot 0.0.9 is older than the installed 0.1.0: refusing to go back "
            "(--allow-downgrade does, after a warning)",
            False,
        ),
        (
            "0.0.9",
            ["--allow-downgrade"],
            0,
            "warning: going back from Sponsorbot 0.1.0 to the older 0.0.9: the database keeps "
            "0.1.0's schema, and if 0.1.0 added migrations, 0.0.9's migrate refuses the database",
            True,
        ),
    ],
    ids=["newer", "same", "reinstall", "older", "allow-downgrade"],
)
def test_update_takes_a_newer_release_and_the_others_only_when_asked(
    tmp_path: Path, version: str, args: list[str], code: int, says: str, planned: bool
) -> None:
    installed_tree(tmp_path, native=False)
    release = make_release(tmp_path / "download", version)
    out, err, returncode, changing = _dry_run(tmp_path, release, *args)
    assert returncode == code, out + err
    assert says in out + err
    assert ("The plan (nothing has been changed yet):" in out) == planned
    assert changing == []


def test_versions_are_ordered_as_python_orders_them() -> None:
    older_newer = [
        ("0.9.0", "0.10.0"),
        ("0.1.0", "0.1.1"),
        ("1.0rc1", "1.0"),
        ("1.0a2", "1.0b1"),
        ("1.0.dev3", "1.0a1"),
        ("1.0a1.dev1", "1.0a1"),
        ("1.0", "1.0.post1"),
    ]
    body = "\n".join(
        f"older_than {a} {b} && echo yes || echo no; older_than {b} {a} && echo yes || echo no"
        for a, b in older_newer
    )
    result = source_and_run("update.sh", body + "\nolder_than 1.0 1.0 && echo yes || echo no")
    assert result.stdout.split() == ["yes", "no"] * len(older_newer) + ["no"]


# ---------------------------------------------------------------- the native plan


def _site(domain: str, upstream: str) -> str:
    """/etc/caddy/sponsorbot.caddy as install.sh writes it."""
    template = (REPO / "deploy" / "Caddyfile").read_text()
    return template.replace("{$SPONSORBOT_DOMAIN}", domain).replace(
        "{$SPONSORBOT_UPSTREAM}", upstream
    )


@pytest.mark.parametrize("site_changed", [False, True], ids=["same-site", "new-site"])
def test_native_update_builds_beside_the_venv_and_swaps_it_before_the_restart(
    tmp_path: Path, site_changed: bool
) -> None:
    home = installed_tree(tmp_path, native=True)
    (home / ".env").write_text("SPONSORBOT_PUBLIC_URL=https://bot.example.com\n")
    site = tmp_path / "etc" / "caddy" / "sponsorbot.caddy"
    site.parent.mkdir(parents=True)
    site.write_text(_site("bot.example.com", "127.0.0.1:8080"))
    release = make_release(tmp_path / "download", "0.2.0")
    if site_changed:
        release = make_release(tmp_path / "download", "0.2.0", {"deploy/Caddyfile": b"new\n"})
    out, err, returncode, changing = _dry_run(tmp_path, release)
    assert returncode == 0, out + err
    assert changing == []
    steps = re.findall(r"^\s+\d+\. (.*)$", out, re.M)
    order = [
        "back up the database",
        "unpack Sponsorbot 0.2.0",
        "build a new virtual environment /opt/sponsorbot/venv.new",
        "apply the database migrations (sponsorbot migrate, the new code's)",
        "put the new virtual environment in place: /opt/sponsorbot/venv becomes venv.old",
        "restart sponsorbot-api",
        "restart the workers one at a time",
    ]
    positions = [next(i for i, s in enumerate(steps) if s.startswith(word)) for word in order]
    assert positions == sorted(positions), steps
    assert not any("into /opt/sponsorbot/venv (pip)" in s for s in steps)
    rewrite = "rewrite /etc/caddy/sponsorbot.caddy from the release's site"
    assert steps[-1] == "record that Sponsorbot 0.2.0 runs (/opt/sponsorbot/.installed-version)"
    if site_changed:
        assert steps[-3].startswith(rewrite)
    else:
        assert not any(s.startswith(rewrite) for s in steps)
        assert "ok   /etc/caddy/sponsorbot.caddy: the release's site is the same" in out


# ---------------------------------------------------------------- a whole update


@NEEDS_ROOT
def test_an_update_runs_nothing_of_the_update_sh_it_unpacks(tmp_path: Path) -> None:
    # The release overwrites update.sh in place (tar --overwrite keeps the inode) while bash
    # still reads it. The new one is longer: at the offset where the old one ends, it touches
    # a file, which is what bash would run next if it read on after main.
    home = installed_tree(tmp_path, native=False)
    shutil.copy2(REPO / "update.sh", home / "update.sh")
    shutil.copy2(REPO / "deploy" / "common.sh", home / "deploy" / "common.sh")
    old = (home / "update.sh").read_bytes()
    stray = tmp_path / "stray"
    head = b"#!/usr/bin/env bash\n"
    new = head + b"#" * (len(old) - len(head) - 1) + b"\n"
    assert len(new) == len(old)
    new += f'touch "{stray}"\n'.encode() * 20 + b"exit 0\n"
    common = (REPO / "deploy" / "common.sh").read_bytes()
    files = {"update.sh": new, "deploy/common.sh": common}
    release = make_release(tmp_path / "download", "0.2.0", files)
    log = tmp_path / "docker.log"
    env = fake_programs(tmp_path / "fake", docker=f'echo "$*" >>"{log}"')
    env.update(SPONSORBOT_INSTALL_ROOT=str(tmp_path), SPONSORBOT_SETTLE_SECONDS="0")
    with serving_healthz(tmp_path / "api") as port:
        (home / ".env").write_text(f"SPONSORBOT_WORKERS=1\nSPONSORBOT_API_PORT={port}\n")
        command = [str(home / "update.sh"), "--release", str(release), "--yes"]
        result = run_cmd(command, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-2:] == [
        "updated: Sponsorbot 0.2.0 runs; the backup made first is in /opt/sponsorbot/backups",
        "the previous release stays in /opt/sponsorbot/previous until the next update: "
        "sudo /opt/sponsorbot/update.sh --rollback goes back to it",
    ]
    assert (home / "update.sh").read_bytes() == new
    assert not stray.exists()
    calls = log.read_text().splitlines()
    backup = next(i for i, c in enumerate(calls) if " api backup /var/lib/sponsorbot/" in c)
    assert backup < calls.index("compose build --pull") < calls.index("compose up -d --no-deps api")
    assert os.stat(home / "backups").st_uid == 10001
