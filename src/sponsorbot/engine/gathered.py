"""Webhook updates gathered for a few milliseconds and stored in one statement.

Each webhook's insert was a transaction of its own: a round trip, a commit and a WAL flush per
update, the api role's biggest cost (and the WAL flushes of all transactions are a fifth of
PostgreSQL's CPU, measured by turning synchronous_commit off). Updates arriving within the
window (`gather_s`, SPONSORBOT_INTAKE_GATHER_MS) of the first go in one `INSERT ... SELECT FROM
unnest` that also sends the wake-up notification, so the batch costs one transaction however
many it holds. Each request is still
answered only after the statement holding its update committed.

The payload goes to PostgreSQL as the text Telegram sent (it was parsed once, to check and
classify it), not re-encoded from Python objects.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import asyncpg

from sponsorbot.engine.inbox import INSERTS, REUSE, insert_text_values
from sponsorbot.engine.notify import CHANNEL
from sponsorbot.engine.outbox import VALUES_MOST
from sponsorbot.engine.updates import Classified

# The engine's own window, for tools and tests: short, a few updates at a couple of hundred a
# second. The product's is SPONSORBOT_INTAKE_GATHER_MS (config.py, longer: ADR 0024).
GATHER_S = 0.005
# A batch this big goes at once, without waiting out the rest of the window.
MAX_BATCH = 256

# The rows in arrival order (ordinality), so one person's updates keep their order in the
# queue; the notification rides in the same statement: these commits come a few milliseconds
# apart per api process, so the lock a NOTIFY takes at commit serialises nothing hot.
INSERT_GATHERED = f"""
WITH stored AS (
    INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload)
    SELECT u.bot_id, u.update_id, u.kind, u.chat_key, u.payload::jsonb
    FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::text[])
         WITH ORDINALITY AS u (bot_id, update_id, kind, chat_key, payload, n)
    ORDER BY u.n
    {REUSE}
    RETURNING 1
)
SELECT (SELECT count(*) FROM stored) AS stored, pg_notify($6, $7)
"""
NOTIFY = "SELECT pg_notify($1, $2)"


@dataclass(slots=True)
class _Pending:
    bot_id: int
    update: Classified
    text: str
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class GatheredInserts:
    """Stores webhook updates in gathered batches; `store` returns once its batch committed.

    `wake_payload` is the notification that wakes the workers (the notifier's own payload, so a
    process skips notifications it sent itself).
    """

    def __init__(
        self, pool: asyncpg.Pool, wake_payload: str, citus: bool = False, gather_s: float = GATHER_S
    ) -> None:
        self.pool = pool
        self.wake_payload = wake_payload
        self.gather_s = gather_s
        self._batch: list[_Pending] = []
        self._timer: asyncio.TimerHandle | None = None
        self._flushing: set[asyncio.Task[None]] = set()
        # Whether the database is a Citus coordinator (the intake asks before its first store).
        self.citus = citus

    async def store(self, bot_id: int, update: Classified, text: str) -> None:
        """Store one update (a duplicate is no error); raises what the database raised."""
        pending = _Pending(bot_id, update, text)
        self._batch.append(pending)
        if len(self._batch) >= MAX_BATCH:
            self._flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.gather_s, self._flush)
        # Shielded: a request given up by its client must not cancel the batch's statement.
        await asyncio.shield(pending.done)

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._batch = self._batch, []
        if batch:
            task = asyncio.create_task(self._insert(batch))
            self._flushing.add(task)
            task.add_done_callback(self._flushing.discard)

    async def _insert(self, batch: list[_Pending]) -> None:
        # One row per (bot, update id): a statement may not touch a row twice. A repeat in the
        # same batch (Telegram retrying a slow answer) is answered with the first.
        unique: dict[tuple[int, int], _Pending] = {}
        for p in batch:
            unique.setdefault((p.bot_id, p.update.update_id), p)
        rows = list(unique.values())
        try:
            if self.citus:
                await self._per_bot(rows)
                _settle(batch, None)
                return
            await self.pool.fetchrow(
                INSERT_GATHERED,
                [p.bot_id for p in rows],
                [p.update.update_id for p in rows],
                [p.update.kind for p in rows],
                [p.update.chat_key for p in rows],
                [p.text for p in rows],
                CHANNEL,
                self.wake_payload,
            )
        except (asyncpg.DataError, asyncpg.IntegrityConstraintViolationError):
            # One row was refused (a \u0000 in a string, a bot removed a moment ago): store
            # them one by one, so only that one fails.
            await self._one_by_one(batch)
            return
        except BaseException as exc:
            _settle(batch, exc)
            if not isinstance(exc, Exception):
                raise
            return
        _settle(batch, None)

    async def _per_bot(self, rows: list[_Pending]) -> None:
        """On Citus: one statement per bot, each on that bot's shard alone (a multi-bot insert
        would go through the coordinator), then the wake-up."""
        by_bot: dict[int, list[_Pending]] = {}
        for p in rows:
            by_bot.setdefault(p.bot_id, []).append(p)
        for bot_id, mine in by_bot.items():
            if len(mine) <= VALUES_MOST:
                values = [
                    v
                    for p in mine
                    for v in (p.update.update_id, p.update.kind, p.update.chat_key, p.text)
                ]
                await self.pool.execute(insert_text_values(len(mine)), bot_id, *values)
                continue
            await self.pool.execute(
                INSERTS[True].many_text,
                bot_id,
                [p.update.update_id for p in mine],
                [p.update.kind for p in mine],
                [p.update.chat_key for p in mine],
                [p.text for p in mine],
            )
        await self.pool.execute(NOTIFY, CHANNEL, self.wake_payload)

    async def _one_by_one(self, batch: list[_Pending]) -> None:
        for p in batch:
            if p.done.done():
                continue
            try:
                await self.pool.execute(
                    INSERTS[self.citus].text,
                    p.bot_id,
                    p.update.update_id,
                    p.update.kind,
                    p.update.chat_key,
                    p.text,
                )
            except Exception as exc:
                _settle([p], exc)
            else:
                _settle([p], None)
        await self.pool.execute(NOTIFY, CHANNEL, self.wake_payload)

    async def close(self) -> None:
        """Store what is gathered now and wait for the batches under way."""
        self._flush()
        if self._flushing:
            await asyncio.gather(*self._flushing, return_exceptions=True)


def _settle(batch: list[_Pending], exc: BaseException | None) -> None:
    for p in batch:
        if p.done.done():
            continue
        if exc is None:
            p.done.set_result(None)
        else:
            p.done.set_exception(exc)
