"""`sponsorbot loadtest --set NAME=VALUE`: checked as the product reads it, passed to api and
workers (which get none of the caller's SPONSORBOT_ variables)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sponsorbot.cli import app
from sponsorbot.loadtest.options import Options
from sponsorbot.loadtest.runner import _environment


@pytest.mark.parametrize(
    ("pair", "says"),
    [
        ("nope=1", "not NAME=VALUE"),
        ("worker_claim_gather_ms", "not NAME=VALUE"),
        ("worker_claim_gather_ms=9999", "less than or equal to 200"),
        ("worker_slots=many", "valid integer"),
        ("port=1", "the load test sets it itself"),
    ],
)
def test_a_bad_setting_is_refused_before_anything_starts(pair: str, says: str) -> None:
    result = CliRunner().invoke(app, ["loadtest", "--set", pair, "--duration", "1"])
    assert result.exit_code == 2
    assert says in result.output


def test_a_peer_takes_no_setting() -> None:
    args = ["loadtest", "--peer", "aiogram", "--set", "intake_gather_ms=10"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "a peer has none" in result.output


def test_the_settings_reach_the_processes_and_the_callers_do_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPONSORBOT_WORKER_COMMIT_GATHER_MS", "50")
    options = Options(settings=(("worker_claim_gather_ms", "30"), ("intake_gather_ms", "12")))
    env, _ = _environment(tmp_path, "http://127.0.0.1:9", 9, options)
    assert env["SPONSORBOT_WORKER_CLAIM_GATHER_MS"] == "30"
    assert env["SPONSORBOT_INTAKE_GATHER_MS"] == "12"
    assert "SPONSORBOT_WORKER_COMMIT_GATHER_MS" not in env
