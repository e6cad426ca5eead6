"""Every feature table that grows has a retention (docs/adr/0014-retention.md)."""

from __future__ import annotations

import asyncpg

from sponsorbot.engine.janitor import Sweep, sweep
from sponsorbot.features.accounts import retention
from sponsorbot.features.broadcasts.queries import DELETE_RECIPIENTS
from sponsorbot.features.gate.chats import DELETE_DECLINED
from sponsorbot.features.shop import retention as shop_retention
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


ADD_ORDER = """
INSERT INTO shop_orders (bot_id, kind, title, user_id, price_usdt, state)
VALUES ($1, 'banner', 'Banner', 42, 10, $2) RETURNING id
"""
ADD_PAYMENT = """
INSERT INTO shop_payments (bot_id, order_id, tx_hash, status, submitted_at, decided_at)
VALUES ($1, $2, $3, $4, now() - $5::text::interval, now() - $5::text::interval)
"""
ADD_STEP = """
INSERT INTO shop_order_log (bot_id, order_id, kind, at)
VALUES ($1, $2, $3, now() - $4::text::interval) RETURNING id
"""
ADD_TRANSFER = """
INSERT INTO shop_transfers (network, tx_hash, coin, amount, to_address, block_time, state,
                            order_bot_id, order_id, credited_usdt, seen_at, decided_at)
VALUES ('mainnet', $1, 'USDT', 10, $2, now() - $4::text::interval, $3, $5, $6, $7,
        now() - $4::text::interval, now() - $4::text::interval)
"""


async def test_the_shops_refused_hashes_repeated_steps_and_returned_transfers_go(
    pool: asyncpg.Pool,
) -> None:
    """L4: the shop's tables only grew. Refused hashes go after 90 days, repeated start_failed
    and payment_unconfirmed lines after 30 days but the first of each kind, returned transfers
    after a year; credited payments and transfers, and the rest of a timeline, stay."""
    await add_bot(pool)
    stuck = await pool.fetchval(ADD_ORDER, BOT, "paid")
    done = await pool.fetchval(ADD_ORDER, BOT, "completed")
    payments = {
        "1" * 64: (stuck, "rejected", "100 days"),
        "2" * 64: (stuck, "rejected", "10 days"),
        "3" * 64: (done, "credited", "400 days"),
        "4" * 64: (done, "checking", "100 days"),
        "5" * 64: (done, "held", "100 days"),
        "6" * 64: (done, "rejected", "91 days"),
    }
    for tx_hash, (order, status, age) in payments.items():
        await pool.execute(ADD_PAYMENT, BOT, order, tx_hash, status, age)
    # A stuck order's timeline: submitted, paid, then the ad failed to start again and again.
    steps = {}
    for kind, age in [
        ("submitted", "400 days"),
        ("payment_unconfirmed", "399 days"),
        ("payment_unconfirmed", "399 days"),
        ("paid", "399 days"),
        ("start_failed", "60 days"),
        ("start_failed", "40 days"),
        ("start_failed", "31 days"),
        ("start_failed", "29 days"),
        ("start_failed", "1 day"),
    ]:
        steps[await pool.fetchval(ADD_STEP, BOT, stuck, kind, age)] = (kind, age)
    # Another order's only start_failed is its own first: first per order, not per table.
    other = await pool.fetchval(ADD_STEP, BOT, done, "start_failed", "50 days")
    address = b"\x41" + b"\x07" * 20
    for tx_hash, state, age in [
        ("a" * 64, "returned", "400 days"),
        ("b" * 64, "returned", "100 days"),
        ("c" * 64, "unattributed", "400 days"),
        ("d" * 64, "credited", "400 days"),
    ]:
        credited = (BOT, done, 10) if state == "credited" else (None, None, None)
        await pool.execute(ADD_TRANSFER, tx_hash, address, state, age, *credited)

    deleted = await sweep(pool, shop_retention.sweeps())
    assert deleted == {"shop_payments": 2, "shop_order_log": 3, "shop_transfers": 1}
    left = await pool.fetch("SELECT tx_hash FROM shop_payments ORDER BY tx_hash")
    assert [r["tx_hash"][0] for r in left] == ["2", "3", "4", "5"]
    kept = await pool.fetch("SELECT id FROM shop_order_log ORDER BY id")
    expected = [
        ("submitted", "400 days"),
        ("payment_unconfirmed", "399 days"),
        ("paid", "399 days"),
        ("start_failed", "60 days"),
        ("start_failed", "29 days"),
        ("start_failed", "1 day"),
    ]
    assert [steps[r["id"]] for r in kept if r["id"] != other] == expected
    assert other in [r["id"] for r in kept]
    states = await pool.fetch("SELECT tx_hash, state FROM shop_transfers ORDER BY tx_hash")
    assert [(r["tx_hash"][0], r["state"]) for r in states] == [
        ("b", "returned"),
        ("c", "unattributed"),
        ("d", "credited"),
    ]
    # A second run finds nothing more.
    assert set((await sweep(pool, shop_retention.sweeps())).values()) == {0}
