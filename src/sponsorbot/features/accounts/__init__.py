"""Accounts: the team (panel users, sessions, invitations), the audit log, owner API tokens."""

from __future__ import annotations

from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.features.base import Feature, Parts, Shared


def setup(shared: Shared) -> Parts:
    """The API token service (the panel's account SQL is module functions on the pool)."""
    return Parts(services=[TokenService(shared.engine.pool)])


FEATURE = Feature("accounts", setup)
