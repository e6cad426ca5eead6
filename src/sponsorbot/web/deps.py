"""The feature services the web layer uses, typed, from the features the runtime set up and
the web parts installed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar, cast

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
from sponsorbot.features.stats.queries import Statistics
from sponsorbot.features.stats.report import Report
from sponsorbot.features.stats.visitors import Visitors
from sponsorbot.web.registry import WebPart

T = TypeVar("T")


class Services:
    """The feature services the installed web parts use, one instance each, found by class.

    Built from the parts' `services` when the app is made: a service no feature provides
    stops the app there, not on a page. A part's routes ask by class (`get(NotesService)`);
    the named properties below are shorthands the route modules had before.
    """

    def __init__(self, found: Mapping[type, object], parts: Iterable[str] = ()) -> None:
        self._found = dict(found)
        self.parts = frozenset(parts)

    @classmethod
    def of(cls, features: Features, parts: Sequence[WebPart] | None = None) -> Services:
        """Look each service the parts use up once, when the app is made. Without parts (tests
        and tools that call the services with no app), every service the features provide."""
        if parts is None:
            every = {type(s): s for part in features.parts.values() for s in part.services}
            return cls(every)
        found: dict[type, object] = {
            kind: features.get(kind) for part in parts for kind in part.services
        }
        return cls(found, (part.name for part in parts))

    def serves(self, part: str) -> bool:
        """Whether the web part of that name is installed (its pages are there to link to)."""
        return part in self.parts

    def get(self, kind: type[T]) -> T:
        """The service of this class (LookupError when no installed web part uses one)."""
        service = self._found.get(kind)
        if service is None:
            raise LookupError(f"no installed web part uses {kind.__name__}")
        return cast(T, service)

    @property
    def bots(self) -> BotsService:
        """The bots, as the owner sees them."""
        return self.get(BotsService)

    @property
    def channels(self) -> ChannelService:
        """Gate channels."""
        return self.get(ChannelService)

    @property
    def contents(self) -> ContentService:
        """Content items and their links."""
        return self.get(ContentService)

    @property
    def bot_settings(self) -> BotSettingsService:
        """A bot's gate texts, uploaders and settings."""
        return self.get(BotSettingsService)

    @property
    def tokens(self) -> TokenService:
        """API tokens."""
        return self.get(TokenService)

    @property
    def statistics(self) -> Statistics:
        """Health and recent sending figures."""
        return self.get(Statistics)

    @property
    def campaigns(self) -> CampaignService:
        """Campaigns."""
        return self.get(CampaignService)

    @property
    def broadcasts(self) -> BroadcastService:
        """Broadcasts."""
        return self.get(BroadcastService)

    @property
    def shop(self) -> ShopService:
        """The ad shop."""
        return self.get(ShopService)

    @property
    def report(self) -> Report:
        """Event figures by bot, hour and day."""
        return self.get(Report)

    @property
    def visitors(self) -> Visitors:
        """Visitors and their timelines."""
        return self.get(Visitors)

    @property
    def team(self) -> TeamLinks:
        """The team's Telegram links and alert preferences."""
        return self.get(TeamLinks)


def services_of(request: Request) -> Services:
    """The services of the application serving this request."""
    services: Services = request.app.state.services
    return services


def report_url(request: Request, token: str | None) -> str | None:
    """The address of a campaign's sponsor report, by its token (None while it has no link)."""
    return f"{str(request.base_url).rstrip('/')}/r/{token}" if token else None
