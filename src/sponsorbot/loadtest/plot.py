"""`--plot`: answer latency percentiles and the rates over the measured window, as a PNG."""

from __future__ import annotations

import collections
from pathlib import Path

from sponsorbot.loadtest.report import percentile

BUCKETS = 40  # latency percentiles over about this many slices of the window


class PlotUnavailable(Exception):
    """matplotlib is not installed (it is the `plot` extra)."""


def draw(
    path: Path,
    title: str,
    start: float,
    points: list[tuple[float, float]],
    opened: list[float],
) -> None:
    """Latency p50/p95/p99 per slice of arrival time above; offered and answered per second below.

    `points` are (arrival time, latency) of answered visitors, `opened` the times links were
    opened; all in seconds since the epoch, `start` the measured window's start.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotUnavailable("--plot needs matplotlib: pip install 'sponsorbot[plot]'") from None
    span = max([t - start for t in opened] + [1.0])
    width = max(1.0, span / BUCKETS)
    by_bucket: dict[int, list[float]] = collections.defaultdict(list)
    for arrived, latency in points:
        by_bucket[int((arrived - start) // width)].append(latency)
    buckets = sorted(by_bucket)
    xs = [b * width + width / 2 for b in buckets]
    offered = collections.Counter(int(t - start) for t in opened)
    answered = collections.Counter(int(a + lat - start) for a, lat in points)
    seconds = range(0, max([*offered, *answered, 0]) + 1)

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for q, style in ((50, "o-"), (95, "s--"), (99, "^:")):
        top.plot(
            xs, [percentile(by_bucket[b], q) for b in buckets], style, markersize=3, label=f"p{q}"
        )
    top.set_ylim(bottom=0)
    top.set_ylabel("answer latency (s)")
    top.set_title(title)
    top.legend()
    top.grid(alpha=0.3)
    bottom.plot(list(seconds), [offered[s] for s in seconds], label="offered")
    bottom.plot(list(seconds), [answered[s] for s in seconds], label="answered")
    bottom.set_xlabel("seconds into the measured window")
    bottom.set_ylabel("visitors per second")
    bottom.set_ylim(bottom=0)
    bottom.legend()
    bottom.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
