"""Bots on the web: adding, pausing, removing and re-driving them (API and panel)."""

from __future__ import annotations

from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.content.service import ContentService
from sponsorbot.features.gate.bot_settings import BotSettingsService
from sponsorbot.web.api import routes_bots as api_bots
from sponsorbot.web.api import routes_redrive
from sponsorbot.web.panel import routes_bots
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.registry import Api, NavEntry, WebPart

PART = WebPart(
    "bots",
    api=(Api(api_bots.router, "bots"), Api(routes_redrive.router, "operations")),
    panel=(routes_bots.router,),
    nav=(NavEntry("/bots", N_("Bots"), 200, section="/bots"),),
    services=(BotsService, BotSettingsService, ContentService),
)
