"""The feature services the web layer uses, typed, from the features the runtime set up."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Request

from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.features.alerts.links import TeamLinks
from sponsorbot.features.base import Features
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.broadcasts.service import BroadcastService
from sponsorbot.features.campaigns.service import CampaignService
from sponsorbot.features.channels.service import ChannelService
from sponsorbot.features.content.service import ContentService
from sponsorbot.features.gate.bot_settings import BotSettingsService
from sponsorbot.features.shop.service import ShopService
from sponsorbot.features.stats.metrics import Metrics
from sponsorbot.features.stats.queries import Statistics
from sponsorbot.features.stats.report import Report
from sponsorbot.features.stats.visitors import Visitors


@dataclass(frozen=True, slots=True)
class Services:
    """One typed handle per service the pages and the API call."""

    bots: BotsService
    channels: ChannelService
    contents: ContentService
    bot_settings: BotSettingsService
    tokens: TokenService
    statistics: Statistics
    campaigns: CampaignService
    broadcasts: BroadcastService
    shop: ShopService
    report: Report
    visitors: Visitors
    metrics: Metrics
    team: TeamLinks

    @classmethod
    def of(cls, features: Features) -> Services:
        """Look each service up once, when the app is made."""
        return cls(
            features.get(BotsService),
            features.get(ChannelService),
            features.get(ContentService),
            features.get(BotSettingsService),
            features.get(TokenService),
            features.get(Statistics),
            features.get(CampaignService),
            features.get(BroadcastService),
            features.get(ShopService),
            features.get(Report),
            features.get(Visitors),
            features.get(Metrics),
            features.get(TeamLinks),
        )


def services_of(request: Request) -> Services:
    """The services of the application serving this request."""
    services: Services = request.app.state.services
    return services


def report_url(request: Request, campaign: dict[str, Any]) -> str | None:
    """The address of a campaign's sponsor report (None while it has no link)."""
    token = campaign.get("report_token")
    return f"{str(request.base_url).rstrip('/')}/r/{token}" if token else None
