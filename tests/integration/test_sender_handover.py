"""Hand-over of fresh outbox rows to a sender: taken once, whatever order the reads come in."""

from __future__ import annotations

import asyncio

import asyncpg

from sponsorbot.engine import outbox
from sponsorbot.engine.bots import ActiveBot, BotLink
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.outbox import BatchRecord, OutboxRow, Outcome
from sponsorbot.engine.ratelimit import RateLimiter
from sponsorbot.engine.sender import Sender
from sponsorbot.engine.unit import BotInfo
from sponsorbot.telegram import BotApi

TOKEN = "123456:" + "A" * 35


async def idle(_bot_id: int) -> None:
    return None


def sender(pool: asyncpg.Pool) -> Sender:
    bot = ActiveBot(BotInfo(7, "handover_bot", "webhook", "active"), TOKEN)
    link = BotLink(pool, bot, BotApi("http://127.0.0.1:9"), Notifier(), idle)
    made = Sender(link, RateLimiter(), lease=("send:7", "me"))
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
    s._batch.outcomes.append(Outcome(1, "sent", None, 99))
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
