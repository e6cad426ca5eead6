"""Gate channels on the web: adding and checking them, the gate's order (API and panel)."""

from __future__ import annotations

from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.campaigns.service import CampaignService
from sponsorbot.features.channels.service import ChannelService
from sponsorbot.features.gate.bot_settings import BotSettingsService
from sponsorbot.web.api import routes_channels
from sponsorbot.web.panel import routes_gate
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.registry import Api, BotTab, WebPart

PART = WebPart(
    "channels",
    api=(Api(routes_channels.router, "channels and gate"),),
    panel=(routes_gate.router,),
    templates="channels",
    bot_tabs=(BotTab("channels", N_("Channels and gate"), 100),),
    # The channels page names the campaign behind each sponsored channel.
    services=(BotsService, ChannelService, BotSettingsService, CampaignService),
)
