"""Figures on the web: the dashboard, the statistics page and its CSV, visitors (API and
panel)."""

from __future__ import annotations

from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.shop.service import ShopService
from sponsorbot.features.stats.queries import Statistics
from sponsorbot.features.stats.report import Report
from sponsorbot.features.stats.visitors import Visitors
from sponsorbot.web.api import routes_stats as api_stats
from sponsorbot.web.api import routes_visitors as api_visitors
from sponsorbot.web.panel import routes_dashboard, routes_stats, routes_visitors
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.registry import Api, NavEntry, WebPart

PART = WebPart(
    "stats",
    api=(Api(api_visitors.router, "visitors"), Api(api_stats.router, "statistics")),
    panel=(routes_dashboard.router, routes_stats.router, routes_visitors.router),
    templates="stats",
    nav=(
        NavEntry("/", N_("Dashboard"), 100),
        NavEntry("/stats", N_("Statistics"), 300, section="/stats"),
        NavEntry("/visitors", N_("Visitors"), 400, section="/visitors"),
    ),
    # The dashboard tells who handles orders what waits for them in the shop.
    services=(BotsService, Statistics, Report, Visitors, ShopService),
)
