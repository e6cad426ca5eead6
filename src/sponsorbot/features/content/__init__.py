"""Content: items and their links, made in the panel, the API, or by uploaders in Telegram."""

from __future__ import annotations

from sponsorbot.features.base import Feature, Parts, Shared
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.content.service import ContentService
from sponsorbot.features.content.uploads import Uploads


def setup(shared: Shared) -> Parts:
    """The content service and the uploader's handlers."""
    engine = shared.engine
    bots = shared.required.get(BotsService)
    return Parts(
        router=Uploads(shared.config).router(),
        services=[ContentService(engine.pool, engine.api, bots, shared.config)],
    )


FEATURE = Feature("content", setup, requires=("bots",))
