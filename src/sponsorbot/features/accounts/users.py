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
    """How failed sign-ins slow down and refuse, all counted within `window`.

    Nothing locks an account: a lock anyone can trigger locks the owner out. Instead the
    password step refuses one (account, address) pair after `pair_limit` failures and one
    address after `address_limit`; every answer waits longer the more the account, the pair
    or the address failed. The second step has its own count per account, which a correct
    password does not reset: after `two_step_limit` wrong codes the password is asked again,
    and codes are refused until the window has passed.
    """

    window: timedelta = timedelta(minutes=15)
    pair_limit: int = 5
    address_limit: int = 20
    two_step_limit: int = 5
    # Each failure adds this much delay to the answer, up to max_delay_s.
    delay_step_s: float = 0.5
    max_delay_s: float = 4.0

    def delay(self, failures: int) -> float:
        """Seconds to wait before answering after `failures` recent failures."""
        return min(self.delay_step_s * failures, self.max_delay_s)


@dataclass(frozen=True, slots=True)
class Failures:
    """Recent failed sign-ins that concern one attempt."""

    pair: int  # this e-mail from this address (password step)
    account: int  # this e-mail from anywhere (password step)
    address: int  # this address, any e-mail (password step)
    two_step: int  # wrong second-step codes for this e-mail


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


async def setup_code_valid(pool: asyncpg.Pool, code: str, now: datetime) -> bool:
    """True when `code` is an unused, unexpired setup code (checked before hashing anything;
    `create_owner` spends it)."""
    found = await pool.fetchval(
        "SELECT 1 FROM setup_codes WHERE code_hash = $1 AND expires_at > $2", digest(code), now
    )
    return found is not None


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
        f"SELECT {USER_COLUMNS}, password_hash, totp_secret FROM users "
        "WHERE lower(email) = lower($1) AND disabled_at IS NULL",
        email,
    )
    if row is None:
        return None
    return _user(row), row["password_hash"], row["totp_secret"]


async def totp_secret(pool: asyncpg.Pool, user_id: int) -> tuple[str | None, int | None]:
    """A member's stored TOTP secret (as stored: sealed, or clear from before) and the last
    time step used, only read to check a code."""
    row = await pool.fetchrow(
        "SELECT totp_secret, totp_last_step FROM users WHERE id = $1", user_id
    )
    return (row["totp_secret"], row["totp_last_step"]) if row else (None, None)


async def reseal_totp_secret(pool: asyncpg.Pool, user_id: int, clear: str, sealed: str) -> None:
    """Replace a clear TOTP secret from before by its sealed form (only if unchanged)."""
    await pool.execute(
        "UPDATE users SET totp_secret = $3 WHERE id = $1 AND totp_secret = $2",
        user_id,
        clear,
        sealed,
    )


async def use_totp_step(pool: asyncpg.Pool, user_id: int, step: int) -> bool:
    """Record that the code of `step` was used; False when it, or a later one, already was
    (two tabs sending the same code: only one of them gets in)."""
    used = await pool.fetchval(
        "UPDATE users SET totp_last_step = $2 WHERE id = $1 "
        "AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING 1",
        user_id,
        step,
    )
    return used is not None


async def password_hash(pool: asyncpg.Pool, user_id: int) -> str | None:
    """A member's password hash (only read to check the password they typed)."""
    value: str | None = await pool.fetchval(
        "SELECT password_hash FROM users WHERE id = $1 AND disabled_at IS NULL", user_id
    )
    return value


async def set_password(pool: asyncpg.Pool | asyncpg.Connection, user_id: int, hashed: str) -> None:
    """A member's new password (as its argon2id hash)."""
    await pool.execute("UPDATE users SET password_hash = $2 WHERE id = $1", user_id, hashed)


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


LOAD_SESSION = """
UPDATE panel_sessions s
   SET last_seen = $2,
       expires_at = CASE WHEN s.state = 'active' THEN LEAST($2 + $3, s.created_at + $4)
                         ELSE s.expires_at END
  FROM users u
 WHERE s.id_hash = $1 AND s.expires_at > $2 AND s.created_at + $4 > $2 AND u.id = s.user_id
   AND u.disabled_at IS NULL
RETURNING s.id_hash, s.state, s.csrf_token, u.id, u.email, u.name, u.role, u.language,
          u.totp_secret IS NOT NULL AS two_step, u.created_at
"""


async def load_session(
    pool: asyncpg.Pool, session_id: str, now: datetime, idle: timedelta, lifetime: timedelta
) -> Session | None:
    """The live session behind a cookie, its idle deadline pushed on (never past `lifetime`
    after it started); None when expired."""
    row = await pool.fetchrow(LOAD_SESSION, digest(session_id), now, idle, lifetime)
    if row is None:
        return None
    return Session(bytes(row["id_hash"]), _user(row), row["state"], row["csrf_token"])


async def end_session(pool: asyncpg.Pool, session_id: str) -> None:
    """Sign this browser out."""
    await pool.execute("DELETE FROM panel_sessions WHERE id_hash = $1", digest(session_id))


async def end_all_sessions(pool: asyncpg.Pool | asyncpg.Connection, user_id: int) -> int:
    """Sign a member out everywhere; returns how many sessions ended."""
    result: str = await pool.execute("DELETE FROM panel_sessions WHERE user_id = $1", user_id)
    return int(result.split()[-1])


async def end_other_sessions(pool: asyncpg.Pool, user_id: int, keep: bytes) -> int:
    """Sign a member out everywhere but the session whose id hash is `keep`."""
    result: str = await pool.execute(
        "DELETE FROM panel_sessions WHERE user_id = $1 AND id_hash <> $2", user_id, keep
    )
    return int(result.split()[-1])


# -- failed sign-ins ---------------------------------------------------------------------------

COUNT_FAILURES = """
SELECT count(*) FILTER (WHERE kind = 'password' AND lower(email) = lower($1) AND address = $2)
           AS pair,
       count(*) FILTER (WHERE kind = 'password' AND lower(email) = lower($1)) AS account,
       count(*) FILTER (WHERE kind = 'password' AND address = $2) AS address,
       count(*) FILTER (WHERE kind = 'two_step' AND lower(email) = lower($1)) AS two_step
FROM signin_failures WHERE at > $3 AND (lower(email) = lower($1) OR address = $2)
"""


async def failures(
    pool: asyncpg.Pool, email: str, address: str, now: datetime, policy: LockoutPolicy
) -> Failures:
    """Recent failures for this e-mail (whether or not it has an account) and this address."""
    row = await pool.fetchrow(COUNT_FAILURES, email, address, now - policy.window)
    assert row is not None
    return Failures(
        int(row["pair"]), int(row["account"]), int(row["address"]), int(row["two_step"])
    )


async def add_failure(
    pool: asyncpg.Pool,
    email: str,
    address: str,
    now: datetime,
    policy: LockoutPolicy,
    kind: str = "password",
) -> None:
    """Count one failed step (`kind` 'password' or 'two_step'); forget those out of the window."""
    await pool.execute("DELETE FROM signin_failures WHERE at < $1", now - policy.window)
    await pool.execute(
        "INSERT INTO signin_failures (email, address, at, kind) VALUES ($1, $2, $3, $4)",
        email[:320],
        address,
        now,
        kind,
    )


async def clear_failures(pool: asyncpg.Pool, email: str, address: str) -> None:
    """A whole sign-in succeeded: forget this pair's password failures and the account's
    wrong codes. Other addresses' failures on the account stay: they may be an attacker's."""
    await pool.execute(
        "DELETE FROM signin_failures WHERE lower(email) = lower($1) "
        "AND (kind = 'two_step' OR address = $2)",
        email,
        address,
    )


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
    pool: asyncpg.Pool, user_id: int, sealed_secret: str, recovery_digests: list[bytes]
) -> None:
    """Turn two-step sign-in on with this TOTP secret (sealed) and these recovery codes (as
    digests)."""
    await pool.execute(
        "UPDATE users SET totp_secret = $2, recovery_codes = $3, totp_last_step = NULL "
        "WHERE id = $1",
        user_id,
        sealed_secret,
        recovery_digests,
    )


async def disable_two_step(pool: asyncpg.Pool, user_id: int) -> None:
    """Turn two-step sign-in off."""
    await pool.execute(
        "UPDATE users SET totp_secret = NULL, recovery_codes = '{}', totp_last_step = NULL "
        "WHERE id = $1",
        user_id,
    )


async def replace_recovery_codes(pool: asyncpg.Pool, user_id: int, digests: list[bytes]) -> None:
    """New recovery codes (as digests); the old ones stop working."""
    await pool.execute("UPDATE users SET recovery_codes = $2 WHERE id = $1", user_id, digests)


USE_RECOVERY_CODE = """
UPDATE users SET recovery_codes = ARRAY(SELECT c FROM unnest(recovery_codes) c WHERE c <> ALL($2))
WHERE id = $1 AND recovery_codes && $2::bytea[]
RETURNING 1
"""


async def use_recovery_code(pool: asyncpg.Pool, user_id: int, candidates: list[bytes]) -> bool:
    """Spend one recovery code, given the digests it may be stored as; False when it is not
    one of the member's (or was used)."""
    return await pool.fetchval(USE_RECOVERY_CODE, user_id, candidates) is not None
