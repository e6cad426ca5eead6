"""The alerts' fan-out on the database alone: one subject is told to a member once, whichever
alert about it came first (what waited when they linked, or the collector's), and an alert
of one member's goes to nobody else."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg

from sponsorbot.features.alerts.collect import collect
from sponsorbot.features.alerts.deliver import fan_out
from sponsorbot.features.alerts.links import tell_what_waits

MEMBER = """
INSERT INTO users (email, name, password_hash, role) VALUES ($1, $1, 'x', $2) RETURNING id
"""
LINK = "INSERT INTO team_links (user_id, via_bot, chat_id) VALUES ($1, 1, $2)"
TRANSFER = """
INSERT INTO shop_transfers (network, tx_hash, coin, amount, to_address, block_time, reason)
VALUES ('mainnet', repeat('ab', 32), 'USDT', 7, $1, now(), 'no_match')
RETURNING id
"""


async def test_a_member_is_told_of_a_transfer_once_and_another_member_once_too(
    pool: asyncpg.Pool,
) -> None:
    now = datetime.now(UTC)
    async with pool.acquire() as conn, conn.transaction():
        await collect(conn, now, 0.0)  # the first look: what is there now is not news
        old = await conn.fetchval(MEMBER, "old@example.com", "owner")
        await conn.execute(LINK, old, 100)
        new = await conn.fetchval(MEMBER, "new@example.com", "admin")
        await conn.execute(LINK, new, 200)
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(TRANSFER, b"\x41" + bytes(20))
        # The new member links before the collector looks again: told of it as waiting...
        await tell_what_waits(conn, new, 1)
        # ...and the collector then finds the same transfer new.
        await collect(conn, now, 0.0)
        await fan_out(conn, datetime.now(UTC) + timedelta(seconds=1))
        rows = await conn.fetch(
            "SELECT d.user_id, a.key FROM alert_deliveries d JOIN alerts a ON a.id = d.alert_id"
            " ORDER BY d.user_id"
        )
    told = [(r["user_id"], r["key"].split(":")[0]) for r in rows]
    assert told == [(old, "transfer"), (new, "waiting")]
