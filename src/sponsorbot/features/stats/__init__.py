"""Statistics: the event vocabulary, the monthly event partitions, and every statistics query."""

from __future__ import annotations

from sponsorbot.features.base import Feature, Job, Parts, Shared
from sponsorbot.features.stats.events import PREPARE_EVERY_S, prepare_months
from sponsorbot.features.stats.queries import Statistics


def setup(shared: Shared) -> Parts:
    """The statistics queries and the job that keeps event partitions ahead of the clock."""
    return Parts(
        services=[Statistics(shared.engine.pool)],
        jobs=[Job("event_months", PREPARE_EVERY_S, prepare_months)],
    )


FEATURE = Feature("stats", setup)
