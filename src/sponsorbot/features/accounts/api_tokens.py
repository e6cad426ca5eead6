"""Owner API tokens: made by `sponsorbot token create` or the API, stored as sha256, shown once."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

import asyncpg

from sponsorbot.features.errors import Conflict, Invalid, NotFound

ROLES = ("owner", "admin", "editor", "analyst")
PREFIX = "sbt_"
COLUMNS = "id, name, role, created_at, last_used_at, revoked_at"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling the API."""

    token_id: int
    name: str
    role: str


def token_hash(token: str) -> bytes:
    """What is stored of a token."""
    return hashlib.sha256(token.encode()).digest()


class TokenService:
    """Create, list, revoke and check API tokens."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def create(
        self, name: str, role: str, *, granted_by: str | None = None
    ) -> tuple[dict[str, Any], str]:
        """A new token: its row and the token itself (the only time it is known).

        `granted_by` is the role of whoever asks: nobody hands out a role above their own.
        """
        name = name.strip()
        if not name or len(name) > 100:
            raise Invalid("a token's name is 1 to 100 characters", code="token_name")
        if role not in ROLES:
            raise Invalid(f"role must be one of {', '.join(ROLES)}", code="unknown_role")
        if granted_by is not None and ROLES.index(granted_by) > ROLES.index(role):
            raise Conflict(
                f"a {granted_by} token cannot create a {role} token", code="role_too_high"
            )
        token = PREFIX + secrets.token_urlsafe(32)
        row = await self.pool.fetchrow(
            f"INSERT INTO api_tokens (name, role, token_hash) VALUES ($1, $2, $3) "
            f"RETURNING {COLUMNS}",
            name,
            role,
            token_hash(token),
        )
        return dict(row), token

    async def all(self, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
        """A page of tokens (never the tokens themselves), oldest first."""
        rows = await self.pool.fetch(
            f"SELECT {COLUMNS} FROM api_tokens ORDER BY id LIMIT $1 OFFSET $2", limit, offset
        )
        total = await self.pool.fetchval("SELECT count(*) FROM api_tokens")
        return [dict(r) for r in rows], int(total)

    async def revoke(self, token_id: int) -> None:
        """Revoke a token: it stops working at once."""
        done = await self.pool.execute(
            "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1",
            token_id,
        )
        if done == "UPDATE 0":
            raise NotFound(f"no token with id {token_id}")

    async def authenticate(self, token: str) -> Principal | None:
        """The caller a presented token stands for, or None."""
        row = await self.pool.fetchrow(
            "UPDATE api_tokens SET last_used_at = now() "
            "WHERE token_hash = $1 AND revoked_at IS NULL RETURNING id, name, role",
            token_hash(token),
        )
        if row is None:
            return None
        return Principal(row["id"], row["name"], row["role"])
