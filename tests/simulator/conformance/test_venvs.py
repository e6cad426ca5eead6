"""The libraries' environments: exact pins, named after them, and no wait without an index."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sponsorbot.loadtest.peer import REQUIREMENTS, venv_dir
from tests.processes import free_port
from tests.simulator.conformance.venvs import (
    PTB_REQUIREMENTS,
    VenvUnavailable,
    ptb_dir,
    ptb_python,
)


@pytest.mark.parametrize(
    ("requirements", "home"),
    [(REQUIREMENTS, venv_dir), (PTB_REQUIREMENTS, ptb_dir)],
    ids=["aiogram", "ptb"],
)
def test_each_environment_is_pinned_and_named_after_its_pins(
    requirements: tuple[str, ...], home: Callable[[], Path]
) -> None:
    name = home().name
    for requirement in requirements:
        package, _, version = requirement.partition("==")
        assert re.fullmatch(r"\d+(\.\d+)+", version), f"{requirement} is no exact pin"
        assert f"{package}-{version}" in name  # another pin, another environment
    assert {"aiogram==3.31.0", "python-telegram-bot==22.8"} <= {*REQUIREMENTS, *PTB_REQUIREMENTS}


def test_without_a_package_index_the_environment_is_given_up_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pip retries an unreachable index for about 8 s by default; the tests skip at once.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # no extra index, no local wheels
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{free_port()}/simple")
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX"):
        monkeypatch.delenv(name, raising=False)
    started = time.monotonic()
    with pytest.raises(VenvUnavailable):
        ptb_python()
    assert time.monotonic() - started < 4
    assert not (ptb_dir() / "ready").exists()
