"""Broadcasts: one post to a chosen part of a bot's audience, sent in the background at what
the bot's limit leaves free after the replies, each person at most once."""

from __future__ import annotations

from sponsorbot.features.base import Feature, Job, Parts, Shared
from sponsorbot.features.broadcasts.producer import Producer
from sponsorbot.features.broadcasts.service import BroadcastService


def setup(shared: Shared) -> Parts:
    """The service and the producer job."""
    engine = shared.engine
    broadcasts = BroadcastService(
        engine.pool, engine.api, shared.bots, shared.config, engine.notifier
    )
    producer = Producer(broadcasts, engine.settings.send_per_bot_per_s)
    every = shared.options.broadcast_every_s
    return Parts(services=[broadcasts], jobs=[Job("broadcasts", every, producer.tick)])


FEATURE = Feature("broadcasts", setup)
