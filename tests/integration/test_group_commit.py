"""Group commit: updates that finish together commit in one batch, each keeping its outcome."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsorbot.engine import inbox
from sponsorbot.engine.commits import GroupCommit
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.outbox import Outcome
from sponsorbot.engine.routing import Router
from sponsorbot.engine.sender import Ledger
from sponsorbot.engine.unit import UnitOfWork
from sponsorbot.engine.worker import Worker, _LostClaim
from sponsorbot.features.people import SEEN
from sponsorbot.features.stats.events import INSERT as EVENTS_INSERT
from sponsorbot.telegram import BotApi
from tests.examples import DEV_DATABASE, examples

BOT = 8
FIRST_USER = 5000
# A write that fails when it runs: a division by zero.
FAILS = "UPDATE bots SET username = username WHERE id = $1 AND 1 / $2 = 1"


async def claim_updates(pool: asyncpg.Pool, people: int) -> list[inbox.InboxRow]:
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES ($1, 'group_bot', '', 'xxxx', 'polling', 'p', '')"
        " ON CONFLICT DO NOTHING",
        BOT,
    )
    await pool.execute("DELETE FROM inbox")
    for n in range(people):
        user = FIRST_USER + n
        update = {"update_id": n + 1, "message": {"from": {"id": user}, "chat": {"id": user}}}
        assert await inbox.store_update(pool, BOT, update)
    rows = await inbox.claim(pool, [BOT], people, 60.0)
    assert len(rows) == people
    return sorted(rows, key=lambda r: r.chat_key)


def worker(pool: asyncpg.Pool, gather_s: float = 0.05) -> Worker:
    return Worker(
        pool, Router(), Notifier(), BotApi("http://127.0.0.1:9"), dict, commit_gather_s=gather_s
    )


def unit(row: inbox.InboxRow, *, fails: bool = False) -> UnitOfWork:
    uow = UnitOfWork(BOT, inbox_id=row.id)
    uow.write_alone(SEEN, BOT, row.chat_key, "fa", None, "Visitor", None)
    uow.write_alone(EVENTS_INSERT, BOT, ["started"], [row.chat_key], [None], [None], [None])
    uow.write_alone(FAILS, BOT, 0 if fails else 1)
    uow.send(row.chat_key, "sendMessage", {"text": f"hello {row.chat_key}"})
    return uow


async def outcome(pool: asyncpg.Pool) -> dict[int, dict[str, Any]]:
    """Per person: the update's status, and how many of its writes and calls exist."""
    result = {}
    for r in await pool.fetch("SELECT chat_key, status FROM inbox"):
        user = r["chat_key"]
        result[user] = {
            "status": r["status"],
            "people": await pool.fetchval(
                "SELECT count(*) FROM people WHERE bot_id = $1 AND user_id = $2", BOT, user
            ),
            "events": await pool.fetchval(
                "SELECT count(*) FROM events WHERE bot_id = $1 AND user_id = $2", BOT, user
            ),
            "outbox": await pool.fetchval(
                "SELECT count(*) FROM outbox WHERE bot_id = $1 AND chat_id = $2", BOT, user
            ),
        }
    return result


async def commit_all(
    w: Worker, rows: list[inbox.InboxRow], units: list[UnitOfWork]
) -> list[BaseException | None]:
    async def one(row: inbox.InboxRow, uow: UnitOfWork) -> BaseException | None:
        try:
            await w._commit(row, uow)
        except Exception as exc:
            return exc
        return None

    return await asyncio.gather(*(one(r, u) for r, u in zip(rows, units, strict=True)))


async def test_updates_finishing_together_commit_in_one_batch(pool: asyncpg.Pool) -> None:
    rows = await claim_updates(pool, 6)
    w = worker(pool)
    errors = await commit_all(w, rows, [unit(r) for r in rows])
    assert errors == [None] * 6
    assert (w.commits.statements, w.commits.trips) == (6, 1)
    after = await outcome(pool)
    assert all(
        v == {"status": "done", "people": 1, "events": 1, "outbox": 1} for v in after.values()
    )
    assert len(after) == 6


async def test_a_lost_claim_in_a_batch_loses_only_its_own_writes(pool: asyncpg.Pool) -> None:
    rows = await claim_updates(pool, 4)
    lost = rows[1]
    # Our lock on one update expired and another worker claimed it again (attempt 2).
    await pool.execute("UPDATE inbox SET attempts = attempts + 1 WHERE id = $1", lost.id)
    w = worker(pool)
    errors = await commit_all(w, rows, [unit(r) for r in rows])
    assert [type(e) for e in errors] == [type(None), _LostClaim, type(None), type(None)]
    after = await outcome(pool)
    assert after.pop(lost.chat_key) == {
        "status": "processing",
        "people": 0,
        "events": 0,
        "outbox": 0,
    }
    assert all(
        v == {"status": "done", "people": 1, "events": 1, "outbox": 1} for v in after.values()
    )


async def test_an_error_in_a_batch_fails_that_update_alone(pool: asyncpg.Pool) -> None:
    rows = await claim_updates(pool, 4)
    bad = rows[2]
    units = [unit(r, fails=r is bad) for r in rows]
    w = worker(pool)
    errors = await commit_all(w, rows, units)
    assert isinstance(errors[2], asyncpg.PostgresError)
    assert [e for i, e in enumerate(errors) if i != 2] == [None, None, None]
    # The batch was tried once, then each statement alone.
    assert (w.commits.statements, w.commits.trips) == (4, 5)
    after = await outcome(pool)
    assert after.pop(bad.chat_key) == {
        "status": "processing",
        "people": 0,
        "events": 0,
        "outbox": 0,
    }
    assert all(v["status"] == "done" and v["outbox"] == 1 for v in after.values())


async def test_no_gathering_commits_at_once_and_batches_never_pass_their_size(
    pool: asyncpg.Pool,
) -> None:
    rows = await claim_updates(pool, 5)
    commits = GroupCommit(pool, gather_s=0.0, most=2, in_flight=1)
    sql = "UPDATE inbox SET status = 'done' WHERE id = $1 RETURNING id"
    results = await asyncio.gather(*(commits.run(sql, [r.id], BOT) for r in rows))
    assert [r and r["id"] for r in results] == [r.id for r in rows]
    # Five statements, at most two at a time, one batch written at a time: 2 + 2 + 1.
    assert (commits.statements, commits.trips) == (5, 3)
    alone = await commits.run("SELECT 1 AS one", [], BOT)
    assert alone is not None and alone["one"] == 1


async def test_on_citus_a_batch_holds_one_bots_statements(pool: asyncpg.Pool) -> None:
    commits = GroupCommit(pool, gather_s=0.05, per_bot=True)
    sql = "SELECT $1::bigint AS n"
    results = await asyncio.gather(*(commits.run(sql, [n], n % 2) for n in range(6)))
    assert [r and r["n"] for r in results] == list(range(6))
    assert (commits.statements, commits.trips) == (6, 2)


@settings(
    max_examples=examples(15, dev=DEV_DATABASE),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(fates=st.lists(st.sampled_from(["good", "lost", "bad"]), min_size=1, max_size=8))
async def test_every_update_in_a_batch_gets_its_own_fate(
    pool: asyncpg.Pool, fates: list[str]
) -> None:
    rows = await claim_updates(pool, len(fates))
    await pool.execute("DELETE FROM people WHERE bot_id = $1", BOT)
    await pool.execute("DELETE FROM events WHERE bot_id = $1", BOT)
    await pool.execute("DELETE FROM outbox WHERE bot_id = $1", BOT)
    for row, fate in zip(rows, fates, strict=True):
        if fate == "lost":
            await pool.execute("UPDATE inbox SET attempts = attempts + 1 WHERE id = $1", row.id)
    units = [unit(r, fails=fate == "bad") for r, fate in zip(rows, fates, strict=True)]
    errors = await commit_all(worker(pool), rows, units)
    after = await outcome(pool)
    for row, fate, error in zip(rows, fates, errors, strict=True):
        got = after[row.chat_key]
        if fate == "good":
            assert error is None
            assert got == {"status": "done", "people": 1, "events": 1, "outbox": 1}
        else:
            assert isinstance(error, _LostClaim if fate == "lost" else asyncpg.PostgresError)
            assert got == {"status": "processing", "people": 0, "events": 0, "outbox": 0}


async def sent_row(pool: asyncpg.Pool, bot_id: int) -> int:
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES ($1, $2, '', 'xxxx', 'webhook', $2, '')",
        bot_id,
        f"ledger_bot_{bot_id}",
    )
    return int(
        await pool.fetchval(
            "INSERT INTO outbox (bot_id, chat_id, method, params) "
            "VALUES ($1, 5, 'sendMessage', '{}') RETURNING id",
            bot_id,
        )
    )


async def test_senders_writes_on_one_beat_share_a_round_trip(pool: asyncpg.Pool) -> None:
    # Several bots in one batch: as on one server (on Citus a batch holds one bot's writes).
    commits = GroupCommit(pool, gather_s=0.0, per_bot=False)
    ledgers = {bot_id: Ledger(commits=commits) for bot_id in (21, 22, 23)}
    for bot_id, ledger in ledgers.items():
        ledger.batch.outcomes.append(Outcome(await sent_row(pool, bot_id), "sent", None, 9))
    await asyncio.gather(*(ledger.write(pool, bot_id) for bot_id, ledger in ledgers.items()))
    assert (commits.statements, commits.trips) == (3, 1)
    assert all(ledger.ids() == [] for ledger in ledgers.values())
    assert await pool.fetchval("SELECT count(*) FROM outbox WHERE status = 'sent'") == 3


async def test_a_stop_during_a_shared_write_neither_loses_nor_repeats_it(
    pool: asyncpg.Pool,
) -> None:
    # The batch is written 0.2 s after the write asks; the sender is stopped before that.
    commits = GroupCommit(pool, gather_s=0.2)
    ledger = Ledger(commits=commits)
    row_id = await sent_row(pool, 24)
    ledger.batch.outcomes.append(Outcome(row_id, "sent", None, 9))
    write = asyncio.create_task(ledger.write(pool, 24))
    await asyncio.sleep(0.05)
    write.cancel()
    with pytest.raises(asyncio.CancelledError):
        await write
    # The batch committed after all: nothing is kept for the next sender to write again.
    assert ledger.ids() == []
    assert await pool.fetchval("SELECT status FROM outbox WHERE id = $1", row_id) == "sent"
    assert await pool.fetchval("SELECT sum(sent) FROM send_stats WHERE bot_id = 24") == 1
