"""Content on the web: items, their links and uploads (API and panel)."""

from __future__ import annotations

from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.content.service import ContentService
from sponsorbot.features.gate.bot_settings import BotSettingsService
from sponsorbot.features.stats.report import Report
from sponsorbot.web.api import routes_content as api_content
from sponsorbot.web.panel import routes_content
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.registry import Api, BotTab, WebPart

PART = WebPart(
    "content",
    api=(Api(api_content.router, "content"),),
    panel=(routes_content.router,),
    templates="content",
    bot_tabs=(BotTab("content", N_("Content"), 200),),
    services=(BotsService, ContentService, BotSettingsService, Report),
)
