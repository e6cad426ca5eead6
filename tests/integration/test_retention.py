"""Every feature table that grows has a retention (the security review, H2 and M5)."""

from __future__ import annotations

import asyncpg

from sponsorbot.engine.janitor import Sweep, sweep
from sponsorbot.features.accounts import retention
from sponsorbot.features.broadcasts.queries import DELETE_RECIPIENTS
from sponsorbot.features.gate.chats import DELETE_DECLINED
from tests.integration.test_janitor import BOT, add_bot

DAY = 86400.0


async def test_old_audit_entries_and_sign_in_failures_go_recent_ones_stay(
    pool: asyncpg.Pool,
) -> None:
    """H2/M5: anonymous sign-in attempts wrote audit rows and failures kept for ever."""
    for age in ("2 days", "400 days"):
        await pool.execute(
            "INSERT INTO audit_log (at, actor, kind) VALUES (now() - $1::text::interval,"
            " 'anonymous', 'signin.failed')",
            age,
        )
        await pool.execute(
            "INSERT INTO signin_failures (email, address, at)"
            " VALUES ('a@b.c', '1.2.3.4', now() - $1::text::interval)",
            age,
        )
    deleted = await sweep(pool, retention.sweeps(365 * DAY))
    assert deleted["audit_log"] == 1 and deleted["signin_failures"] == 1
    assert await pool.fetchval("SELECT count(*) FROM audit_log") == 1
    assert await pool.fetchval("SELECT count(*) FROM signin_failures") == 1


async def test_declined_requests_and_old_broadcast_recipients_go(pool: asyncpg.Pool) -> None:
    """H2: declined join requests and every broadcast's recipient rows were kept for ever."""
    await add_bot(pool)
    for user, age in ((1, "2 days"), (2, "40 days")):
        await pool.execute(
            "INSERT INTO join_requests (bot_id, chat_id, user_id, status, updated_at)"
            " VALUES ($1, -100, $2, 'declined', now() - $3::text::interval)",
            BOT,
            user,
            age,
        )
    ids = []
    for age in ("2 days", "40 days"):
        ids.append(
            await pool.fetchval(
                "INSERT INTO broadcasts (bot_id, title, method, params, post, audience,"
                " created_by, status, finished_at, sent)"
                " VALUES ($1, 'News', 'sendMessage', '{}', '{}', '{}', 'test', 'done',"
                " now() - $2::text::interval, 2) RETURNING id",
                BOT,
                age,
            )
        )
        await pool.execute(
            "INSERT INTO broadcast_recipients (bot_id, broadcast_id, user_id, status)"
            " SELECT $2, $1, g, 'sent' FROM generate_series(1, 2) g",
            ids[-1],
            BOT,
        )
    await sweep(
        pool,
        [Sweep("join", DELETE_DECLINED), Sweep("recipients", DELETE_RECIPIENTS)],
    )
    assert [r["user_id"] for r in await pool.fetch("SELECT user_id FROM join_requests")] == [1]
    kept = await pool.fetch("SELECT DISTINCT broadcast_id FROM broadcast_recipients")
    assert [r["broadcast_id"] for r in kept] == [ids[0]]
    # The counts of the old broadcast stay.
    assert await pool.fetchval("SELECT sent FROM broadcasts WHERE id = $1", ids[1]) == 2


async def test_a_key_rotation_moves_shop_keys_to_the_new_key(pool: asyncpg.Pool) -> None:
    """L4 (rotation): TronGrid keys sealed like bot tokens move to the newest key, so the old
    one can be dropped without losing them."""
    from sponsorbot.engine.token_box import TokenBox
    from sponsorbot.features.shop.service import reseal_keys

    old_key, new_key = b"o" * 32, b"n" * 32
    await add_bot(pool)
    await pool.execute(
        "INSERT INTO shop_settings (bot_id, api_key) VALUES ($1, $2)",
        BOT,
        TokenBox(old_key).seal("trongrid-key-1234"),
    )
    assert await reseal_keys(pool, TokenBox(new_key + b"," + old_key)) == 1
    sealed = await pool.fetchval("SELECT api_key FROM shop_settings WHERE bot_id = $1", BOT)
    assert TokenBox(new_key).open(bytes(sealed)) == "trongrid-key-1234"
