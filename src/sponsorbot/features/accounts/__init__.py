"""Accounts: the team (panel users, sessions, invitations), the audit log, owner API tokens."""

from __future__ import annotations

import asyncpg

from sponsorbot.engine.janitor import sweep
from sponsorbot.features.accounts import retention, rotation
from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.features.accounts.security import PanelKeys
from sponsorbot.features.base import Feature, Job, Parts, Shared

CLEANUP_EVERY_S = 600.0


def setup(shared: Shared) -> Parts:
    """The API token service (the panel's account SQL is module functions on the pool), the
    clean-up of the team's records, and the re-sealing of authenticator secrets."""
    settings = shared.engine.settings
    sweeps = retention.sweeps(settings.audit_keep_days * 86400)
    keys = PanelKeys(settings.secret())

    async def cleanup(pool: asyncpg.Pool) -> None:
        await sweep(pool, sweeps)

    jobs = [Job("accounts_cleanup", CLEANUP_EVERY_S, cleanup)]
    if keys.rotating:
        # A rotation (SPONSORBOT_SECRET_KEY="new,old"): jobs run first as the worker starts,
        # so authenticator secrets move to the new key at start, as the engine moves bot
        # tokens; then again now and then while the rotation lasts.

        async def reseal(pool: asyncpg.Pool) -> None:
            await rotation.reseal_and_report(pool, keys)

        jobs.append(Job("accounts_reseal", rotation.RESEAL_EVERY_S, reseal))
    return Parts(services=[TokenService(shared.engine.pool)], jobs=jobs)


FEATURE = Feature("accounts", setup)
