"""Accounts: the team (panel users, sessions, invitations), the audit log, owner API tokens."""

from __future__ import annotations

import asyncpg

from sponsorbot.engine.janitor import sweep
from sponsorbot.features.accounts import retention
from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.features.base import Feature, Job, Parts, Shared

CLEANUP_EVERY_S = 600.0


def setup(shared: Shared) -> Parts:
    """The API token service (the panel's account SQL is module functions on the pool) and
    the clean-up of the team's records."""
    sweeps = retention.sweeps(shared.engine.settings.audit_keep_days * 86400)

    async def cleanup(pool: asyncpg.Pool) -> None:
        await sweep(pool, sweeps)

    return Parts(
        services=[TokenService(shared.engine.pool)],
        jobs=[Job("accounts_cleanup", CLEANUP_EVERY_S, cleanup)],
    )


FEATURE = Feature("accounts", setup)
