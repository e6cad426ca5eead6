"""The load test's options: what `sponsorbot loadtest` was asked for, read by the runner and
by the peer it may run instead of the product."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Options:
    """The load test's knobs (see `sponsorbot loadtest --help`)."""

    bots: int = 10
    rate: float = 200.0
    duration: float = 60.0
    warmup: float = 30.0
    rtt_ms: float = 40.0
    workers: int = 1
    drain: float = 30.0
    plot: Path | None = None
    worker_slots: int | None = None
    campaigns: bool = False
    joins: bool = False  # implied by campaigns
    broadcast: int = 0  # made-up recipients per bot, and a broadcast to them in the window
    peer: str | None = None  # run this peer (loadtest/peer.py) in place of the product
    statements: bool = False  # PostgreSQL's time per statement (loadtest/statements.py)
    # On a Citus cluster (`loadtest --citus N`, started by the command): the coordinator's URL
    # and each node's (name, data dir), for their CPU; empty for the embedded server.
    citus_url: str | None = None
    citus_nodes: tuple[tuple[str, str], ...] = ()
    # Product settings for this run (`--set NAME=VALUE`, a field of config.Settings): the
    # runner passes them to api and workers, which otherwise get none of the caller's.
    settings: tuple[tuple[str, str], ...] = ()
