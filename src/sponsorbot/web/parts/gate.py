"""A bot's gate settings on the web: its texts, uploaders, mode, storage chat and token."""

from __future__ import annotations

from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.gate.bot_settings import BotSettingsService
from sponsorbot.features.shop.service import ShopService
from sponsorbot.web.api import routes_bot_texts
from sponsorbot.web.panel import routes_bot_settings
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.registry import Api, BotTab, WebPart

PART = WebPart(
    "gate",
    api=(Api(routes_bot_texts.router, "texts and uploaders"),),
    panel=(routes_bot_settings.router,),
    templates="gate",
    bot_tabs=(BotTab("settings", N_("Bot settings"), 400, permission="bots"),),
    # The texts include the shop's payment texts, whose changes the shop records.
    services=(BotsService, BotSettingsService, ShopService),
)
