"""The team's alerts on the web: the Notifications page (linking a member's Telegram, what
they are told)."""

from __future__ import annotations

from sponsorbot.features.alerts.links import TeamLinks
from sponsorbot.features.bots.service import BotsService
from sponsorbot.web.panel import routes_alerts
from sponsorbot.web.registry import WebPart

PART = WebPart(
    "alerts",
    panel=(routes_alerts.router,),
    templates="alerts",
    services=(TeamLinks, BotsService),
)
