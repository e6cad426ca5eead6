"""Broadcasts on the web: writing, sending and following them (API and panel)."""

from __future__ import annotations

from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.broadcasts.service import BroadcastService
from sponsorbot.features.campaigns.service import CampaignService
from sponsorbot.web.api import routes_broadcasts as api_broadcasts
from sponsorbot.web.panel import routes_broadcasts
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.registry import Api, NavEntry, WebPart

PART = WebPart(
    "broadcasts",
    api=(Api(api_broadcasts.router, "broadcasts"),),
    panel=(routes_broadcasts.router,),
    nav=(NavEntry("/broadcasts", N_("Broadcasts"), 600, section="/broadcasts"),),
    services=(BotsService, BroadcastService, CampaignService),
)
