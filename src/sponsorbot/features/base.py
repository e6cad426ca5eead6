"""What a feature is: one registration object the feature list hands to the engine and the web.

Each feature package exposes `FEATURE = Feature(name, setup, requires=(...))`. `setup(shared)`
runs once per process, after the setups of the features it requires, and returns the feature's
parts: its update router, periodic jobs, services (found by class, `Features.get`), and the
event kinds it records. A feature reaches the services of the features it requires through
`shared.required`, so each service exists once per process. Adding a feature is a new package
and one line in `sponsorbot.features.all.FEATURES`; the order between packages is written in
`pyproject.toml` (docs/adr/0023-feature-graph.md).

This module is the bottom of the feature graph: it names no feature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sponsorbot.engine.core import Engine
from sponsorbot.engine.routing import Router
from sponsorbot.engine.scheduler import JobFn
from sponsorbot.features.botconfig import ConfigCache

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Options:
    """Timings the tests shorten."""

    config_ttl_s: float = 5.0
    member_ttl_s: float = 300.0
    channel_check_every_s: float = 600.0
    campaign_check_every_s: float = 1.0
    broadcast_every_s: float = 1.0
    shop_check_every_s: float = 3.0
    # How often the shop looks at its addresses for transfers nobody sent a hash for.
    shop_watch_every_s: float = 20.0
    stats_rollup_every_s: float = 60.0
    # The team's alerts: how often the sources are read and due alerts sent, how long repeats
    # (dead updates of one bot) gather before they go, and how often the digest is looked at.
    alerts_every_s: float = 2.0
    alerts_gather_s: float = 30.0
    digest_every_s: float = 60.0


@dataclass(frozen=True, slots=True)
class Shared:
    """What a feature's setup is given: the engine, the per-bot configuration cache, the
    timings, and the services of the features it requires (set up already)."""

    engine: Engine
    config: ConfigCache
    options: Options
    # Every installed feature's `redrive_holds`, for the bots service's re-drive.
    redrive_holds: tuple[str, ...] = ()
    required: Features = field(default_factory=lambda: Features({}))


@dataclass(frozen=True, slots=True)
class Job:
    """A periodic job: run `fn(pool)` about every `every_s` seconds, once in the cluster."""

    name: str
    every_s: float
    fn: JobFn


@dataclass(slots=True)
class Parts:
    """What one feature brings."""

    router: Router | None = None
    # Included after every feature's router: handlers for whatever nobody else took.
    fallback: Router | None = None
    jobs: list[Job] = field(default_factory=list)
    services: list[object] = field(default_factory=list)
    event_kinds: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Feature:
    """A feature's name, how to set it up in a process, the features whose services its setup
    uses, and what a re-drive must leave alone."""

    name: str
    setup: Callable[[Shared], Parts]
    # Set up before this one; their services are in `shared.required`.
    requires: tuple[str, ...] = ()
    # Statements answering (bot_id, outbox_id) of given-up messages a re-drive leaves failed
    # (engine.redrive's holds). Known without a setup: the command re-drives with none done.
    redrive_holds: tuple[str, ...] = ()


def setup_order(features: Sequence[Feature]) -> list[Feature]:
    """The features in an order where each comes after every feature it requires, and in list
    order where that leaves a choice. ValueError when two share a name, or a requirement is
    unknown or circular."""
    by_name = {feature.name: feature for feature in features}
    if len(by_name) != len(features):
        raise ValueError("two features share a name")
    for feature in features:
        for name in feature.requires:
            if name not in by_name:
                raise ValueError(f"{feature.name} requires {name}, which is not installed")
    ordered: list[Feature] = []
    done: set[str] = set()
    waiting = list(features)
    while waiting:
        ready = next((f for f in waiting if done.issuperset(f.requires)), None)
        if ready is None:
            circle = " -> ".join(_circle(by_name, [f.name for f in waiting]))
            raise ValueError(f"features require each other in a circle: {circle}")
        waiting.remove(ready)
        done.add(ready.name)
        ordered.append(ready)
    return ordered


def _circle(by_name: dict[str, Feature], waiting: list[str]) -> list[str]:
    """A circle among features none of which could be set up: each requires another of them,
    so following those requirements comes back to a name already on the path."""
    path = [waiting[0]]
    while True:
        name = next(r for r in by_name[path[-1]].requires if r in waiting)
        if name in path:
            return [*path[path.index(name) :], name]
        path.append(name)


class Features:
    """The features of one process, set up: their services by class."""

    def __init__(self, parts: dict[str, Parts]) -> None:
        self.parts = parts
        self._services: dict[type, Any] = {}
        for part in parts.values():
            for service in part.services:
                if type(service) in self._services:
                    raise ValueError(f"two features provide {type(service).__name__}")
                self._services[type(service)] = service

    def get(self, cls: type[T]) -> T:
        """The one service of this class."""
        service = self._services.get(cls)
        if service is None:
            # In a setup, `shared.required` holds only the features named in `requires`.
            raise LookupError(f"no feature provides {cls.__name__} here")
        return service  # type: ignore[no-any-return]

    def event_kinds(self) -> list[str]:
        """Every event kind the features record."""
        return sorted({k for part in self.parts.values() for k in part.event_kinds})
