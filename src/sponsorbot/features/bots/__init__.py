"""Bots as the owner sees them, and the webhook intake the web layer hands requests to.

The bottom feature: every feature whose services act as a bot requires it, for its one
`BotsService`."""

from __future__ import annotations

from sponsorbot.features.base import Feature, Parts, Shared
from sponsorbot.features.bots.service import BotsService


def setup(shared: Shared) -> Parts:
    """The owner-facing bot service (its re-drive leaves what every feature holds)."""
    engine = shared.engine
    bots = BotsService(engine.bots, engine.api, engine.intake, shared.redrive_holds)
    return Parts(services=[bots])


FEATURE = Feature("bots", setup)
