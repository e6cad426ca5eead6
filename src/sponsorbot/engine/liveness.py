"""Fast failover: a worker that dies hands its bots and its updates over within seconds.

Leases expire after 30 s and an update's lock after 120 s, so a worker killed with SIGKILL
used to leave its bots unanswered for that long. Each worker now holds a session-level
advisory lock on a connection of its own, and PostgreSQL releases such a lock the moment the
connection drops, whether the process exited, was killed or lost its machine. Every worker
looks, twice a second, for registered workers whose lock is gone and that have not beaten for
`grace_s` (1.5 s): it expires their leases (so the managers take their bots over at once, and
their senders start without the hand-over's pause, sender.py), and gives their updates in hand
back to the queue. A worker killed with SIGKILL is reaped 1-2 s later and its bots answered
again within about a quarter of a second more (tests/integration/test_failover.py). The beat
and the look for the dead are one statement: two a second per worker, as the one-a-second
beat and reap were.

A restart of PostgreSQL drops every lock at once; a live worker takes its lock again as soon
as it reconnects and keeps `seen_at` fresh, and a worker only reaps others once its own lock
has been held for a while, so nobody is taken for dead in the seconds after a restart. A
worker that notices its own lock is gone stops its senders at once (at its next beat, half a
second at most, or the moment the connection is seen to drop), a second before the others may
reap it (`grace_s` after its last beat, that is at least `grace_s - every_s` after it stopped),
so a bot taken over is never sent for by two.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

import asyncpg

from sponsorbot.db.errors import DB_ERRORS
from sponsorbot.engine.bots import BOTS_CHANGED
from sponsorbot.engine.notify import Notifier, wait_at_most

log = logging.getLogger(__name__)

# The first key of our advisory locks (pg_advisory_lock(int, int)): "SB" in ASCII, so other
# users of advisory locks in the same database are not confused with workers.
NAMESPACE = 0x5342
TAKE = "SELECT pg_try_advisory_lock($1, $2)"
REGISTER = """
INSERT INTO workers (lock_key, owner) VALUES ($1, $2)
ON CONFLICT (owner) DO UPDATE SET lock_key = excluded.lock_key, seen_at = now()
"""
LEAVE = "DELETE FROM workers WHERE owner = $1"
# Our beat ($3: our owner name), and (when $4) the reaping: workers not seen for $2 seconds
# whose lock no session of this database holds are dead. Their leases expire now, their claimed
# updates wait no more, and they are forgotten.
REAP = """
WITH beat AS (
    UPDATE workers SET seen_at = now() WHERE owner = $3 RETURNING lock_key
), dead AS (
    SELECT w.lock_key, w.owner FROM workers w
    WHERE $4 AND w.owner <> $3 AND w.seen_at < now() - make_interval(secs => $2)
      AND NOT EXISTS (
          SELECT 1 FROM pg_locks l
          WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND l.classid = $1::oid AND l.objid = w.lock_key::oid)
), released AS (
    UPDATE inbox SET status = 'pending', locked_until = NULL, next_attempt_at = now()
    WHERE status = 'processing' AND claimed_by IN (SELECT lock_key FROM dead)
    RETURNING 1
), freed AS (
    UPDATE leases SET expires_at = now() - interval '1 second'
    WHERE owner IN (SELECT owner FROM dead) AND expires_at >= now()
    RETURNING 1
), gone AS (
    DELETE FROM workers WHERE lock_key IN (SELECT lock_key FROM dead) RETURNING owner
)
SELECT (SELECT count(*) FROM beat) AS beat, ARRAY(SELECT owner FROM gone) AS owners,
       (SELECT count(*) FROM released) AS updates, (SELECT count(*) FROM freed) AS leases
"""


def _draw_key() -> int:
    """A random key for our lock: the second key of pg_advisory_lock, a positive int4."""
    return secrets.randbelow(2**31 - 1) + 1


# repr=False: the DSN may hold the database's password.
@dataclass(eq=False, repr=False)
class Liveness:
    """This worker's advisory lock and heartbeat, and the reaping of dead workers."""

    dsn: str
    owner: str
    notifier: Notifier
    _: KW_ONLY
    every_s: float = 0.5
    grace_s: float = 1.5
    settle_s: float = 5.0
    # Told when our lock is lost and when it is held again: in between, another worker
    # may take this one's bots, so it must not send (manager.suspend and resume).
    on_down: Callable[[], None] = lambda: None
    on_up: Callable[[], None] = lambda: None
    # The key of our lock, chosen once; claimed updates carry it (inbox.claimed_by).
    key: int = field(init=False, default_factory=_draw_key)
    _conn: asyncpg.Connection | None = field(init=False, default=None)
    _held_since: float | None = field(init=False, default=None)

    async def run(self, stop: asyncio.Event) -> None:
        """Hold the lock and look for dead workers until `stop`; then leave."""
        try:
            while not stop.is_set():
                try:
                    await self._beat()
                except DB_ERRORS as exc:
                    log.warning("worker liveness: %s; reconnecting", exc)
                    await self._drop()
                    self.on_down()
                await wait_at_most(stop, self.every_s)
        finally:
            await self._leave()

    async def _beat(self) -> None:
        conn = await self._connection()
        held_for = time.monotonic() - (self._held_since or time.monotonic())
        row = await conn.fetchrow(
            REAP, NAMESPACE, self.grace_s, self.owner, held_for >= self.settle_s
        )
        if not row["beat"]:
            # Taken for dead (our lock was lost for a while): back on the list.
            await conn.execute(REGISTER, self.key, self.owner)
        if row["owners"]:
            log.warning(
                "workers %s are gone: took back %d updates and %d leases",
                ", ".join(row["owners"]),
                row["updates"],
                row["leases"],
            )
            self.notifier.wake(BOTS_CHANGED)
            self.notifier.wake("inbox")

    async def _connection(self) -> asyncpg.Connection:
        if self._conn is not None and not self._conn.is_closed():
            return self._conn
        conn = await asyncpg.connect(
            self.dsn, server_settings={"application_name": "sponsorbot-liveness"}
        )
        try:
            while not await conn.fetchval(TAKE, NAMESPACE, self.key):
                # Another live worker drew the same key: draw again.
                self.key = _draw_key()
            await conn.execute(REGISTER, self.key, self.owner)
        except BaseException:
            await conn.close()
            raise
        # The lock went with the connection: stop sending now, not at the next beat.
        conn.add_termination_listener(self._terminated)
        self._conn = conn
        self._held_since = time.monotonic()
        self.on_up()
        return conn

    def _terminated(self, conn: asyncpg.Connection) -> None:
        if conn is self._conn:
            log.warning("worker liveness: the connection dropped; reconnecting")
            self.on_down()

    async def _drop(self) -> None:
        conn, self._conn, self._held_since = self._conn, None, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()

    async def _leave(self) -> None:
        """Unregister and release the lock (closing the session does that)."""
        conn = self._conn
        if conn is not None and not conn.is_closed():
            with contextlib.suppress(Exception):
                await conn.execute(LEAVE, self.owner)
        await self._drop()
