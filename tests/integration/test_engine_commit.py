"""The worker's commit: a handler's independent writes ride in the done mark's one statement."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from sponsorbot.engine import inbox, outbox
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.routing import Router
from sponsorbot.engine.unit import UnitOfWork
from sponsorbot.engine.worker import Worker, _LostClaim
from sponsorbot.features.people import SEEN
from sponsorbot.features.stats.events import INSERT as EVENTS_INSERT
from sponsorbot.telegram import BotApi

BOT = 7
USER = 4242


@pytest.fixture
async def claimed(pool: asyncpg.Pool) -> inbox.InboxRow:
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES ($1, 'commit_bot', '', 'xxxx', 'polling', 'p', '')",
        BOT,
    )
    update = {"update_id": 1, "message": {"from": {"id": USER}, "chat": {"id": USER}}}
    assert await inbox.store_update(pool, BOT, update)
    [row] = await inbox.claim(pool, [BOT], 1, 60.0)
    return row


def worker(pool: asyncpg.Pool, *, in_steps: bool = False) -> Worker:
    made = Worker(pool, Router(), Notifier(), BotApi("http://127.0.0.1:9"), dict)
    # The commit as Citus runs it (single-shard steps in one transaction, inbox.MARK_DONE);
    # its statements are plain SQL, so it runs on one server too.
    made._each_bot = in_steps
    return made


def unit(row: inbox.InboxRow, *, with_transaction: bool) -> UnitOfWork:
    uow = UnitOfWork(BOT, inbox_id=row.id)
    if with_transaction:
        uow.write_in_order("UPDATE bots SET username = 'renamed_bot' WHERE id = $1", BOT)
    uow.write_alone(SEEN, BOT, USER, "fa", "sara_k", "Sara", None)
    uow.write_alone(
        EVENTS_INSERT,
        BOT,
        ["started", "gate_shown"],
        [USER, USER],
        [None, None],
        [None, None],
        [None, {"missing": [-1001, -1002]}],
    )
    uow.send(USER, "sendMessage", {"text": "join first"})
    return uow


async def state(pool: asyncpg.Pool) -> dict[str, Any]:
    return {
        "status": await pool.fetchval("SELECT status FROM inbox"),
        "people": await pool.fetch("SELECT user_id, language FROM people"),
        "events": [r["kind"] for r in await pool.fetch("SELECT kind FROM events ORDER BY id")],
        "outbox": await pool.fetchval("SELECT count(*) FROM outbox"),
        "bot": await pool.fetchval("SELECT username FROM bots"),
    }


@pytest.mark.parametrize("in_steps", [False, True])
@pytest.mark.parametrize("with_transaction", [False, True])
async def test_writes_calls_and_the_done_mark_commit_together(
    pool: asyncpg.Pool, claimed: inbox.InboxRow, with_transaction: bool, in_steps: bool
) -> None:
    made = worker(pool, in_steps=in_steps)
    await made._commit(claimed, unit(claimed, with_transaction=with_transaction))
    after = await state(pool)
    assert after["status"] == "done"
    assert [(r["user_id"], r["language"]) for r in after["people"]] == [(USER, "fa")]
    assert after["events"] == ["started", "gate_shown"]
    assert after["outbox"] == 1
    assert after["bot"] == ("renamed_bot" if with_transaction else "commit_bot")
    data = await pool.fetchval("SELECT data FROM events WHERE kind = 'gate_shown'")
    assert data == {"missing": [-1001, -1002]}


@pytest.mark.parametrize("in_steps", [False, True])
@pytest.mark.parametrize("with_transaction", [False, True])
async def test_a_lost_claim_commits_none_of_the_writes(
    pool: asyncpg.Pool, claimed: inbox.InboxRow, with_transaction: bool, in_steps: bool
) -> None:
    # Our lock expired and another worker claimed the update again (attempt 2).
    await pool.execute("UPDATE inbox SET attempts = attempts + 1")
    made = worker(pool, in_steps=in_steps)
    with pytest.raises(_LostClaim):
        await made._commit(claimed, unit(claimed, with_transaction=with_transaction))
    after = await state(pool)
    assert after == {
        "status": "processing",
        "people": [],
        "events": [],
        "outbox": 0,
        "bot": "commit_bot",
    }


@pytest.mark.parametrize("calls", [1, outbox.VALUES_MOST, outbox.VALUES_MOST + 1])
async def test_both_commits_queue_the_calls_in_order_and_answer_alike(
    pool: asyncpg.Pool, claimed: inbox.InboxRow, calls: int
) -> None:
    """The steps' result is the one statement's: new ids in call order, older due rows of the
    chats, and whether the person has another update due (rows of VALUES up to VALUES_MOST
    calls, from arrays past it)."""
    answers = []
    for in_steps in (False, True):
        await pool.execute("UPDATE inbox SET status = 'processing'")
        await pool.execute("DELETE FROM outbox")
        await pool.execute(
            "INSERT INTO outbox (bot_id, chat_id, method, params, priority, inbox_id)"
            " VALUES ($1, $2, 'sendMessage', '{}', 0, NULL)",
            BOT,
            USER,
        )
        uow = UnitOfWork(BOT, inbox_id=claimed.id)
        for n in range(calls):
            uow.send(USER, "sendMessage", {"text": f"part {n}"})
        committed = await worker(pool, in_steps=in_steps)._commit(claimed, uow)
        texts = await pool.fetch(
            "SELECT id, params->>'text' AS text FROM outbox WHERE inbox_id = $1 ORDER BY id",
            claimed.id,
        )
        assert [r["text"] for r in texts] == [f"part {n}" for n in range(calls)]
        assert committed["ids"] == [r["id"] for r in texts]
        older = await pool.fetchval("SELECT min(id) FROM outbox")
        assert older in committed["before"]
        answers.append((committed["done"], committed["next"]))
    assert answers == [(1, False), (1, False)]
