"""Campaigns on the web: the campaign pages and API, and the sponsor's report page."""

from __future__ import annotations

from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.campaigns.service import CampaignService
from sponsorbot.web.api import routes_campaigns as api_campaigns
from sponsorbot.web.panel import routes_campaigns, routes_report
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.registry import Api, NavEntry, WebPart

PART = WebPart(
    "campaigns",
    api=(Api(api_campaigns.router, "campaigns"),),
    panel=(routes_campaigns.router, routes_report.router),
    nav=(NavEntry("/campaigns", N_("Campaigns"), 500, section="/campaigns"),),
    services=(BotsService, CampaignService),
)
