"""A short load test as a correctness check: every visitor answered exactly once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import clean_environ

pytestmark = pytest.mark.slow

KEYS = {
    "offered_per_s",
    "handled_per_s",
    "p50_s",
    "p95_s",
    "p99_s",
    "max_s",
    "backlog",
    "max_bot_msgs_per_s",
    "dead",
    "duplicates",
    "cpu_s",
}


def test_a_short_load_run_answers_every_visitor_exactly_once(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    picture = tmp_path / "latency.png"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sponsorbot",
            "loadtest",
            "--bots",
            "2",
            "--rate",
            "20",
            "--duration",
            "4",
            "--warmup",
            "2",
            "--rtt",
            "5",
            "--drain",
            "20",
            "--json",
            str(out),
            "--plot",
            str(picture),
        ],
        env=clean_environ(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(out.read_text())
    assert set(figures) >= KEYS
    assert figures["visitors"] == 80
    assert figures["open_failures"] == 0
    assert figures["answered"] == figures["visitors"]
    assert figures["unanswered"] == 0
    assert figures["duplicates"] == 0
    assert figures["dead"] == 0
    assert {"api", "worker1", "simulator", "postgres", "loadgen"} <= set(figures["cpu_s"])
    assert "| 2 bots, api + 1 worker(s)" in done.stdout
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert picture.stat().st_size > 10_000
