"""A short load test as a correctness check: every visitor answered exactly once; with
campaigns, every join through a campaign's link credited exactly once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    "cpu_ms_per_visitor",
    "product_cpu_ms_per_visitor",
    "product_over_simulator",
}
# The database's work; the product's runs only (the peer has no database).
DB_KEYS = {"db_transactions_per_visitor", "db_rows_per_visitor", "db_wal_bytes_per_visitor"}
# 2 bots, 20/s for 4 s after 2 s at half rate.
SHORT = ["--bots", "2", "--rate", "20", "--duration", "4", "--warmup", "2", "--rtt", "5"]
WARMUP_VISITORS = 20
MEASURED_VISITORS = 80


def _loadtest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sponsorbot", "loadtest", *SHORT, "--drain", "20", *args],
        env=clean_environ(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _measured(
    tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """A short run with `args` that must succeed, and the figures it wrote with --json."""
    out = tmp_path / "figures.json"
    done = _loadtest(*args, "--json", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    figures: dict[str, Any] = json.loads(out.read_text())
    return done, figures


def test_a_short_load_run_answers_every_visitor_exactly_once(tmp_path: Path) -> None:
    picture = tmp_path / "latency.png"
    done, figures = _measured(tmp_path, "--plot", str(picture))
    assert set(figures) >= KEYS | DB_KEYS
    assert "campaigns" not in figures
    assert "campaigns: off" in done.stdout
    assert figures["visitors"] == MEASURED_VISITORS
    assert figures["open_failures"] == 0
    assert figures["answered"] == figures["visitors"]
    assert figures["unanswered"] == 0
    assert figures["duplicates"] == 0
    assert figures["dead"] == 0
    assert {"api", "worker1", "simulator", "postgres", "loadgen"} <= set(figures["cpu_s"])
    # Every visitor is stored, claimed and marked done at least; the statistics lag up to a
    # second at both ends of this short window, so only that there was work is certain.
    assert figures["db_transactions_per_visitor"] > 0
    assert figures["db_rows_per_visitor"] > 0
    assert figures["db_wal_bytes_per_visitor"] > 0
    assert "PostgreSQL per visitor:" in done.stdout
    assert "| 2 bots, api + 1 worker(s)" in done.stdout
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert picture.stat().st_size > 10_000


def test_with_campaigns_every_join_through_a_campaign_link_is_credited_once(
    tmp_path: Path,
) -> None:
    done, figures = _measured(tmp_path, "--campaigns")
    assert set(figures) >= KEYS
    # The visitors are answered as without campaigns: the gate has the same two channels.
    assert figures["visitors"] == MEASURED_VISITORS
    assert figures["answered"] == figures["visitors"]
    assert (figures["duplicates"], figures["dead"], figures["open_failures"]) == (0, 0, 0)
    campaigns = figures["campaigns"]
    assert campaigns["running"] == 2
    assert campaigns["join_failures"] == 0
    # Every visitor, warm-up included, joined through its bot's campaign link, once.
    assert campaigns["joins_made"] == WARMUP_VISITORS + MEASURED_VISITORS
    assert campaigns["credited"] == campaigns["joins_made"]
    assert campaigns["outside_gate"] == 0
    assert figures["handled_other_per_s"] > 0
    assert "| 2 bots, api + 1 worker(s), Telegram 5 ms away, campaigns |" in done.stdout
    assert "campaigns: on, 2 running" in done.stdout
    assert "credited: 100," in done.stdout
    assert figures["joins"] == {"made": 100, "failed": 0}


def test_joins_without_campaigns_are_made_by_username_and_credit_nothing(tmp_path: Path) -> None:
    done, figures = _measured(tmp_path, "--joins")
    assert figures["answered"] == figures["visitors"] == MEASURED_VISITORS
    assert (figures["duplicates"], figures["dead"]) == (0, 0)
    assert figures["joins"] == {"made": WARMUP_VISITORS + MEASURED_VISITORS, "failed": 0}
    assert "campaigns" not in figures
    assert figures["handled_other_per_s"] > 0
    assert "campaigns: off; joins made by @username: 100;" in done.stdout


BROADCAST_KEYS = {
    "broadcast_sent_per_s",
    "broadcast_duplicates",
    "broadcast_recipients",
    "broadcast_delivered",
    "worker_peak_rss_mb",
}


def test_a_broadcast_goes_to_its_made_up_recipients_once_beside_the_visitors(
    tmp_path: Path,
) -> None:
    done, figures = _measured(tmp_path, "--broadcast", "200")
    assert set(figures) >= KEYS | BROADCAST_KEYS
    # The visitors are answered as without a broadcast, and none of them got it.
    assert figures["visitors"] == MEASURED_VISITORS
    assert figures["answered"] == figures["visitors"]
    assert (figures["duplicates"], figures["dead"], figures["open_failures"]) == (0, 0, 0)
    assert figures["broadcast_recipients"] == 2 * 200
    assert figures["broadcast_duplicates"] == 0
    assert figures["broadcast_sent_per_s"] > 0
    assert 0 < figures["broadcast_delivered"] <= figures["broadcast_recipients"]
    # The product counts at least what the simulator accepted by the time it was asked.
    status = figures["broadcast_status"]
    assert sum(status["statuses"].values()) == 2
    assert set(status["statuses"]) <= {"sending", "done"}
    assert figures["worker_peak_rss_mb"] > 0
    assert figures["peak_rss_mb"]["worker1"] == figures["worker_peak_rss_mb"]
    assert "| 2 bots, api + 1 worker(s), Telegram 5 ms away, broadcast to 200 per bot |" in (
        done.stdout
    )
    assert "broadcast: 400 made-up recipients;" in done.stdout


@pytest.mark.xdist_group("peer-venvs")  # one worker makes ~/.cache/sponsorbot-peer at a time
def test_the_aiogram_peer_answers_every_visitor_under_the_same_load(tmp_path: Path) -> None:
    from sponsorbot.loadtest.peer import PeerUnavailable, peer_python

    try:  # its own virtual environment, made once (pip) and reused
        peer_python(lambda _: None)
    except PeerUnavailable as exc:
        pytest.skip(f"the aiogram peer's virtual environment cannot be made here: {exc}")
    done, figures = _measured(tmp_path, "--peer", "aiogram")
    assert set(figures) >= KEYS | {"open_p50_s", "open_p99_s", "peer", "peer_errors"}
    assert figures["visitors"] == MEASURED_VISITORS
    assert figures["answered"] == figures["visitors"]
    assert (figures["duplicates"], figures["open_failures"], figures["peer_errors"]) == (0, 0, 0)
    # No database: the latency runs from the link's opening, and nothing is marked dead.
    assert figures["latency_from"] == "open"
    assert figures["p99_s"] == figures["open_p99_s"]
    assert figures["dead"] is None
    assert set(figures["cpu_s"]) == {"simulator", "peer", "loadgen"}
    assert figures["peer"].startswith("aiogram 3.")
    assert "| 2 bots, peer: aiogram 3." in done.stdout


def test_statements_says_which_statements_postgresql_spends_its_time_on(tmp_path: Path) -> None:
    done, figures = _measured(tmp_path, "--statements")
    assert figures["answered"] == figures["visitors"] == MEASURED_VISITORS
    counted = figures["statements"]
    top = {s["statement"].split(" (")[0]: s for s in counted["top"]}
    # Every visitor's update is stored, claimed and committed with its reply: the gathered
    # insert, the claim and the commit statement are each about one call per visitor.
    for name in ("WITH stored AS", "WITH due AS", "WITH w0 AS"):
        assert name in top, counted["top"]
        assert 0.3 < top[name]["calls"] <= 1.5, top[name]
        assert top[name]["us"] > 0
    assert counted["all"]["calls"] >= sum(s["calls"] for s in counted["top"])
    assert counted["all"]["us"] >= sum(s["us"] for s in counted["top"]) - 0.01
    assert "PostgreSQL's statements per visitor:" in done.stdout
    assert "| `WITH w0 AS (" in done.stdout


def test_statements_is_refused_with_a_peer_before_anything_starts() -> None:
    done = _loadtest("--peer", "aiogram", "--statements")
    assert done.returncode == 2
    assert "--statements counts the product's database statements" in done.stderr
    assert "load test:" not in done.stdout
