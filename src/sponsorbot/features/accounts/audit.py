"""The audit log: who changed what, when, from where; secrets never written in clear."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from sponsorbot.logs import mask_tokens

# Keys whose values are secrets, named one by one (a pattern would also hide texts such as
# "unknown_code"): written as "•••" plus at most the last 4 characters.
SECRET_KEYS = frozenset(
    {
        "token",
        "api_key",
        "secret",
        "webhook_secret",
        "password",
        "password2",
        "setup_code",
        "totp_secret",
        "token_hash",
        "private_key",
    }
)

INSERT = """
INSERT INTO audit_log (at, user_id, actor, address, kind, target, before, after)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
"""


@dataclass(frozen=True, slots=True)
class Actor:
    """Who did it: a team member, or someone not signed in (identified by what they typed)."""

    user_id: int | None
    name: str
    address: str | None


def mask(value: Any, key: str = "") -> Any:
    """A copy of `value` fit for the log: secret fields masked, token-shaped text masked."""
    if isinstance(value, dict):
        return {k: mask(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v, key) for v in value]
    if isinstance(value, str):
        if key.lower() in SECRET_KEYS:
            return "•••" + value[-4:] if len(value) > 8 else "•••"
        return mask_tokens(value)
    return value


async def record(
    conn: asyncpg.Pool | asyncpg.Connection,
    at: datetime,
    actor: Actor,
    kind: str,
    target: str | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> None:
    """Write one entry (in the caller's transaction when given a connection)."""
    await conn.execute(
        INSERT,
        at,
        actor.user_id,
        actor.name,
        actor.address,
        kind,
        mask_tokens(target) if target else None,
        mask(before) if before is not None else None,
        mask(after) if after is not None else None,
    )


# Repeats of one anonymous event (a failed or refused sign-in) are counted on the first
# entry of the window, not written again: anonymous visitors cannot grow the log at will.
COALESCE_WINDOW = timedelta(minutes=15)
COUNT_REPEAT = """
UPDATE audit_log
   SET after = jsonb_build_object('attempts', COALESCE((after->>'attempts')::int, 1) + 1)
 WHERE id = (SELECT id FROM audit_log
              WHERE kind = $1 AND target IS NOT DISTINCT FROM $2
                AND address IS NOT DISTINCT FROM $3 AND at > $4
              ORDER BY at DESC LIMIT 1)
RETURNING 1
"""


async def record_coalesced(
    conn: asyncpg.Pool | asyncpg.Connection,
    at: datetime,
    actor: Actor,
    kind: str,
    target: str | None,
    window: timedelta = COALESCE_WINDOW,
) -> None:
    """Write one entry, unless the same kind for the same target from the same address was
    written within `window`: then that entry counts one more attempt (`after.attempts`)."""
    shown = mask_tokens(target) if target else None
    if await conn.fetchval(COUNT_REPEAT, kind, shown, actor.address, at - window) is None:
        await record(conn, at, actor, kind, target)


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """What the audit page asks for; every field optional."""

    user_id: int | None = None
    kind: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    before_id: int | None = None
    target: str | None = None


PAGE = 50


async def entries(pool: asyncpg.Pool, f: AuditFilter, limit: int = PAGE) -> list[dict[str, Any]]:
    """The newest entries matching the filter (kind matches as a prefix: "bot" finds "bot.*")."""
    rows = await pool.fetch(
        """
        SELECT id, at, user_id, actor, address, kind, target, before, after
        FROM audit_log
        WHERE ($1::bigint IS NULL OR user_id = $1)
          AND ($2::text IS NULL OR kind = $2 OR kind LIKE $2 || '.%')
          AND ($3::timestamptz IS NULL OR at >= $3)
          AND ($4::timestamptz IS NULL OR at < $4)
          AND ($5::bigint IS NULL OR id < $5)
          AND ($7::text IS NULL OR target = $7)
        ORDER BY id DESC
        LIMIT $6
        """,
        f.user_id,
        f.kind,
        f.since,
        f.until,
        f.before_id,
        limit,
        f.target,
    )
    return [dict(r) for r in rows]


async def kinds(pool: asyncpg.Pool) -> list[str]:
    """Every kind written so far, for the filter's list."""
    return [r["kind"] for r in await pool.fetch("SELECT DISTINCT kind FROM audit_log ORDER BY 1")]


@dataclass(frozen=True, slots=True)
class Change:
    """One field an entry changed: its dotted name ("post.text" inside "post") and its value
    before and after (None where that side does not have it)."""

    field: str
    before: Any
    after: Any


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """A dict's leaves under dotted names; anything else is one leaf under `prefix`."""
    if isinstance(value, dict):
        found: dict[str, Any] = {}
        for key, inner in value.items():
            found.update(_flat(inner, f"{prefix}.{key}" if prefix else str(key)))
        return found
    return {prefix: value}


def changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[Change]:
    """What an entry changed, field by field, for a reader: nested dicts (a broadcast's post)
    opened up to the fields that differ, and fields equal on both sides left out when both
    sides are written (they say nothing). An entry with one side lists that side whole."""
    old, new = _flat(before or {}), _flat(after or {})
    both = before is not None and after is not None
    names = list(old) + [k for k in new if k not in old]
    return [
        Change(name, old.get(name), new.get(name))
        for name in names
        if not (both and old.get(name) == new.get(name))
    ]
