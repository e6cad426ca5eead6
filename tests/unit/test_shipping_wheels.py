"""The release carries its own wheels: built from this repository's HEAD by scripts/release.sh
(for this machine's Python, to stay quick), then installed the way install.sh --native and
update.sh do, with no package index at all and every file's hash checked; a wheel changed after
the release is refused.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.unit.test_shipping_scripts import REPO, run_cmd

pytestmark = pytest.mark.slow

PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def _offline_env() -> dict[str, str]:
    """This environment without any pip setting, and an index that is not there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_CONFIG_FILE": "/dev/null"}


def _install(venv: Path, tree: Path) -> subprocess.CompletedProcess[str]:
    body = f'source "{REPO / "deploy" / "common.sh"}"; pip_install_release "{venv}" "{tree}"'
    return subprocess.run(
        ["bash", "-c", body], env=_offline_env(), capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unpacked release of HEAD, with wheels for this Python."""
    work = tmp_path_factory.mktemp("wheels")
    clone = work / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    made = subprocess.run(
        [str(clone / "scripts" / "release.sh"), "--python", PYTHON],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert made.returncode == 0, made.stderr
    archive = clone / made.stdout.split()[0]
    with tarfile.open(archive) as tar:
        tar.extractall(work / "unpacked", filter="data")
    return next((work / "unpacked").iterdir())


def test_every_wheel_is_locked_with_its_hash(tree: Path) -> None:
    lock = (tree / "requirements.lock").read_text().splitlines()
    pins = [line for line in lock if line and not line.startswith("#")]
    wheels = sorted(p.name for p in (tree / "wheels").glob("*.whl"))
    assert len(pins) == len(wheels) >= 20
    pattern = (
        rf'^[a-z0-9-]+==\S+ ; python_version == "{re.escape(PYTHON)}" --hash=sha256:[0-9a-f]{{64}}$'
    )
    assert all(re.match(pattern, pin) for pin in pins), pins
    assert any(pin.startswith("sponsorbot==") for pin in pins)
    assert any(name.startswith("asyncpg-") and "manylinux" in name for name in wheels)


def test_a_native_install_needs_no_package_index(tree: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = _install(venv, tree)
    assert done.returncode == 0, done.stderr
    version = run_cmd([str(venv / "bin" / "sponsorbot"), "--version"])
    assert version.returncode == 0 and version.stdout.startswith("sponsorbot "), version.stderr


def test_a_wheel_changed_after_the_release_is_refused(tree: Path, tmp_path: Path) -> None:
    changed = tmp_path / "tree"
    subprocess.run(["cp", "-a", str(tree), str(changed)], check=True)
    wheel = next((changed / "wheels").glob("jdatetime-*.whl"))
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = _install(venv, changed)
    assert done.returncode != 0
    assert "DO NOT MATCH THE HASHES" in done.stderr
