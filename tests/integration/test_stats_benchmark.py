"""benchmarks/stats.py at a tiny size: it still fills, rolls up and times every page."""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path
from types import ModuleType

import asyncpg

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "stats.py"


def load_benchmark() -> ModuleType:
    """The script as a module (benchmarks/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("stats_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


async def test_the_statistics_benchmark_runs_and_every_page_answers(
    pg_uri: str, tmp_path: Path
) -> None:
    bench = load_benchmark()
    name = f"stats_bench_{uuid.uuid4().hex[:12]}"
    out = tmp_path / "stats.json"
    argv = ["--events", "20000", "--bots", "2", "--days", "30", "--repeat", "2"]
    argv += ["--database-url", pg_uri, "--db-name", name, "--json", str(out), "--quiet"]
    report = await bench.bench(argv)

    assert out.read_text().strip().startswith("{")
    assert 15_000 <= report["events"] <= 25_000
    assert report["rows"]["events"] == report["events"]
    assert report["rows"]["people"] > 0 and report["rows"]["send_stats"] > 0
    assert report["rows"]["campaign_members"] > 0
    rollup = report["rollup"]
    assert rollup["hours"] >= 29 * 24 and rollup["ms_per_hour"] > 0
    assert {"stats_hourly", "stats_daily", "stats_visits"} <= set(rollup["tables"])
    assert all(t["rows"] > 0 for t in rollup["tables"].values())
    pages = report["pages"]
    expected = {"dashboard", "content_page_bot", "stats_csv_content_30d_all"}
    for span in ("today", "7d", "30d"):
        for who in ("all", "bot"):
            expected |= {f"stats_{span}_{who}", f"api_stats_{span}_{who}"}
    assert expected <= set(pages)
    for page, timed in pages.items():
        assert timed["status"] == 200, page
        assert 0 < timed["p50_ms"] <= timed["p95_ms"] <= timed["max_ms"], page
    assert report["not_200"] == []
    assert report["target_p95_ms"] == 150
    assert set(report["over_target"]) <= set(pages)
    # The benchmark's database is gone again.
    admin = await asyncpg.connect(pg_uri)
    try:
        left = await admin.fetchval("SELECT count(*) FROM pg_database WHERE datname = $1", name)
    finally:
        await admin.close()
    assert left == 0
