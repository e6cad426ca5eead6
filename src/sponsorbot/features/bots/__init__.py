"""Bots as the owner sees them, and the webhook intake the web layer hands requests to."""

from __future__ import annotations

from sponsorbot.features.base import Feature, Parts, Shared


def setup(shared: Shared) -> Parts:
    """The owner-facing bot service."""
    return Parts(services=[shared.bots])


FEATURE = Feature("bots", setup)
