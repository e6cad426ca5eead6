"""Team members, sessions, setup codes, sign-in failures and two-step secrets (the SQL side).

Every time comparison uses the moment the caller passes in (the app's clock), never the
database's `now()`, so expiry is decided by one clock that tests can move.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from sponsorbot.features.accounts.security import digest, random_token, setup_code

# Enough to catch a typo; the invitation link proves the address.
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
SETUP_CODE_TTL = timedelta(hours=1)
TWO_STEP_TTL = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class LockoutPolicy:
    """How failed sign-ins slow down and lock: per account and per address."""

    window: timedelta = timedelta(minutes=15)
    account_limit: int = 5
    address_limit: int = 20
    lock_for: timedelta = timedelta(minutes=15)
    # Each failure after the first adds this much delay to the answer, up to max_delay_s.
    delay_step_s: float = 0.5
    max_delay_s: float = 4.0


@dataclass(frozen=True, slots=True)
class User:
    """A team member as the panel sees them (no password hash, no TOTP secret)."""

    id: int
    email: str
    name: str
    role: str
    language: str | None
    two_step: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Session:
    """A server-side session: `state` is 'two_step' until the second step is passed."""

    id_hash: bytes
    user: User
    state: str
    csrf_token: str


USER_COLUMNS = "id, email, name, role, language, totp_secret IS NOT NULL AS two_step, created_at"


def _user(row: Any) -> User:
    return User(
        row["id"],
        row["email"],
        row["name"],
        row["role"],
        row["language"],
        row["two_step"],
        row["created_at"],
    )


# -- setup -------------------------------------------------------------------------------------


async def owner_exists(pool: asyncpg.Pool) -> bool:
    """True once /setup has been used: it is closed for good."""
    return bool(await pool.fetchval("SELECT EXISTS (SELECT 1 FROM users WHERE role = 'owner')"))


async def new_setup_code(pool: asyncpg.Pool, now: datetime) -> str | None:
    """A fresh one-time setup code valid for an hour, or None when an owner exists."""
    if await owner_exists(pool):
        return None
    code = setup_code()
    await pool.execute("DELETE FROM setup_codes WHERE expires_at < $1", now)
    await pool.execute(
        "INSERT INTO setup_codes (code_hash, expires_at) VALUES ($1, $2)",
        digest(code),
        now + SETUP_CODE_TTL,
    )
    return code


async def create_owner(
    conn: asyncpg.Connection, code: str, email: str, name: str, password_hash: str, now: datetime
) -> User | None:
    """Use a setup code to create the owner; None if the code is wrong, used or expired."""
    used = await conn.fetchval(
        "DELETE FROM setup_codes WHERE code_hash = $1 AND expires_at > $2 RETURNING 1",
        digest(code),
        now,
    )
    if used is None:
        return None
    try:
        # A savepoint, so losing a race with another setup leaves the transaction usable.
        async with conn.transaction():
            row = await conn.fetchrow(
                f"INSERT INTO users (email, name, password_hash, role) "
                f"VALUES ($1, $2, $3, 'owner') RETURNING {USER_COLUMNS}",
                email,
                name,
                password_hash,
            )
    except asyncpg.UniqueViolationError:
        return None
    await conn.execute("DELETE FROM setup_codes")
    return _user(row)


# -- users -------------------------------------------------------------------------------------


async def user_by_email(pool: asyncpg.Pool, email: str) -> tuple[User, str, str | None] | None:
    """A member with their password hash and TOTP secret, for signing in."""
    row = await pool.fetchrow(
        f"SELECT {USER_COLUMNS}, password_hash, totp_secret, locked_until FROM users "
        "WHERE lower(email) = lower($1) AND disabled_at IS NULL",
        email,
    )
    if row is None:
        return None
    return _user(row), row["password_hash"], row["totp_secret"]


async def totp_secret(pool: asyncpg.Pool, user_id: int) -> str | None:
    """A member's TOTP secret (only read to check a code)."""
    value: str | None = await pool.fetchval("SELECT totp_secret FROM users WHERE id = $1", user_id)
    return value


async def users(pool: asyncpg.Pool) -> list[User]:
    """Every active member, owner first."""
    rows = await pool.fetch(
        f"SELECT {USER_COLUMNS} FROM users WHERE disabled_at IS NULL "
        "ORDER BY array_position(ARRAY['owner','admin','editor','analyst'], role), id"
    )
    return [_user(r) for r in rows]


async def get_user(pool: asyncpg.Pool, user_id: int) -> User | None:
    """One active member."""
    row = await pool.fetchrow(
        f"SELECT {USER_COLUMNS} FROM users WHERE id = $1 AND disabled_at IS NULL", user_id
    )
    return _user(row) if row else None


# -- sessions ----------------------------------------------------------------------------------


async def start_session(
    pool: asyncpg.Pool,
    user_id: int,
    state: str,
    expires_at: datetime,
    now: datetime,
    address: str | None,
    user_agent: str | None,
) -> str:
    """A new session; returns the id that goes in the cookie (only its hash is stored)."""
    session_id = random_token()
    # Expired sessions are swept here: signing in is rare enough to carry the cost.
    await pool.execute("DELETE FROM panel_sessions WHERE expires_at < $1", now)
    await pool.execute(
        "INSERT INTO panel_sessions (id_hash, user_id, state, csrf_token, address, user_agent, "
        "created_at, last_seen, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)",
        digest(session_id),
        user_id,
        state,
        random_token(),
        address,
        (user_agent or "")[:300],
        now,
        expires_at,
    )
    return session_id


async def load_session(
    pool: asyncpg.Pool, session_id: str, now: datetime, idle: timedelta
) -> Session | None:
    """The live session behind a cookie, its idle deadline pushed on; None when expired."""
    row = await pool.fetchrow(
        """
        UPDATE panel_sessions s
           SET last_seen = $2,
               expires_at = CASE WHEN s.state = 'active' THEN $2 + $3 ELSE s.expires_at END
          FROM users u
         WHERE s.id_hash = $1 AND s.expires_at > $2 AND u.id = s.user_id
           AND u.disabled_at IS NULL
        RETURNING s.id_hash, s.state, s.csrf_token, u.id, u.email, u.name, u.role, u.language,
                  u.totp_secret IS NOT NULL AS two_step, u.created_at
        """,
        digest(session_id),
        now,
        idle,
    )
    if row is None:
        return None
    return Session(bytes(row["id_hash"]), _user(row), row["state"], row["csrf_token"])


async def end_session(pool: asyncpg.Pool, session_id: str) -> None:
    """Sign this browser out."""
    await pool.execute("DELETE FROM panel_sessions WHERE id_hash = $1", digest(session_id))


async def end_all_sessions(pool: asyncpg.Pool, user_id: int) -> int:
    """Sign a member out everywhere; returns how many sessions ended."""
    result: str = await pool.execute("DELETE FROM panel_sessions WHERE user_id = $1", user_id)
    return int(result.split()[-1])


# -- failed sign-ins ---------------------------------------------------------------------------


async def failures(
    pool: asyncpg.Pool, email: str, address: str, now: datetime, policy: LockoutPolicy
) -> tuple[int, int]:
    """Recent failures for this account and for this address."""
    row = await pool.fetchrow(
        """
        SELECT count(*) FILTER (WHERE lower(email) = lower($1)) AS account,
               count(*) FILTER (WHERE address = $2) AS address
        FROM signin_failures WHERE at > $3 AND (lower(email) = lower($1) OR address = $2)
        """,
        email,
        address,
        now - policy.window,
    )
    assert row is not None
    return int(row["account"]), int(row["address"])


async def locked_until(pool: asyncpg.Pool, email: str, now: datetime) -> datetime | None:
    """When an account lock ends, if the account is locked now."""
    value: datetime | None = await pool.fetchval(
        "SELECT locked_until FROM users WHERE lower(email) = lower($1) AND locked_until > $2",
        email,
        now,
    )
    return value


async def add_failure(
    pool: asyncpg.Pool, email: str, address: str, now: datetime, policy: LockoutPolicy
) -> bool:
    """Count one failure; lock the account when it passes the limit. True if it locked now."""
    await pool.execute("DELETE FROM signin_failures WHERE at < $1", now - policy.window)
    await pool.execute(
        "INSERT INTO signin_failures (email, address, at) VALUES ($1, $2, $3)",
        email[:320],
        address,
        now,
    )
    account, _ = await failures(pool, email, address, now, policy)
    if account >= policy.account_limit:
        locked = await pool.fetchval(
            "UPDATE users SET locked_until = $2 WHERE lower(email) = lower($1) "
            "AND (locked_until IS NULL OR locked_until <= $3) RETURNING 1",
            email,
            now + policy.lock_for,
            now,
        )
        return locked is not None
    return False


async def clear_failures(pool: asyncpg.Pool, email: str) -> None:
    """A successful sign-in forgets the account's failures."""
    await pool.execute("DELETE FROM signin_failures WHERE lower(email) = lower($1)", email)


# -- changes to a member ------------------------------------------------------------------------


async def set_language(pool: asyncpg.Pool, user_id: int, language: str) -> None:
    """The member's panel language."""
    await pool.execute("UPDATE users SET language = $2 WHERE id = $1", user_id, language)


async def telegram_id(pool: asyncpg.Pool, user_id: int) -> int | None:
    """The member's own Telegram user id, where previews of posts are sent (None: not set)."""
    value: int | None = await pool.fetchval("SELECT telegram_id FROM users WHERE id = $1", user_id)
    return value


async def set_telegram_id(pool: asyncpg.Pool, user_id: int, telegram_id: int | None) -> None:
    """Store the member's Telegram user id (None clears it); the caller checks it is one."""
    await pool.execute("UPDATE users SET telegram_id = $2 WHERE id = $1", user_id, telegram_id)


async def set_role(pool: asyncpg.Pool, user_id: int, role: str) -> None:
    """The member's role (the caller checks who may hand it out)."""
    await pool.execute("UPDATE users SET role = $2 WHERE id = $1", user_id, role)


async def disable(pool: asyncpg.Pool, user_id: int, now: datetime) -> None:
    """Remove a member from the team: they cannot sign in, their sessions end at once."""
    await pool.execute("UPDATE users SET disabled_at = $2 WHERE id = $1", user_id, now)
    await end_all_sessions(pool, user_id)


async def enable_two_step(
    pool: asyncpg.Pool, user_id: int, secret: str, recovery_digests: list[bytes]
) -> None:
    """Turn two-step sign-in on with this TOTP secret and these recovery codes (as digests)."""
    await pool.execute(
        "UPDATE users SET totp_secret = $2, recovery_codes = $3 WHERE id = $1",
        user_id,
        secret,
        recovery_digests,
    )


async def disable_two_step(pool: asyncpg.Pool, user_id: int) -> None:
    """Turn two-step sign-in off."""
    await pool.execute(
        "UPDATE users SET totp_secret = NULL, recovery_codes = '{}' WHERE id = $1", user_id
    )


async def use_recovery_code(pool: asyncpg.Pool, user_id: int, code_digest: bytes) -> bool:
    """Spend one recovery code; False when it is not one of the member's (or was used)."""
    used = await pool.fetchval(
        "UPDATE users SET recovery_codes = array_remove(recovery_codes, $2) "
        "WHERE id = $1 AND $2 = ANY(recovery_codes) RETURNING 1",
        user_id,
        code_digest,
    )
    return used is not None
