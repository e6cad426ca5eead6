"""What a feature is: one registration object the feature list hands to the engine and the web.

Each feature package exposes `FEATURE = Feature(name, setup)`. `setup(shared)` runs once per
process and returns the feature's parts: its update router, periodic jobs, services (found by
class, `Features.get`), and the event kinds it records. Adding a feature is a new package and
one line in `sponsorbot.features.all.FEATURES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from sponsorbot.engine.core import Engine
from sponsorbot.engine.routing import Router
from sponsorbot.engine.scheduler import JobFn
from sponsorbot.features.botconfig import ConfigCache

if TYPE_CHECKING:  # both packages register a Feature of their own
    from sponsorbot.features.bots.service import BotsService
    from sponsorbot.features.gate.membership import MembershipCache

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
    """What the features of one process share: the engine and the per-bot caches."""

    engine: Engine
    bots: BotsService
    config: ConfigCache
    members: MembershipCache
    options: Options


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
    """A feature's name, how to set it up in a process, and what a re-drive must leave alone."""

    name: str
    setup: Callable[[Shared], Parts]
    # Statements answering (bot_id, outbox_id) of given-up messages a re-drive leaves failed
    # (engine.redrive's holds). Known without a setup: the command re-drives with none done.
    redrive_holds: tuple[str, ...] = ()


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
            raise LookupError(f"no feature provides {cls.__name__}")
        return service  # type: ignore[no-any-return]

    def event_kinds(self) -> list[str]:
        """Every event kind the features record."""
        return sorted({k for part in self.parts.values() for k in part.event_kinds})
