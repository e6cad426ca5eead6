"""update.sh after a bad day: a failed update finished by running the same command again, the
way back with --rollback (the database restored only when the update changed it), and the
backups made before updates pruned. Run whole under a prefix with stand-ins for docker.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.test_shipping_scripts import REPO, fake_programs, installed_tree, run_cmd
from tests.unit.test_shipping_steps import NEEDS_ROOT, serving_healthz
from tests.unit.test_shipping_update import make_release

pytestmark = NEEDS_ROOT

# A migration only the new release has: its code would refuse to go back without a restore.
NEW_MIGRATION = "src/sponsorbot/db/migrations/0999_new.sql"
# The docker calls that only look.
LOOKING = ("compose version", "image inspect")


class Install:
    """A Docker installation of 0.1.0 under a prefix, with a docker stand-in that logs its
    calls and fails every call matching FAIL_ON (a regular expression) while that is set."""

    def __init__(self, root: Path, port: str) -> None:
        self.root = root
        self.home = installed_tree(root, native=False)
        for script in ("update.sh", "deploy/common.sh"):
            (self.home / script).write_bytes((REPO / script).read_bytes())
        (self.home / "update.sh").chmod(0o755)
        migrations = self.home / "src" / "sponsorbot" / "db" / "migrations"
        migrations.mkdir(parents=True)
        (migrations / "0001_first.sql").write_text("SELECT 1;\n")
        (self.home / ".installed-version").write_text("0.1.0\n")
        (self.home / ".env").write_text(f"SPONSORBOT_WORKERS=1\nSPONSORBOT_API_PORT={port}\n")
        self.log = root / "docker.log"
        self.fail_on = root / "fail-on"
        docker = (
            f'echo "$*" >>"{self.log}"\n'
            f'if [[ -s "{self.fail_on}" ]] && grep -qE -- "$(cat "{self.fail_on}")" <<<"$*"; then\n'
            '\techo "docker: failed" >&2; exit 1\nfi'
        )
        self.env = fake_programs(root / "fake", docker=docker)
        self.env.update(SPONSORBOT_INSTALL_ROOT=str(root), SPONSORBOT_SETTLE_SECONDS="0")

    def update(self, *args: str) -> tuple[int, str]:
        """Run the installed update.sh with `args` and --yes: its exit code and output."""
        result = run_cmd([str(self.home / "update.sh"), *args, "--yes"], env=self.env)
        return result.returncode, result.stdout + result.stderr

    def calls(self) -> list[str]:
        """The docker calls so far that change something, and forget them all."""
        calls = self.log.read_text().splitlines() if self.log.exists() else []
        self.log.unlink(missing_ok=True)
        return [c for c in calls if not c.startswith(LOOKING)]

    def running(self) -> str:
        return (self.home / ".installed-version").read_text().strip()

    def tree(self, where: str = "") -> str:
        init = (self.home / where / "src" / "sponsorbot" / "__init__.py").read_text()
        match = re.search(r'"(.*)"', init)
        assert match is not None
        return match[1]


@pytest.fixture
def install(tmp_path: Path) -> Iterator[Install]:
    with serving_healthz(tmp_path / "api") as port:
        yield Install(tmp_path, port)


def _release(install: Install, version: str, migration: bool = False) -> Path:
    files = {s: (REPO / s).read_bytes() for s in ("update.sh", "deploy/common.sh")}
    files["src/sponsorbot/db/migrations/0001_first.sql"] = b"SELECT 1;\n"
    if migration:
        files[NEW_MIGRATION] = b"SELECT 2;\n"
    return make_release(install.root / "download", version, files)


def test_the_same_command_again_finishes_an_update_that_failed_after_unpacking(
    install: Install,
) -> None:
    release = _release(install, "0.2.0")
    install.fail_on.write_text("run --rm --no-deps -T migrate")
    code, out = install.update("--release", str(release))
    assert code == 1 and "failed: apply the database migrations" in out
    assert (install.tree(), install.running()) == ("0.2.0", "0.1.0")

    install.fail_on.write_text("")
    install.calls()
    code, out = install.update("--release", str(release))
    assert code == 0, out
    unfinished = "the last update to 0.2.0 did not finish (Sponsorbot 0.1.0 still runs)"
    assert f"{unfinished}: finishing it" in out
    assert "nothing to do" not in out
    assert install.running() == "0.2.0"
    calls = install.calls()
    assert "compose run --rm --no-deps -T migrate" in calls
    assert "compose up -d --no-deps api" in calls
    # The release kept for --rollback is the one that ran, not the half-installed one, and the
    # re-run's backup is named for the version that ran.
    assert install.tree("previous") == "0.1.0"
    assert not any("tag sponsorbot:local sponsorbot:previous" in c for c in calls)
    backup = r"api backup /var/lib/sponsorbot/backups/sponsorbot-0\.1\.0-before-update-"
    assert re.search(backup, "\n".join(calls))

    code, out = install.update("--release", str(release))
    assert code == 0 and "already at version 0.2.0: nothing to do" in out


def test_an_update_pulls_newer_images_unless_told_not_to(install: Install) -> None:
    code, out = install.update("--release", str(_release(install, "0.2.0")))
    assert code == 0, out
    calls = install.calls()
    assert calls.index("compose pull db caddy") < calls.index("compose build --pull")
    kept = calls.index("tag sponsorbot:local sponsorbot:previous")
    assert kept < calls.index("compose build --pull")
    assert "compose up -d --no-deps db caddy" in calls

    code, out = install.update("--release", str(_release(install, "0.3.0")), "--no-pull")
    assert code == 0, out
    calls = install.calls()
    assert "compose build" in calls
    assert not any("pull" in c for c in calls)


def test_an_install_behind_a_proxy_never_starts_a_caddy(install: Install) -> None:
    env = install.home / ".env"
    env.write_text(env.read_text() + "BEHIND_PROXY=yes\n")
    files = {"deploy/Caddyfile": b"a changed site\n"}
    release = make_release(install.root / "download", "0.2.0", files)
    code, out = install.update("--release", str(release))
    assert code == 0, out
    calls = install.calls()
    assert "compose pull db" in calls and "compose up -d --no-deps db" in calls
    assert not any("caddy" in c for c in calls)


def test_rollback_swaps_code_and_image_and_keeps_the_database_when_no_migration_was_added(
    install: Install,
) -> None:
    code, out = install.update("--release", str(_release(install, "0.2.0")))
    assert code == 0, out
    assert "sudo /opt/sponsorbot/update.sh --rollback goes back to it" in out
    install.calls()

    code, out = install.update("--rollback")
    assert code == 0, out
    assert "0.2.0 added no migration, so 0.1.0 runs on it as it is" in out
    assert (install.running(), install.tree()) == ("0.1.0", "0.1.0")
    assert install.tree("previous") == "0.2.0"
    calls = install.calls()
    assert calls[0] == "compose stop api worker"
    assert calls.index("tag sponsorbot:previous sponsorbot:local") < calls.index(
        "compose up -d --no-deps --force-recreate api"
    )
    assert not any(" restore " in c for c in calls)

    # And forward again: --rollback goes back to what ran before it.
    code, out = install.update("--rollback")
    assert code == 0, out
    assert (install.running(), install.tree("previous")) == ("0.2.0", "0.1.0")
    assert sorted(p.name for p in install.home.glob("previous*")) == ["previous"]
    assert not list((install.home / "previous").glob("previous*"))


def test_rollback_restores_the_backup_when_the_update_changed_the_database(
    install: Install,
) -> None:
    code, out = install.update("--release", str(_release(install, "0.2.0", migration=True)))
    assert code == 0, out
    backups = install.home / "backups"
    # The stand-in docker writes no file: these are the backups the update and an older one made.
    (backups / "sponsorbot-0.1.0-before-update-20261201T000000Z.tar").write_text("older")
    (backups / "sponsorbot-0.1.0-before-update-20261204T120000Z.tar").write_text("newest")
    install.calls()

    code, out = install.update("--rollback")
    assert code == 0, out
    assert "0.2.0 changed the database (migrations 0999_new.sql)" in out
    assert "everything since it (visitors, orders, payments) is lost" in out
    calls = install.calls()
    restore = (
        "compose run --rm --no-deps -T api restore "
        "/var/lib/sponsorbot/backups/sponsorbot-0.1.0-before-update-20261204T120000Z.tar --force"
    )
    assert calls.index("tag sponsorbot:previous sponsorbot:local") < calls.index(restore)
    assert calls.index(restore) < calls.index("compose run --rm --no-deps -T migrate")
    assert install.running() == "0.1.0"


def test_rollback_without_the_backup_it_needs_is_refused_and_changes_nothing(
    install: Install,
) -> None:
    code, out = install.update("--release", str(_release(install, "0.2.0", migration=True)))
    assert code == 0, out
    install.calls()
    code, out = install.update("--rollback")
    assert code == 1
    assert "0.2.0 added migrations (0999_new.sql) and no backup made before the update" in out
    assert install.calls() == [] and install.running() == "0.2.0"


def test_rollback_with_nothing_kept_is_refused(install: Install) -> None:
    code, out = install.update("--rollback")
    assert code == 1
    assert "there is no previous release in /opt/sponsorbot/previous to go back to" in out
    assert install.calls() == []


def test_only_the_newest_backups_made_before_updates_are_kept(install: Install) -> None:
    backups = install.home / "backups"
    backups.mkdir()
    made = []
    for day in range(1, 8):
        path = backups / f"sponsorbot-0.0.{day}-before-update-202612{day:02d}T000000Z.tar"
        path.write_text("x")
        made.append(path)
    other = backups / "nightly.tar"
    other.write_text("the owner's own")
    for n, path in enumerate(made):
        stamp = 1_700_000_000 + n * 3600
        os.utime(path, (stamp, stamp))
    code, out = install.update("--release", str(_release(install, "0.2.0")), "--keep-backups", "3")
    assert code == 0, out
    assert sorted(p.name for p in backups.iterdir()) == sorted(
        [other.name] + [p.name for p in made[-3:]]
    )
