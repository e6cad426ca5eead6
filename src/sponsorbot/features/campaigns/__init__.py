"""Sponsor campaigns: a channel in the gates of some bots, with links of its own, until a goal
or a date; joins credited once per person, kept joins, and a report for the sponsor."""

from __future__ import annotations

from sponsorbot.engine.routing import Router
from sponsorbot.features.base import Feature, Job, Parts, Shared
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.campaigns import credit
from sponsorbot.features.campaigns.service import CampaignService
from sponsorbot.features.campaigns.watch import CampaignWatch


def setup(shared: Shared) -> Parts:
    """The crediting listener, the service and the job that starts and finishes campaigns."""
    engine = shared.engine
    campaigns = CampaignService(
        engine.pool, engine.api, shared.required.get(BotsService), shared.config
    )
    router = Router("campaigns")
    router.chat_member()(credit.chat_member)
    every = shared.options.campaign_check_every_s
    return Parts(
        router=router,
        services=[campaigns],
        jobs=[Job("campaign_watch", every, CampaignWatch(campaigns).tick)],
    )


FEATURE = Feature("campaigns", setup, requires=("bots",))
