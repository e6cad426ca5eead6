"""Leases: exclusive, expiring claims on a name (`send:<bot>`, `poll:<bot>`, `job:<name>`).

Database time only: a process with a wrong clock can neither steal nor keep a lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator

import asyncpg

from sponsorbot.db.errors import DB_ERRORS

log = logging.getLogger(__name__)

ACQUIRE = """
INSERT INTO leases (name, owner, expires_at)
VALUES ($1, $2, now() + make_interval(secs => $3))
ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE leases.owner = excluded.owner OR leases.expires_at < now()
RETURNING owner
"""
# ACQUIRE, telling also whether the lease was taken over from another owner whose hold had
# run out (or been ended by the reaping of a dead worker, liveness.py), rather than found free
# (released) or renewed. The CTE reads the row as it was before the statement.
TAKE = f"""
WITH before AS (SELECT owner, expires_at FROM leases WHERE name = $1),
taken AS ({ACQUIRE.strip()})
SELECT t.owner, COALESCE(b.owner <> $2 AND b.expires_at < now(), false) AS taken_over
FROM taken t LEFT JOIN before b ON true
"""
HOLDS = "SELECT true FROM leases WHERE name = $1 AND owner = $2 AND expires_at > now()"
RELEASE = "DELETE FROM leases WHERE name = $1 AND owner = $2"


def new_owner() -> str:
    """A name for this process, unique across machines and restarts."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class Leases:
    """Acquire, renew, check and release leases for one owner."""

    def __init__(self, pool: asyncpg.Pool, owner: str, duration_s: float = 30.0) -> None:
        self.pool = pool
        self.owner = owner
        self.duration_s = duration_s

    async def acquire(self, name: str, duration_s: float | None = None) -> bool:
        """Take the lease if free or expired, renew it if ours; False if someone else holds it."""
        got = await self.pool.fetchval(ACQUIRE, name, self.owner, duration_s or self.duration_s)
        return got is not None

    async def take(self, name: str) -> bool | None:
        """Like `acquire`: None if someone else holds the lease; else whether it was taken
        over from another owner whose hold had run out (its holder stopped a while ago)."""
        row = await self.pool.fetchrow(TAKE, name, self.owner, self.duration_s)
        return None if row is None else bool(row["taken_over"])

    async def holds(self, name: str) -> bool:
        """True while the lease is ours and unexpired, by the database's clock."""
        return bool(await self.pool.fetchval(HOLDS, name, self.owner))

    async def release(self, name: str) -> None:
        """Give the lease up so another process can take it at once."""
        await self.pool.execute(RELEASE, name, self.owner)

    @contextlib.asynccontextmanager
    async def kept(
        self,
        name: str,
        lost: asyncio.Event,
        duration_s: float | None = None,
        release: bool = True,
    ) -> AsyncIterator[None]:
        """Renew a held lease every third of its duration; set `lost` if renewal fails.

        `duration_s` is the lease's duration (the default one if None), as taken with `acquire`.
        On the way out the lease is released, or with `release=False` left to run out on its own.
        """
        duration = duration_s or self.duration_s

        async def renew() -> None:
            while not lost.is_set():
                await asyncio.sleep(duration / 3)
                try:
                    ok = await self.acquire(name, duration)
                except DB_ERRORS as exc:
                    log.warning("renewing lease %s failed: %s", name, exc)
                    ok = await self._holds_quietly(name)
                except Exception:
                    # Unforeseen: give the lease up rather than work on without knowing.
                    log.exception("renewing lease %s failed", name)
                    ok = False
                if not ok:
                    log.warning("lost lease %s", name)
                    lost.set()

        task = asyncio.create_task(renew(), name=f"renew {name}")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            if release:
                with contextlib.suppress(*DB_ERRORS):
                    await self.release(name)

    async def _holds_quietly(self, name: str) -> bool:
        try:
            return await self.holds(name)
        except DB_ERRORS:
            return False
