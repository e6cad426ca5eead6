"""Who may do what: one table for the panel, the owner API and the team's Telegram buttons.

A permission names a kind of action; each panel route and each API route depends on exactly
one of them, so a role can do the same things whichever door it comes through.
"""

from __future__ import annotations

from sponsorbot.features.accounts.api_tokens import ROLES

ALL = frozenset(ROLES)
EDITORS = frozenset({"owner", "admin", "editor"})
ADMINS = frozenset({"owner", "admin"})
OWNER = frozenset({"owner"})

PERMISSIONS: dict[str, frozenset[str]] = {
    "view": ALL,  # dashboard, lists, statistics: read-only is enough
    "account": ALL,  # one's own language, two-step sign-in, sessions
    "content": EDITORS,  # content, channels, the gate, campaigns, broadcasts
    "bots": ADMINS,  # add, pause, resume, mode, storage, texts, uploaders, the shop but its money
    "settings": ADMINS,  # workspace settings and API tokens
    "audit": ADMINS,
    "bots.remove": OWNER,
    # Where a shop's money goes (its payout address, network and coins, and the texts that tell
    # advertisers where and how much to pay): an admin, or a leaked admin token, must not be
    # able to redirect payments (docs/adr/0009-payout-owner.md).
    "shop.money": OWNER,
    # A paid broadcast (allow_paid_broadcast) spends the bot's Telegram Stars, 0.1 a message
    # above the free rate: a hundred thousand people cost about 10,000 (ADR 0007).
    "broadcasts.paid": ADMINS,
    "team": OWNER,
}


def allowed(permission: str, role: str) -> bool:
    """Whether `role` holds `permission` (an unknown permission is nobody's)."""
    return role in PERMISSIONS.get(permission, frozenset())
