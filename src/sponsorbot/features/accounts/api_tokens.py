"""Owner API tokens: made by `sponsorbot token create`, the panel or the API, stored as sha256,
shown once; each remembers the member who made it and may expire."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import asyncpg

from sponsorbot.features.errors import Conflict, Invalid, NotFound

ROLES = ("owner", "admin", "editor", "analyst")
PREFIX = "sbt_"
MAX_LIFETIME = timedelta(days=3650)
COLUMNS = "id, name, role, created_at, last_used_at, revoked_at, created_by_user_id, expires_at"

INSERT = f"""
INSERT INTO api_tokens (name, role, token_hash, created_by_user_id, expires_at)
VALUES ($1, $2, $3, $4, now() + $5::interval)
RETURNING {COLUMNS}
"""
PAGE = f"SELECT {COLUMNS} FROM api_tokens ORDER BY id LIMIT $1 OFFSET $2"
COUNT = "SELECT count(*) FROM api_tokens"
ROLE_OF = "SELECT role FROM api_tokens WHERE id = $1"
REVOKE = "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1"
REVOKE_CREATED_BY = """
UPDATE api_tokens SET revoked_at = now() WHERE created_by_user_id = $1 AND revoked_at IS NULL
"""
# A token works while it is neither revoked nor expired and its maker is still a member; it
# never acts above the maker's current role (a demoted admin's tokens act as what they are now).
AUTHENTICATE = """
UPDATE api_tokens t SET last_used_at = now()
WHERE t.token_hash = $1 AND t.revoked_at IS NULL
  AND (t.expires_at IS NULL OR t.expires_at > now())
  AND NOT EXISTS (
      SELECT FROM users u WHERE u.id = t.created_by_user_id AND u.disabled_at IS NOT NULL)
RETURNING t.id, t.name, t.role, t.created_by_user_id,
          (SELECT u.role FROM users u WHERE u.id = t.created_by_user_id) AS maker_role
"""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling the API: the token, its role and the member who made it (None: CLI)."""

    token_id: int
    name: str
    role: str
    user_id: int | None = None


def token_hash(token: str) -> bytes:
    """What is stored of a token."""
    return hashlib.sha256(token.encode()).digest()


def outranks_or_equals(role: str, other: str) -> bool:
    """Whether `role` is `other` or above it (owner > admin > editor > analyst)."""
    return ROLES.index(role) <= ROLES.index(other)


def lower_role(role: str, other: str | None) -> str:
    """The lower of two roles (`other` None: `role`)."""
    if other is None or other not in ROLES:
        return role
    return role if ROLES.index(role) >= ROLES.index(other) else other


class TokenService:
    """Create, list, revoke and check API tokens."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def create(
        self,
        name: str,
        role: str,
        *,
        granted_by: str | None = None,
        created_by: int | None = None,
        expires_in: timedelta | None = None,
    ) -> tuple[dict[str, Any], str]:
        """A new token: its row and the token itself (the only time it is known).

        `granted_by` is the role of whoever asks: nobody hands out a role above their own.
        `created_by` is the panel member behind the request (None from the CLI); `expires_in`
        how long the token works (None: until revoked).
        """
        name = name.strip()
        if not name or len(name) > 100 or "\x00" in name:
            raise Invalid("a token's name is 1 to 100 characters", code="token_name")
        if role not in ROLES:
            raise Invalid(f"role must be one of {', '.join(ROLES)}", code="unknown_role")
        if granted_by is not None and not outranks_or_equals(granted_by, role):
            raise Conflict(
                f"a {granted_by} token cannot create a {role} token", code="role_too_high"
            )
        if expires_in is not None and not timedelta(0) < expires_in <= MAX_LIFETIME:
            raise Invalid(
                f"a token expires after 1 to {MAX_LIFETIME.days} days", code="token_expiry"
            )
        token = PREFIX + secrets.token_urlsafe(32)
        row = await self.pool.fetchrow(
            INSERT, name, role, token_hash(token), created_by, expires_in
        )
        return dict(row), token

    async def all(self, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
        """A page of tokens (never the tokens themselves), oldest first."""
        rows = await self.pool.fetch(PAGE, limit, offset)
        total = await self.pool.fetchval(COUNT)
        return [dict(r) for r in rows], int(total)

    async def revoke(self, token_id: int, *, revoked_by: str | None = None) -> None:
        """Revoke a token: it stops working at once.

        `revoked_by` is the role of whoever asks (None: the CLI or the system): nobody revokes
        a token whose role is above their own, so an admin cannot cut off the owner.
        """
        role = await self.pool.fetchval(ROLE_OF, token_id)
        if role is None:
            raise NotFound(f"no token with id {token_id}")
        if revoked_by is not None and not outranks_or_equals(revoked_by, role):
            raise Conflict(f"a {revoked_by} cannot revoke a {role} token", code="revoke_above_rank")
        await self.pool.execute(REVOKE, token_id)

    async def revoke_created_by(self, user_id: int) -> int:
        """Revoke every token the member made (when they leave the team); how many."""
        done = await self.pool.execute(REVOKE_CREATED_BY, user_id)
        return int(done.split()[-1])

    async def authenticate(self, token: str) -> Principal | None:
        """The caller a presented token stands for, or None (unknown, revoked, expired, or
        made by a member who has since been removed)."""
        row = await self.pool.fetchrow(AUTHENTICATE, token_hash(token))
        if row is None:
            return None
        role = lower_role(row["role"], row["maker_role"])
        return Principal(row["id"], row["name"], role, row["created_by_user_id"])
