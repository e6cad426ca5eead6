"""The web parts the app serves: one line per feature with a web side.

The owner API's routers and the panel's are mounted in this order; the main menu is ordered by
its entries' own `order`, the tabs of a bot's pages by theirs. Leaving a part out takes its
routes, pages, menu entry, tabs and templates off the web (its feature still runs in the bot).
"""

from __future__ import annotations

from sponsorbot.web.parts import (
    accounts,
    alerts,
    bots,
    broadcasts,
    campaigns,
    channels,
    content,
    gate,
    shop,
    stats,
)
from sponsorbot.web.registry import WebPart

WEB_PARTS: tuple[WebPart, ...] = (
    accounts.PART,
    alerts.PART,
    bots.PART,
    stats.PART,
    channels.PART,
    content.PART,
    gate.PART,
    campaigns.PART,
    broadcasts.PART,
    shop.PART,
)
