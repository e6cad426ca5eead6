"""Hand-over of fresh outbox rows to a sender: taken once, whatever order the reads come in."""

from __future__ import annotations

import asyncio

import asyncpg

from sponsorbot.db.pool import create_pool
from sponsorbot.engine import outbox
from sponsorbot.engine.bots import ActiveBot, BotLink
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.outbox import BatchRecord, OutboxRow, Outcome
from sponsorbot.engine.ratelimit import RateLimiter
from sponsorbot.engine.sender import Ledger, Sender
from sponsorbot.engine.unit import BotInfo
from sponsorbot.telegram import BotApi

TOKEN = "123456:" + "A" * 35


async def idle(_bot_id: int) -> None:
    return None


def sender(pool: asyncpg.Pool, ledger: Ledger | None = None) -> Sender:
    bot = ActiveBot(BotInfo(7, "handover_bot", "webhook", "active"), TOKEN)
    link = BotLink(pool, bot, BotApi("http://127.0.0.1:9"), Notifier(), idle)
    made = Sender(link, RateLimiter(), lease=("send:7", "me"), ledger=ledger)
    made._lost = asyncio.Event()  # as run() sets it: holding the lease
    return made


def row(id_: int, chat: int = 5) -> OutboxRow:
    return OutboxRow(id_, chat, "sendMessage", {"chat_id": chat, "text": "hi"}, None, None, 0, None)


async def test_a_row_read_from_the_outbox_first_is_not_taken_again(pool: asyncpg.Pool) -> None:
    s = sender(pool)
    # The sender's own read came back with row 1 before the worker's hand-over of it.
    s._take(row(1))
    assert s.offer([row(1), row(2)], [])
    assert [r.id for r in s._queues[5]] == [1, 2]
    assert s.handed == 1


async def test_a_row_already_sent_and_recorded_is_not_taken_again(pool: asyncpg.Pool) -> None:
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES (7, 'handover_bot', '', 'xxxx', 'webhook', 'p', '')"
    )
    s = sender(pool)
    s._take(row(1))
    s._queues[5].popleft()
    s.ledger.batch.outcomes.append(Outcome(1, "sent", None, 99))
    await s._flush()
    assert s.offer([row(1)], [])
    assert not s._queues.get(5)
    assert s.handed == 0


async def test_older_rows_of_the_chat_not_in_hand_refuse_the_hand_over(
    pool: asyncpg.Pool,
) -> None:
    s = sender(pool)
    assert not s.offer([row(9)], [3])
    s._take(row(3))
    assert s.offer([row(9)], [3])
    assert [r.id for r in s._queues[5]] == [3, 9]
    s._lost.set()  # type: ignore[union-attr]
    assert not s.offer([row(10)], [])


async def test_one_batch_may_remember_the_same_reference_twice(pool: asyncpg.Pool) -> None:
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES (7, 'handover_bot', '', 'xxxx', 'webhook', 'p', '')"
    )
    batch = BatchRecord([], [("gate:5:ab", 5, 10), ("gate:5:ab", 5, 11)], [])
    await outbox.record(pool, 7, batch)
    assert await pool.fetchval("SELECT message_id FROM message_refs WHERE ref = 'gate:5:ab'") == 11


async def test_outcomes_a_stopped_sender_could_not_write_are_written_by_the_next(
    pool: asyncpg.Pool, db_dsn: str
) -> None:
    """M3: a sender stopping on a database error dropped its unwritten outcomes, and the next
    holder of the bot sent those messages again."""
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES (7, 'handover_bot', '', 'xxxx', 'webhook', 'p', '')"
    )
    await pool.execute(
        "INSERT INTO leases (name, owner, expires_at) VALUES ('send:7', 'me', now() + '1 hour')"
    )
    sent_id = await pool.fetchval(
        "INSERT INTO outbox (bot_id, chat_id, method, params) "
        "VALUES (7, 5, 'sendMessage', '{}') RETURNING id"
    )
    ledger = Ledger()
    failing = await create_pool(db_dsn, role="failing", min_size=1, max_size=1)
    first = sender(failing, ledger)
    ledger.batch.outcomes.append(Outcome(sent_id, "sent", None, 99))
    # The first sender's database goes away (its pool is gone, as in a lost connection).
    await failing.close()
    assert not await first._flush()
    assert ledger.ids() == [sent_id]

    second = sender(pool, ledger)
    second._in_hand.update(ledger.ids())  # as run() starts
    assert await second._fetch() == 0  # the row is not read again, so not sent again
    assert await second._flush()
    assert ledger.ids() == []
    status = await pool.fetchval("SELECT status FROM outbox WHERE id = $1", sent_id)
    assert status == "sent"


async def test_outcomes_of_a_sender_whose_lease_went_elsewhere_are_still_written(
    pool: asyncpg.Pool,
) -> None:
    """M3: with no successor in this process (another worker took the lease), the manager
    writes what its stopped sender sent, before the new holder's first second is over."""
    from sponsorbot.engine.bots import BotService
    from sponsorbot.engine.leases import Leases
    from sponsorbot.engine.manager import BotManager
    from sponsorbot.engine.token_box import TokenBox

    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES (7, 'handover_bot', '', 'xxxx', 'webhook', 'p', '')"
    )
    sent_id = await pool.fetchval(
        "INSERT INTO outbox (bot_id, chat_id, method, params) "
        "VALUES (7, 5, 'sendMessage', '{}') RETURNING id"
    )
    api = BotApi("http://127.0.0.1:9")
    service = BotService(pool, api, TokenBox(b"k" * 32), None)
    manager = BotManager(pool, api, service, Leases(pool, "me"), Notifier())
    manager.ledgers[7] = Ledger()
    manager.ledgers[7].batch.outcomes.append(Outcome(sent_id, "sent", None, 99))
    assert await manager._write_orphans() is False
    assert manager.ledgers[7].ids() == []
    assert await pool.fetchval("SELECT status FROM outbox WHERE id = $1", sent_id) == "sent"


async def test_the_record_in_steps_writes_what_the_one_statement_writes(
    pool: asyncpg.Pool,
) -> None:
    """outbox.record as Citus runs it (single-shard steps, FINISH_STEP) and as one statement:
    the same outcomes, references (more than VALUES_MOST of them), blocked people and counts."""
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES (7, 'handover_bot', '', 'xxxx', 'webhook', 'p', '')"
    )
    written = []
    for in_steps in (False, True):
        for table in ("outbox", "message_refs", "people", "send_stats"):
            await pool.execute(f"DELETE FROM {table}")
        ids = [
            await pool.fetchval(
                "INSERT INTO outbox (bot_id, chat_id, method, params)"
                " VALUES (7, $1, 'sendMessage', '{}') RETURNING id",
                chat,
            )
            for chat in (5, 6, 8)
        ]
        refs = [(f"gate:{n}", n, 100 + n) for n in range(outbox.VALUES_MOST + 4)]
        outcomes = [
            Outcome(ids[0], "sent", None, 41),
            Outcome(ids[1], "failed", "Forbidden: bot was blocked by the user"),
            Outcome(ids[2], "failed", "Bad Request: chat not found"),
        ]
        await outbox.record(pool, 7, BatchRecord(outcomes, refs, [6, 9], 1), citus=in_steps)
        written.append(
            (
                [
                    tuple(r)
                    for r in await pool.fetch(
                        "SELECT chat_id, status, error, result_message_id, attempts, "
                        "sent_at IS NOT NULL FROM outbox ORDER BY id"
                    )
                ],
                [tuple(r) for r in await pool.fetch("SELECT * FROM message_refs ORDER BY ref")],
                [
                    tuple(r)
                    for r in await pool.fetch(
                        "SELECT user_id, blocked_at IS NOT NULL FROM people ORDER BY user_id"
                    )
                ],
                [
                    tuple(r)
                    for r in await pool.fetch("SELECT sent, failed, throttled FROM send_stats")
                ],
            )
        )
    one, steps = written
    assert [r[:2] for r in steps[0]] == [(5, "sent"), (6, "failed"), (8, "failed")]
    assert len(steps[1]) == outbox.VALUES_MOST + 4
    assert steps[2] == [(6, True), (9, True)]
    assert steps[3] == [(1, 2, 1)]
    # created_at differs between the two runs; everything else is the same.
    assert steps[0] == one[0] and steps[2:] == one[2:]
    assert [r[:4] for r in steps[1]] == [r[:4] for r in one[1]]
