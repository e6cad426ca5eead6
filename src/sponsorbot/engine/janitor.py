"""Clean-up: finished queue rows go after the retention period, a small batch at a time."""

from __future__ import annotations

import asyncpg

from sponsorbot.engine.conversation import PURGE as PURGE_CONVERSATIONS

BATCH = 1000

DELETE_INBOX = """
DELETE FROM inbox WHERE id IN (
    SELECT id FROM inbox WHERE status = 'done' AND handled_at < now() - make_interval(secs => $1)
    LIMIT $2)
"""
DELETE_OUTBOX = """
DELETE FROM outbox WHERE id IN (
    SELECT id FROM outbox WHERE status <> 'pending' AND sent_at < now() - make_interval(secs => $1)
    LIMIT $2)
"""
DELETE_REFS = """
DELETE FROM message_refs WHERE (bot_id, ref) IN (
    SELECT bot_id, ref FROM message_refs WHERE created_at < now() - make_interval(secs => $1)
    LIMIT $2)
"""
DELETE_LEASES = "DELETE FROM leases WHERE expires_at < now() - interval '1 day'"


def _count(status: str) -> int:
    return int(status.rsplit(" ", 1)[-1])


async def clean(pool: asyncpg.Pool, retention_s: float, max_batches: int = 50) -> int:
    """Delete done inbox rows, finished outbox rows and old message refs; returns the count.

    Small batches keep each transaction short, so the queues never wait on the janitor.
    Message refs are kept as long as the rows that might use them.
    """
    total = 0
    for sql in (DELETE_INBOX, DELETE_OUTBOX, DELETE_REFS):
        for _ in range(max_batches):
            deleted = _count(await pool.execute(sql, retention_s, BATCH))
            total += deleted
            if deleted < BATCH:
                break
    await pool.execute(DELETE_LEASES)
    await pool.execute(PURGE_CONVERSATIONS)
    return total
