"""Group commit: the done marks of updates that finish together go to PostgreSQL together.

Each finished update's commit is one statement (`inbox.DONE_AND_ENQUEUE`, or `done_with(...)`
with its writes in front). Run alone, each pays a round trip and a durable commit of its own,
which cost more than a small statement does. Here the statements of the updates that finish
within `gather_s` of each other (and those that finished while the last group was being
written) run as one pipelined batch on one connection, in one transaction: one round trip and
one WAL flush for all of them (docs/adr/0024-group-commit.md).

Each update keeps its own outcome. A done mark that no longer matches (another worker took the
update) returns `done = 0` for that update alone. If the batch fails as a whole (a statement
raises, the connection drops), nothing of it committed, and each statement is run again alone,
so one update's error is that update's only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from sponsorbot.db.errors import DB_ERRORS
from sponsorbot.db.pool import on_citus

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Waiting:
    sql: str
    args: Sequence[Any]
    bot_id: int
    result: asyncio.Future[asyncpg.Record | None]


@dataclass(slots=True, kw_only=True)
class GroupCommit:
    """Runs commit statements in batches; `run` returns one statement's row, as `fetchrow`.

    `gather_s`: how long the first statement of a batch waits for others (0: only those that
    finish in the same turn of the event loop). `most`: the largest batch. `per_bot`: a batch
    holds one bot's statements only (Citus: one bot's rows live on one node, so the batch's
    transaction stays on one node instead of becoming a distributed one); None: asked of the
    database once, at the first batch.
    """

    pool: asyncpg.Pool = field(kw_only=False)
    gather_s: float = 0.002
    most: int = 64
    in_flight: int = 2
    per_bot: bool | None = None
    # Counted for the tests: statements, and the round trips they took (a batch, or one
    # statement run alone).
    statements: int = field(default=0, init=False)
    trips: int = field(default=0, init=False)
    _waiting: list[_Waiting] = field(default_factory=list, init=False)
    _timer: asyncio.TimerHandle | None = field(default=None, init=False)
    # The batches being written (kept here so that they are not collected mid-write).
    _tasks: set[asyncio.Task[None]] = field(default_factory=set, init=False)

    async def run(self, sql: str, args: Sequence[Any], bot_id: int) -> asyncpg.Record | None:
        """Run `sql` with `args` in the next batch; its row, or its error as if run alone."""
        loop = asyncio.get_running_loop()
        waiting = _Waiting(sql, args, bot_id, loop.create_future())
        self._waiting.append(waiting)
        if len(self._waiting) >= self.most:
            self._write_now()
        elif self._timer is None and len(self._tasks) < self.in_flight:
            self._timer = loop.call_later(self.gather_s, self._write_now)
        return await waiting.result

    def _write_now(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._waiting and len(self._tasks) < self.in_flight:
            taken, self._waiting = self._waiting[: self.most], self._waiting[self.most :]
            task = asyncio.create_task(self._write(taken))
            self._tasks.add(task)
            task.add_done_callback(self._written)

    def _written(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        # What gathered while this batch was written goes at once: it has waited already.
        if self._waiting:
            self._write_now()

    async def _write(self, taken: list[_Waiting]) -> None:
        per_bot = self.per_bot
        if per_bot is None:
            try:
                per_bot = self.per_bot = await on_citus(self.pool)
            except DB_ERRORS:
                per_bot = True  # not known yet: the batches that are right on either
        batches: dict[tuple[str, int], list[_Waiting]] = {}
        for waiting in taken:
            key = (waiting.sql, waiting.bot_id if per_bot else 0)
            batches.setdefault(key, []).append(waiting)
        await asyncio.gather(*(self._batch(sql, batch) for (sql, _), batch in batches.items()))

    async def _batch(self, sql: str, batch: list[_Waiting]) -> None:
        self.statements += len(batch)
        if len(batch) > 1:
            self.trips += 1
            try:
                async with self.pool.acquire() as conn:
                    rows = await conn.fetchmany(sql, [w.args for w in batch])
            except asyncio.CancelledError:
                _cancel(batch)
                raise
            except Exception as exc:  # each statement is tried again alone, below
                log.debug("a batch of %d commits failed, each runs alone: %s", len(batch), exc)
            else:
                for waiting, row in zip(batch, rows, strict=True):
                    _settle(waiting, row, None)
                return
        await asyncio.gather(*(self._alone(sql, w) for w in batch))

    async def _alone(self, sql: str, waiting: _Waiting) -> None:
        self.trips += 1
        try:
            row = await self.pool.fetchrow(sql, *waiting.args)
        except asyncio.CancelledError:
            _cancel([waiting])
            raise
        except Exception as exc:  # the statement's caller handles it, as if run alone
            _settle(waiting, None, exc)
        else:
            _settle(waiting, row, None)


def _settle(waiting: _Waiting, row: asyncpg.Record | None, exc: BaseException | None) -> None:
    if waiting.result.done():
        return
    if exc is not None:
        waiting.result.set_exception(exc)
    else:
        waiting.result.set_result(row)


def _cancel(batch: list[_Waiting]) -> None:
    for waiting in batch:
        if not waiting.result.done():
            waiting.result.cancel()
