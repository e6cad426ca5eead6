"""The team's web side: signing in, the account, the team, the audit log, API tokens and the
workspace settings."""

from __future__ import annotations

from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.web.api import routes_tokens as api_tokens
from sponsorbot.web.panel import routes_auth, routes_team, routes_tokens, routes_workspace
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.registry import Api, NavEntry, WebPart

PART = WebPart(
    "accounts",
    api=(Api(api_tokens.router, "API tokens"),),
    panel=(routes_auth.router, routes_team.router, routes_tokens.router, routes_workspace.router),
    templates="accounts",
    nav=(
        NavEntry("/team", N_("Team"), 800, permission="team", section="/team"),
        NavEntry("/audit", N_("Audit log"), 900, permission="audit", section="/audit"),
        NavEntry("/tokens", N_("API tokens"), 1000, permission="settings", section="/tokens"),
        NavEntry("/settings", N_("Settings"), 1100, permission="settings", section="/settings"),
    ),
    # The API's token check (web/api/auth.py) asks for it on every call.
    services=(TokenService,),
)
