"""The ad shop on the web: its settings and products per bot, orders, payments and transfers
(API and panel)."""

from __future__ import annotations

from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.shop.service import ShopService
from sponsorbot.web.api import routes_shop as api_shop
from sponsorbot.web.api import routes_transfers
from sponsorbot.web.panel import routes_shop, routes_shop_orders, routes_shop_transfers
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.registry import Api, BotTab, NavEntry, WebPart

PART = WebPart(
    "shop",
    api=(Api(api_shop.router, "ad shop"), Api(routes_transfers.router, "ad shop")),
    panel=(routes_shop.router, routes_shop_orders.router, routes_shop_transfers.router),
    nav=(NavEntry("/shop/orders", N_("Shop"), 700, section="/shop"),),
    bot_tabs=(BotTab("shop", N_("Shop"), 300, deep=True),),
    services=(BotsService, ShopService),
)
