"""A key rotation for the team's secrets: authenticator (TOTP) secrets sealed with an older
installation key are sealed again with the first one, all at once when the workers start.

Bot tokens move when the engine checks the key at start, TronGrid keys by the shop's own job;
this is the same for the panel's members, so that once every process has started with
SPONSORBOT_SECRET_KEY="new,old", the old key can be dropped without locking anyone out of
two-step sign-in. Recovery codes need nothing: new ones do not depend on the key (see
`security.RECOVERY_V2`); older ones cannot be moved (only their digest is kept), so they are
counted and their members told to make new ones.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import asyncpg

from sponsorbot.features.accounts.security import RECOVERY_V2, PanelKeys

log = logging.getLogger(__name__)

# While a rotation lasts (more than one key listed) the job runs again now and then: a
# process not yet restarted may still have sealed a new secret with the old key meanwhile.
RESEAL_EVERY_S = 3600.0

TOTP_SECRETS = "SELECT id, email, totp_secret FROM users WHERE totp_secret IS NOT NULL ORDER BY id"
RESEAL_TOTP = "UPDATE users SET totp_secret = $3 WHERE id = $1 AND totp_secret = $2"
# Members holding recovery codes made before they stopped depending on the key, and how many.
KEYED_RECOVERY_CODES = """
SELECT count(DISTINCT u.id) AS members, count(*) AS codes
FROM users u, unnest(u.recovery_codes) AS c
WHERE length(c) <> 33 OR substring(c FROM 1 FOR 1) <> $1
"""


@dataclass(frozen=True, slots=True)
class Resealed:
    """What one pass did: secrets moved to the first key, and the members whose secret no
    configured key opens (they sign in again only after `reset-link --two-step-off`)."""

    moved: int
    unreadable: tuple[str, ...]


async def reseal_totp_secrets(pool: asyncpg.Pool | asyncpg.Connection, keys: PanelKeys) -> Resealed:
    """Seal every authenticator secret not yet sealed with the first key (or kept in clear
    from before sealing) with it; a secret changed meanwhile is left to its new value."""
    moved = 0
    unreadable: list[str] = []
    for row in await pool.fetch(TOTP_SECRETS):
        stored = row["totp_secret"]
        if keys.is_sealed(stored):
            continue
        secret = keys.open(stored)
        if secret is None:
            unreadable.append(row["email"])
            continue
        status = await pool.execute(RESEAL_TOTP, row["id"], stored, keys.seal(secret))
        moved += int(status.rsplit(" ", 1)[-1])
    return Resealed(moved, tuple(unreadable))


async def keyed_recovery_codes(conn: asyncpg.Pool | asyncpg.Connection) -> tuple[int, int]:
    """How many members hold recovery codes that may depend on a key, and how many codes."""
    row = await conn.fetchrow(KEYED_RECOVERY_CODES, RECOVERY_V2)
    return int(row["members"]), int(row["codes"])


async def reseal_and_report(pool: asyncpg.Pool, keys: PanelKeys) -> None:
    """The job: re-seal, and say in the log what is left that an old key still holds."""
    done = await reseal_totp_secrets(pool, keys)
    if done.moved:
        log.info("authenticator secrets sealed again with the first key: %d", done.moved)
    if done.unreadable:
        log.warning(
            "%d authenticator secret(s) open with no configured key; those members cannot use "
            "two-step sign-in: run `sponsorbot reset-link EMAIL --two-step-off` for %s",
            len(done.unreadable),
            ", ".join(done.unreadable),
        )
    members, codes = await keyed_recovery_codes(pool)
    if members:
        log.warning(
            "%d member(s) hold %d recovery code(s) made under an installation key: they stop "
            "working once that key is dropped: each should press 'Make new recovery codes' on "
            "their Account page before the old key goes",
            members,
            codes,
        )
