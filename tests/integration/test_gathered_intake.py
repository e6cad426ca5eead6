"""Webhook updates gathered into one statement (engine/gathered.py), on the real database."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import orjson
import pytest

from sponsorbot.db.pool import connect
from sponsorbot.engine import gathered, outbox
from sponsorbot.engine.gathered import GatheredInserts
from sponsorbot.engine.notify import CHANNEL
from sponsorbot.engine.updates import classify

BOTS = (71, 72)


class CountingPool:
    """The test's real pool, counting the statements sent through it."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.statements = 0

    async def fetchrow(self, *args: Any) -> Any:
        self.statements += 1
        return await self.pool.fetchrow(*args)

    async def execute(self, *args: Any) -> Any:
        self.statements += 1
        return await self.pool.execute(*args)


def _update(update_id: int, user: int, text: str = "hi") -> bytes:
    message = {"message_id": update_id, "from": {"id": user}, "chat": {"id": user}, "text": text}
    return orjson.dumps({"update_id": update_id, "message": message})


async def _store(inserts: GatheredInserts, bot_id: int, raw: bytes) -> None:
    await inserts.store(bot_id, classify(orjson.loads(raw)), raw.decode())


@pytest.fixture
async def bots(pool: asyncpg.Pool) -> None:
    for bot_id in BOTS:
        await pool.execute(
            "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
            " webhook_secret_hash) VALUES ($1, $2, '', 'xxxx', 'webhook', $3, '')",
            bot_id,
            f"bot{bot_id}",
            f"{bot_id:032d}",
        )


async def test_updates_arriving_together_are_one_statement_in_arrival_order(
    pool: asyncpg.Pool, db_dsn: str, bots: None
) -> None:
    heard: list[str] = []
    listener = await connect(db_dsn)
    await listener.add_listener(CHANNEL, lambda *args: heard.append(args[3]))
    counting = CountingPool(pool)
    inserts = GatheredInserts(counting, "api-1/inbox")
    raws = [(BOTS[n % 2], _update(100 + n, 500 + n % 3)) for n in range(12)]
    await asyncio.gather(*(_store(inserts, bot_id, raw) for bot_id, raw in raws))
    assert counting.statements == 1
    rows = await pool.fetch("SELECT bot_id, update_id, payload FROM inbox ORDER BY id")
    assert [(r["bot_id"], r["update_id"]) for r in rows] == [
        (bot_id, 100 + n) for n, (bot_id, _) in enumerate(raws)
    ]
    # The payload is the JSON that came, as jsonb (the claim reads it as objects).
    assert rows[0]["payload"] == orjson.loads(raws[0][1])
    for _ in range(250):
        if heard:
            break
        await asyncio.sleep(0.02)
    assert heard == ["api-1/inbox"]
    await listener.close()


async def test_each_store_returns_only_after_its_row_committed(
    pool: asyncpg.Pool, bots: None
) -> None:
    # A window long enough that the count below surely runs inside it, however slow the machine.
    inserts = GatheredInserts(pool, "api-1/inbox", gather_s=0.5)
    task = asyncio.ensure_future(_store(inserts, BOTS[0], _update(1, 9)))
    await asyncio.sleep(0)
    assert not task.done()
    assert await pool.fetchval("SELECT count(*) FROM inbox") == 0
    await task
    assert await pool.fetchval("SELECT count(*) FROM inbox") == 1


async def test_a_repeat_in_the_same_batch_and_a_later_one_are_stored_once(
    pool: asyncpg.Pool, bots: None
) -> None:
    inserts = GatheredInserts(pool, "api-1/inbox")
    raw = _update(7, 9)
    await asyncio.gather(_store(inserts, BOTS[0], raw), _store(inserts, BOTS[0], raw))
    await _store(inserts, BOTS[0], raw)
    assert await pool.fetchval("SELECT count(*) FROM inbox") == 1


async def test_text_postgresql_cannot_store_refuses_that_update_only(
    pool: asyncpg.Pool, bots: None
) -> None:
    inserts = GatheredInserts(pool, "api-1/inbox")
    good = [_update(n, 10 + n) for n in range(3)]
    bad = _update(99, 99, text="nul \u0000 inside")
    outcomes = await asyncio.gather(
        *(_store(inserts, BOTS[0], raw) for raw in [good[0], bad, *good[1:]]),
        return_exceptions=True,
    )
    assert [type(o) for o in outcomes].count(type(None)) == 3
    assert isinstance(outcomes[1], asyncpg.DataError)
    stored = await pool.fetch("SELECT update_id FROM inbox ORDER BY id")
    assert [r["update_id"] for r in stored] == [0, 1, 2]


async def test_a_full_batch_goes_without_waiting_out_the_window(
    pool: asyncpg.Pool, bots: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gathered, "MAX_BATCH", 4)
    inserts = GatheredInserts(pool, "api-1/inbox", gather_s=30.0)
    async with asyncio.timeout(5):
        await asyncio.gather(*(_store(inserts, BOTS[0], _update(n, n)) for n in range(4)))
    assert await pool.fetchval("SELECT count(*) FROM inbox") == 4


async def test_a_removed_bot_fails_its_own_update_only(pool: asyncpg.Pool, bots: None) -> None:
    inserts = GatheredInserts(pool, "api-1/inbox")
    # Bot 999 does not exist (removed while its webhook path was still cached).
    outcomes = await asyncio.gather(
        _store(inserts, BOTS[0], _update(1, 1)),
        _store(inserts, 999, _update(2, 2)),
        return_exceptions=True,
    )
    assert outcomes[0] is None
    assert isinstance(outcomes[1], asyncpg.ForeignKeyViolationError)
    assert await pool.fetchval("SELECT count(*) FROM inbox") == 1


async def test_a_database_failure_reaches_every_request_of_the_batch(
    pool: asyncpg.Pool, bots: None
) -> None:
    inserts = GatheredInserts(pool, "api-1/inbox")
    await pool.close()
    outcomes = await asyncio.gather(
        *(_store(inserts, BOTS[0], _update(n, n)) for n in range(3)), return_exceptions=True
    )
    assert all(isinstance(o, asyncpg.InterfaceError) for o in outcomes)


async def test_close_stores_what_was_gathered(pool: asyncpg.Pool, bots: None) -> None:
    inserts = GatheredInserts(pool, "api-1/inbox", gather_s=30.0)
    task = asyncio.ensure_future(_store(inserts, BOTS[0], _update(1, 1)))
    await asyncio.sleep(0)
    await inserts.close()
    await task
    assert await pool.fetchval("SELECT count(*) FROM inbox") == 1


@pytest.mark.parametrize("per_bot", [3, outbox.VALUES_MOST + 2])
async def test_the_citus_form_stores_each_bots_updates_in_arrival_order(
    pool: asyncpg.Pool, bots: None, per_bot: int
) -> None:
    """On Citus one statement per bot (rows of VALUES up to VALUES_MOST, arrays past it), each
    bot's updates in the order they came; its statements are plain SQL, so they run here too."""
    counting = CountingPool(pool)
    inserts = GatheredInserts(counting, "api-1/inbox", citus=True)
    raws = [(BOTS[n % 2], _update(300 + n, 700 + n % 3)) for n in range(2 * per_bot)]
    await asyncio.gather(*(_store(inserts, bot_id, raw) for bot_id, raw in raws))
    assert counting.statements == len(BOTS) + 1  # one insert per bot, then the wake-up
    for bot_id in BOTS:
        rows = await pool.fetch("SELECT update_id FROM inbox WHERE bot_id = $1 ORDER BY id", bot_id)
        assert [r["update_id"] for r in rows] == [
            300 + n for n, (bot, _) in enumerate(raws) if bot == bot_id
        ]
