"""The clean-up keeps pace with intake and has a retention for every table that grows (ADR 0014)."""

from __future__ import annotations

import asyncpg

from sponsorbot.engine import janitor

BOT = 4242
DAY = 86400.0


async def add_bot(pool: asyncpg.Pool) -> None:
    await pool.execute(
        "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
        " webhook_secret_hash) VALUES ($1, 'clean_bot', '', 'xxxx', 'polling', 'p', '')",
        BOT,
    )


async def old_queue_rows(pool: asyncpg.Pool, n: int, age: str) -> None:
    """`n` done updates and `n` sent messages that finished `age` ago."""
    await pool.execute(
        "INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, status, handled_at)"
        " SELECT $1, m.top + g, 'message', g, '{}', 'done', now() - $3::text::interval"
        " FROM generate_series(1, $2) g, (SELECT coalesce(max(update_id), 0) AS top FROM inbox) m",
        BOT,
        n,
        age,
    )
    await pool.execute(
        "INSERT INTO outbox (bot_id, chat_id, method, params, status, sent_at)"
        " SELECT $1, g, 'sendMessage', '{}', 'sent', now() - $3::text::interval"
        " FROM generate_series(1, $2) g",
        BOT,
        n,
        age,
    )


async def test_one_run_removes_more_than_the_old_daily_pace_allowed_per_run(
    pool: asyncpg.Pool,
) -> None:
    """H2: at most 50 batches of 1000 per table and run; a run now goes until it is done."""
    await add_bot(pool)
    await old_queue_rows(pool, 60_000, "8 days")
    await old_queue_rows(pool, 10, "1 day")
    deleted = await janitor.sweep(pool, janitor.engine_sweeps(7 * DAY, 30 * DAY))
    assert deleted["inbox"] == 60_000 and deleted["outbox"] == 60_000
    assert await pool.fetchval("SELECT count(*) FROM inbox") == 10
    assert await pool.fetchval("SELECT count(*) FROM outbox") == 10


async def test_a_spent_budget_leaves_the_rest_for_the_next_run(pool: asyncpg.Pool) -> None:
    await add_bot(pool)
    await old_queue_rows(pool, 3000, "8 days")
    sweeps = janitor.engine_sweeps(7 * DAY, 30 * DAY)
    first = await janitor.sweep(pool, sweeps, batch=1000, budget_s=0.0)
    assert first["inbox"] + first["outbox"] <= 1000
    second = await janitor.sweep(pool, sweeps, batch=1000)
    assert first["inbox"] + second["inbox"] == 3000
    assert first["outbox"] + second["outbox"] == 3000


async def test_dead_updates_are_kept_longer_and_then_go(pool: asyncpg.Pool) -> None:
    """H2: dead rows were kept for ever."""
    await add_bot(pool)
    for update_id, age in ((1, "10 days"), (2, "40 days")):
        await pool.execute(
            "INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, status, handled_at)"
            " VALUES ($1, $2, 'message', 1, '{}', 'dead', now() - $3::text::interval)",
            BOT,
            update_id,
            age,
        )
    await janitor.sweep(pool, janitor.engine_sweeps(7 * DAY, 30 * DAY))
    left = await pool.fetch("SELECT update_id FROM inbox")
    assert [r["update_id"] for r in left] == [1]


async def test_a_reference_a_waiting_delete_needs_is_kept(pool: asyncpg.Pool) -> None:
    """M12: refs went after the retention even when an auto-delete due later still used them."""
    await add_bot(pool)
    for ref in ("needed", "done"):
        await pool.execute(
            "INSERT INTO message_refs (bot_id, ref, chat_id, message_id, created_at)"
            " VALUES ($1, $2, 1, 10, now() - interval '3 days')",
            BOT,
            ref,
        )
    await pool.execute(
        "INSERT INTO outbox (bot_id, chat_id, method, params, uses_ref, not_before)"
        " VALUES ($1, 1, 'deleteMessage', '{}', 'needed', now() + interval '1 day')",
        BOT,
    )
    await janitor.sweep(pool, janitor.engine_sweeps(1 * DAY, 30 * DAY))
    left = await pool.fetch("SELECT ref FROM message_refs")
    assert [r["ref"] for r in left] == ["needed"]
