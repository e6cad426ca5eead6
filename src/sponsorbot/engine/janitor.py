"""Clean-up: every table that grows loses what is past its retention, as fast as it grows.

ADR 0014: a review found the old janitor removing at most 50 batches of 1000 rows per table every
5 minutes, 14.4 million a day, less than a busy install adds to its outbox alone. Now the job
runs every minute and deletes in rounds, one batch per table per round, until every table comes
back short of a batch or the time budget is spent; the next run goes on where this one left
off. Batches stay small enough that each transaction is short and the queues never wait.

Features sweep their own tables with the same `sweep` (the audit log, sign-in failures, old
broadcast recipients): the engine knows nothing of them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

log = logging.getLogger(__name__)

BATCH = 5000
EVERY_S = 60.0
BUDGET_S = 20.0


@dataclass(frozen=True, slots=True)
class Sweep:
    """One table's clean-up: `sql` deletes at most $1 rows; `args` are $2 and on."""

    name: str
    sql: str
    args: tuple[object, ...] = ()


# Each statement picks its batch through a partial index on the finishing time, so a batch
# costs the rows it deletes, not a scan of the queue.
DELETE_INBOX = """
DELETE FROM inbox WHERE id IN (
    SELECT id FROM inbox WHERE status = 'done' AND handled_at < now() - make_interval(secs => $2)
    LIMIT $1)
"""
# Dead updates are kept longer than done ones: the owner may still re-drive them.
DELETE_DEAD = """
DELETE FROM inbox WHERE id IN (
    SELECT id FROM inbox WHERE status = 'dead' AND handled_at < now() - make_interval(secs => $2)
    LIMIT $1)
"""
DELETE_OUTBOX = """
DELETE FROM outbox WHERE id IN (
    SELECT id FROM outbox WHERE status <> 'pending' AND sent_at < now() - make_interval(secs => $2)
    LIMIT $1)
"""
# A reference a waiting row still needs (an auto-delete due later than the retention) stays
# (docs/adr/0021-content-limits.md): without it the delete would fail as "never sent".
DELETE_REFS = """
DELETE FROM message_refs WHERE (bot_id, ref) IN (
    SELECT r.bot_id, r.ref FROM message_refs r
    WHERE r.created_at < now() - make_interval(secs => $2)
      AND NOT EXISTS (SELECT 1 FROM outbox o
                      WHERE o.bot_id = r.bot_id AND o.uses_ref = r.ref AND o.status = 'pending')
    LIMIT $1)
"""
DELETE_LEASES = """
DELETE FROM leases WHERE name IN (
    SELECT name FROM leases WHERE expires_at < now() - interval '1 day' LIMIT $1)
"""
# Expired conversations are as good as gone already.
DELETE_CONVERSATIONS = """
DELETE FROM conversations WHERE (bot_id, user_id) IN (
    SELECT bot_id, user_id FROM conversations WHERE expires_at < now() - interval '1 day'
    LIMIT $1)
"""


def engine_sweeps(retention_s: float, dead_keep_s: float) -> list[Sweep]:
    """The engine's own tables: the queues, message references, leases, conversations."""
    return [
        Sweep("inbox", DELETE_INBOX, (retention_s,)),
        Sweep("inbox_dead", DELETE_DEAD, (dead_keep_s,)),
        Sweep("outbox", DELETE_OUTBOX, (retention_s,)),
        Sweep("message_refs", DELETE_REFS, (retention_s,)),
        Sweep("leases", DELETE_LEASES),
        Sweep("conversations", DELETE_CONVERSATIONS),
    ]


async def sweep(
    pool: asyncpg.Pool,
    sweeps: Sequence[Sweep],
    *,
    budget_s: float = BUDGET_S,
    batch: int = BATCH,
) -> dict[str, int]:
    """Delete in rounds of one batch per table until each comes back short or `budget_s` is
    spent; returns the rows deleted per table."""
    deleted = {s.name: 0 for s in sweeps}
    left = list(sweeps)
    deadline = time.monotonic() + budget_s
    while left and time.monotonic() < deadline:
        for one in list(left):
            n = await _run(pool, one, batch)
            deleted[one.name] += n
            if n < batch:
                left.remove(one)
            if time.monotonic() >= deadline:
                break
    if left:
        behind = ", ".join(s.name for s in left)
        log.warning("clean-up ran out of its %.0f s and goes on next time: %s", budget_s, behind)
    return deleted


async def _run(pool: asyncpg.Pool, one: Sweep, batch: int) -> int:
    status: str = await pool.execute(one.sql, batch, *one.args)
    return int(status.rsplit(" ", 1)[-1])
