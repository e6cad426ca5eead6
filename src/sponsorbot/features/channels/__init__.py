"""Gate channels: added by any reference form, checked live, re-checked periodically."""

from __future__ import annotations

from sponsorbot.features.base import Feature, Job, Parts, Shared
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.channels.service import ChannelService


def setup(shared: Shared) -> Parts:
    """The channel service and its periodic re-check of the bot's rights."""
    engine = shared.engine
    bots = shared.required.get(BotsService)
    channels = ChannelService(engine.pool, engine.api, bots, shared.config)
    every = shared.options.channel_check_every_s
    return Parts(services=[channels], jobs=[Job("channel_watch", every, channels.recheck_all)])


FEATURE = Feature("channels", setup, requires=("bots",))
