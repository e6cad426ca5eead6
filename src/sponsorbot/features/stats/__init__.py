"""Statistics: the event vocabulary, the monthly event partitions, the hourly roll-ups in the
workspace's zone, and every statistics query."""

from __future__ import annotations

import asyncpg

from sponsorbot.features.base import Feature, Job, Parts, Shared
from sponsorbot.features.stats.events import PREPARE_EVERY_S, prepare_months
from sponsorbot.features.stats.metrics import Metrics
from sponsorbot.features.stats.queries import Statistics
from sponsorbot.features.stats.report import Report
from sponsorbot.features.stats.rollup import drop_old, roll_up
from sponsorbot.features.stats.visitors import Visitors


def setup(shared: Shared) -> Parts:
    """The statistics queries, the job that keeps event partitions ahead of the clock, and
    the roll-up job (which then drops the event months past their keeping)."""
    months = shared.engine.settings.stats_keep_months

    async def rollup_and_trim(pool: asyncpg.Pool) -> None:
        await roll_up(pool)
        await drop_old(pool, months)

    return Parts(
        services=[
            Statistics(shared.engine.pool),
            Metrics(shared.engine.pool),
            Report(shared.engine.pool),
            Visitors(shared.engine.pool),
        ],
        jobs=[
            Job("event_months", PREPARE_EVERY_S, prepare_months),
            Job("stats_rollup", shared.options.stats_rollup_every_s, rollup_and_trim),
        ],
    )


FEATURE = Feature("stats", setup)
