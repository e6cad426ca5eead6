"""Broadcasts: one post to a chosen part of a bot's audience, sent in the background at what
the bot's limit leaves free after the replies, each person at most once."""

from __future__ import annotations

import asyncpg

from sponsorbot.engine.janitor import Sweep, sweep
from sponsorbot.features.base import Feature, Job, Parts, Shared
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.broadcasts.producer import Producer
from sponsorbot.features.broadcasts.queries import CANCELLED_MESSAGES, DELETE_RECIPIENTS
from sponsorbot.features.broadcasts.service import BroadcastService

CLEANUP_EVERY_S = 600.0


async def cleanup(pool: asyncpg.Pool) -> None:
    """Drop the recipient lists of broadcasts finished over a month ago."""
    await sweep(pool, [Sweep("broadcast_recipients", DELETE_RECIPIENTS)])


def setup(shared: Shared) -> Parts:
    """The service, the producer job and the clean-up."""
    engine = shared.engine
    bots = shared.required.get(BotsService)
    broadcasts = BroadcastService(engine.pool, engine.api, bots, shared.config, engine.notifier)
    producer = Producer(broadcasts, engine.settings.send_per_bot_per_s)
    every = shared.options.broadcast_every_s
    jobs = [
        Job("broadcasts", every, producer.tick),
        Job("broadcasts_cleanup", CLEANUP_EVERY_S, cleanup),
    ]
    return Parts(services=[broadcasts], jobs=jobs)


FEATURE = Feature("broadcasts", setup, requires=("bots",), redrive_holds=(CANCELLED_MESSAGES,))
