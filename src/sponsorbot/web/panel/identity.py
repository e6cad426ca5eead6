"""Asking a signed-in member to prove again who they are before a change that matters: turning
two-step sign-in off, new recovery codes, a new password, where a shop's money goes."""

from __future__ import annotations

from fastapi import Request

from sponsorbot.features.accounts import users as accounts
from sponsorbot.features.accounts.security import check_password_async
from sponsorbot.web.panel.routes_auth import totp_passes
from sponsorbot.web.panel.web import Viewer, address_of, panel_of


async def proves_identity(
    request: Request, viewer: Viewer, typed: str, code_will_do: bool = True
) -> bool:
    """True when `typed` is the member's password or (`code_will_do`, two-step on) a current
    code from their app. Wrong answers count as failed passwords from this address (and are refused
    past the limit), so a left-open session cannot be used to guess the password."""
    panel = panel_of(request)
    policy = panel.config.lockout
    user = viewer.user
    address = address_of(request)
    now = panel.config.clock()
    seen = await accounts.failures(panel.pool, user.email, address, now, policy)
    if seen.pair >= policy.pair_limit or not typed:
        return False
    stored = await accounts.password_hash(panel.pool, user.id)
    if await check_password_async(stored, typed):
        return True
    if code_will_do and user.two_step and await totp_passes(panel, user.id, typed):
        return True
    await accounts.add_failure(panel.pool, user.email, address, now, policy)
    return False
