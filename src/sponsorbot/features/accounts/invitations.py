"""Secret links the owner hands out: invitations to the team, accepted once, and password
resets for a member, used once. Only the links' sha256 is stored."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import asyncpg

from sponsorbot.features.accounts.audit import Actor, record
from sponsorbot.features.accounts.security import digest, random_token
from sponsorbot.features.errors import Conflict

INVITATION_TTL = timedelta(hours=72)
RESET_TTL = timedelta(hours=24)


async def invite(
    pool: asyncpg.Pool, email: str, role: str, invited_by: int, now: datetime
) -> tuple[int, str]:
    """A new invitation; returns its id and the secret that goes into the link."""
    token = random_token()
    invitation_id: int = await pool.fetchval(
        "INSERT INTO invitations (token_hash, email, role, invited_by, created_at, expires_at) "
        "VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        digest(token),
        email,
        role,
        invited_by,
        now,
        now + INVITATION_TTL,
    )
    return invitation_id, token


async def pending_invitations(pool: asyncpg.Pool, now: datetime) -> list[dict[str, Any]]:
    """Invitations not yet accepted, revoked or expired."""
    rows = await pool.fetch(
        "SELECT id, email, role, created_at, expires_at FROM invitations "
        "WHERE accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1 ORDER BY id",
        now,
    )
    return [dict(r) for r in rows]


async def open_invitation(pool: asyncpg.Pool, token: str, now: datetime) -> dict[str, Any] | None:
    """The invitation behind a link, if it can still be accepted."""
    row = await pool.fetchrow(
        "SELECT id, email, role FROM invitations WHERE token_hash = $1 "
        "AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2",
        digest(token),
        now,
    )
    return dict(row) if row else None


async def accept(
    pool: asyncpg.Pool,
    invitation: dict[str, Any],
    name: str,
    password_hash: str,
    now: datetime,
    address: str,
) -> int | None:
    """Make the member an invitation names, once: their id, or None when the invitation was
    taken meanwhile. Conflict when the e-mail already belongs to a member."""
    try:
        async with pool.acquire() as conn, conn.transaction():
            taken = await conn.fetchval(
                "UPDATE invitations SET accepted_at = $2 WHERE id = $1 AND accepted_at IS NULL "
                "RETURNING 1",
                invitation["id"],
                now,
            )
            if taken is None:
                return None
            user_id: int = await conn.fetchval(
                "INSERT INTO users (email, name, password_hash, role) VALUES ($1, $2, $3, $4) "
                "RETURNING id",
                invitation["email"],
                name,
                password_hash,
                invitation["role"],
            )
            await record(
                conn,
                now,
                Actor(user_id, f"{name} <{invitation['email']}>", address),
                "team.joined",
                invitation["email"],
                after={"role": invitation["role"]},
            )
    except asyncpg.UniqueViolationError:
        raise Conflict(f"{invitation['email']} is already a member", code="member_exists") from None
    return user_id


async def revoke(pool: asyncpg.Pool, invitation_id: int, now: datetime) -> str | None:
    """Withdraw an unused invitation; the e-mail it was for, or None when there was none."""
    email: str | None = await pool.fetchval(
        "UPDATE invitations SET revoked_at = $2 WHERE id = $1 AND accepted_at IS NULL "
        "AND revoked_at IS NULL RETURNING email",
        invitation_id,
        now,
    )
    return email


# -- password resets ---------------------------------------------------------------------------


async def new_reset(pool: asyncpg.Pool, user_id: int, created_by: int | None, now: datetime) -> str:
    """A one-time link's secret to set a member's password; earlier unused ones stop working.
    `created_by` is None when it comes from the command line (someone with the server's keys)."""
    token = random_token()
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "DELETE FROM password_resets WHERE user_id = $1 OR expires_at < $2", user_id, now
        )
        await conn.execute(
            "INSERT INTO password_resets (token_hash, user_id, created_by, created_at, expires_at) "
            "VALUES ($1, $2, $3, $4, $5)",
            digest(token),
            user_id,
            created_by,
            now,
            now + RESET_TTL,
        )
    return token


OPEN_RESET = """
SELECT r.id, u.id AS user_id, u.email, u.name
FROM password_resets r JOIN users u ON u.id = r.user_id
WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > $2 AND u.disabled_at IS NULL
"""


async def open_reset(pool: asyncpg.Pool, token: str, now: datetime) -> dict[str, Any] | None:
    """The member a reset link is for, while it can still be used."""
    row = await pool.fetchrow(OPEN_RESET, digest(token), now)
    return dict(row) if row else None


async def use_reset(
    pool: asyncpg.Pool, reset: dict[str, Any], password_hash: str, now: datetime, address: str
) -> bool:
    """Set the member's new password once and end all their sessions; False when the link was
    used meanwhile."""
    async with pool.acquire() as conn, conn.transaction():
        taken = await conn.fetchval(
            "UPDATE password_resets SET used_at = $2 WHERE id = $1 AND used_at IS NULL RETURNING 1",
            reset["id"],
            now,
        )
        if taken is None:
            return False
        await conn.execute(
            "UPDATE users SET password_hash = $2 WHERE id = $1", reset["user_id"], password_hash
        )
        await conn.execute("DELETE FROM panel_sessions WHERE user_id = $1", reset["user_id"])
        await record(
            conn,
            now,
            Actor(reset["user_id"], f"{reset['name']} <{reset['email']}>", address),
            "account.password_reset",
            reset["email"],
        )
    return True
