"""The shop's ledger: transfers recorded once, credited to one order, and what an order asks for;
and the two writes every change of an order makes with it (a timeline step, queued messages).

A credit is a `shop_transfers` row with the order filled in; the row's key is the transfer
itself (network and hash), so no race and no second worker can count one transfer twice. An
order's paid amount is the sum of its credited transfers, read back under the order's lock,
never added to. Every function here runs inside the caller's transaction, after the caller
locked what it changes: the transfer row first, then the orders (always in that order, so two
transactions never wait on each other in a circle).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import asyncpg

from sponsorbot.engine.outbox import ENQUEUE
from sponsorbot.engine.unit import QueuedCall, call_arrays
from sponsorbot.features.errors import Conflict
from sponsorbot.features.shop import notices, queries
from sponsorbot.features.shop.attribution import (
    MAX_TAIL,
    MICRO,
    Attribution,
    Candidate,
    NoTailLeft,
    attribute,
    due_for,
    over_payment,
    pick_due,
)
from sponsorbot.features.shop.rules import PAYABLE, after_credit, show
from sponsorbot.tron.verifier import Verdict, credited_usdt

Texts = Mapping[str, Mapping[str, str]]

RECORD = """
INSERT INTO shop_transfers (network, tx_hash, coin, amount, from_address, to_address, block_time)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (network, tx_hash) DO NOTHING
"""
_TRANSFER_COLUMNS = """
id, network, tx_hash, coin, amount, from_address, to_address, block_time, state, reason,
order_bot_id, order_id, credited_usdt, matched_by, seen_at, decided_at, decided_by, note
"""
LOCK = (
    f"SELECT {_TRANSFER_COLUMNS} FROM shop_transfers WHERE network = $1 AND tx_hash = $2 FOR UPDATE"
)
LOCK_BY_ID = f"SELECT {_TRANSFER_COLUMNS} FROM shop_transfers WHERE id = $1 FOR UPDATE"
HOLD = "UPDATE shop_transfers SET reason = $2 WHERE id = $1 AND state = 'unattributed'"
CREDIT = """
UPDATE shop_transfers
SET state = 'credited', reason = NULL, order_bot_id = $2, order_id = $3, credited_usdt = $4,
    matched_by = $5, decided_at = now(), decided_by = $6
WHERE id = $1 AND state = 'unattributed'
"""
PAID = """
SELECT COALESCE(sum(credited_usdt), 0) FROM shop_transfers
WHERE order_bot_id = $1 AND order_id = $2 AND state = 'credited'
"""
# The orders asking for exactly this amount at this address ($1 network, $2 address, $3 coin,
# $4 amount), locked in id order.
_CANDIDATE = """
network = $1 AND address = $2 AND approved_at IS NOT NULL
  AND state IN ('awaiting_payment', 'partly_paid', 'expired')
  AND CASE WHEN $3::text = 'USDT' THEN accept_usdt AND due_usdt = $4::numeric
           ELSE accept_trx AND due_trx = $4::numeric END
"""
_CANDIDATE_COLUMNS = "id, state, approved_at, COALESCE(due_at, expires_at) AS deadline"
CANDIDATES = f"""
SELECT {_CANDIDATE_COLUMNS} FROM shop_orders WHERE {_CANDIDATE}
ORDER BY id
FOR UPDATE
"""
# On Citus (db/pool.on_citus) the candidates, of any bot sharing the address, lie on several
# shards, and Citus locks rows only within one: they are found first, then each is locked by
# its bot and id ($5, $6) in id order, if it is a candidate still.
CANDIDATE_KEYS = f"SELECT bot_id, id FROM shop_orders WHERE {_CANDIDATE} ORDER BY id"
LOCK_CANDIDATE = f"""
SELECT {_CANDIDATE_COLUMNS} FROM shop_orders WHERE bot_id = $5 AND id = $6 AND {_CANDIDATE}
FOR UPDATE
"""
# Amounts a new one must differ from: open orders of the address, and ones that expired lately
# (a payment made in time may still be confirmed for them).
TAKEN = """
SELECT due_usdt, due_trx FROM shop_orders
WHERE network = $1 AND address = $2 AND id <> $3
  AND (state IN ('awaiting_payment', 'partly_paid')
       OR state = 'expired' AND updated_at > now() - interval '2 days')
"""
# One transaction at a time hands out amounts for an address (shops may share one).
ADDRESS_LOCK = (
    "SELECT pg_advisory_xact_lock(hashtextextended('shop-due:' || $1 || encode($2, 'hex'), 0))"
)
SET_DUE = "UPDATE shop_orders SET due_usdt = $2, due_trx = $3 WHERE id = $1"
CREDITED = """
UPDATE shop_orders SET paid_usdt = $2, state = $3, due_at = $4, updated_at = now() WHERE id = $1
"""
# The time from a subquery: Citus refuses now() inside the COALESCE of an UPDATE.
CLAIMS_CREDITED = """
UPDATE shop_payments p SET status = 'credited', reason = NULL, credited_usdt = $4,
       decided_at = COALESCE(p.decided_at, t.at)
FROM (SELECT now() AS at) t
WHERE p.bot_id = $1 AND p.order_id = $2 AND p.tx_hash = $3 AND p.status <> 'credited'
"""


async def enqueue(conn: asyncpg.Connection, bot_id: int, out: list[QueuedCall]) -> None:
    """Queue messages in the caller's transaction (they go if and when it commits)."""
    if out:
        await conn.execute(ENQUEUE, bot_id, None, *call_arrays(out))


# An order's steps write by its id alone in places (the timeline, a state), which on Citus go to
# every shard of the order tables. In Citus's default parallel mode such a write uses several
# connections per node, and a later statement of the same transaction that reads those shards
# again is refused ("placements that were modified over multiple connections"). Sequential
# mode keeps one connection per node. On one server the setting is a placeholder that nothing
# reads.
SEQUENTIAL = "SET LOCAL citus.multi_shard_modify_mode TO 'sequential'"


@asynccontextmanager
async def transaction(pool: asyncpg.Pool) -> AsyncIterator[asyncpg.Connection]:
    """A connection in a transaction for an order's steps (safe on Citus, SEQUENTIAL)."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(SEQUENTIAL)
        yield conn


async def log_step(
    conn: asyncpg.Connection, order_id: int, kind: str, actor: str, **data: Any
) -> None:
    """One line of the order's timeline."""
    await conn.execute(queries.LOG, order_id, kind, actor, data)


async def lock_order(
    conn: asyncpg.Connection, order_id: int, bot_id: int | None = None
) -> asyncpg.Record | None:
    """The order, locked to the end of the caller's transaction, or None if there is none.

    The lock names the bot (queries.ORDER_FOR_UPDATE); without `bot_id` it is read first,
    unlocked, which is safe because an order's bot never changes.
    """
    if bot_id is None:
        bot_id = await conn.fetchval(queries.ORDER_BOT, order_id)
        if bot_id is None:
            return None
    return await conn.fetchrow(queries.ORDER_FOR_UPDATE, bot_id, order_id)


def candidates(rows: list[asyncpg.Record]) -> list[Candidate]:
    """CANDIDATES rows as the attribution rules read them."""
    return [Candidate(r["id"], r["state"], r["approved_at"], r["deadline"]) for r in rows]


async def record(
    conn: asyncpg.Connection, network: str, tx_hash: str, verdict: Verdict
) -> asyncpg.Record:
    """The transfer a credit verdict saw, recorded if new, and locked."""
    await conn.execute(
        RECORD,
        network,
        tx_hash,
        verdict.coin,
        verdict.amount,
        verdict.from_,
        verdict.to,
        verdict.block_time,
    )
    row = await conn.fetchrow(LOCK, network, tx_hash)
    assert row is not None  # inserted above, or already there
    return row


async def match(
    conn: asyncpg.Connection, transfer: Mapping[str, Any], citus: bool = False
) -> tuple[Attribution, asyncpg.Record | None]:
    """The order an unattributed, locked transfer pays by its exact amount, locked; or no
    order, and why the transfer waits for the owner (recorded on it). `citus`: the database
    is a Citus coordinator (CANDIDATE_KEYS)."""
    args = (transfer["network"], transfer["to_address"], transfer["coin"], transfer["amount"])
    if citus:
        rows = []
        for key in await conn.fetch(CANDIDATE_KEYS, *args):
            row = await conn.fetchrow(LOCK_CANDIDATE, *args, key["bot_id"], key["id"])
            if row is not None:
                rows.append(row)
    else:
        rows = await conn.fetch(CANDIDATES, *args)
    outcome = attribute(transfer["block_time"], candidates(rows))
    if outcome.order_id is None:
        await conn.execute(HOLD, transfer["id"], outcome.hold)
        return outcome, None
    # Locked with the candidates already; read whole.
    return outcome, await conn.fetchrow(queries.ORDER, outcome.order_id)


async def _taken(
    conn: asyncpg.Connection, order: Mapping[str, Any]
) -> tuple[set[Decimal], set[Decimal]]:
    """The USDT and TRX amounts other orders of the order's address hold, under the address's
    lock (held to the end of the caller's transaction)."""
    network, address = order["network"], bytes(order["address"])
    await conn.execute(ADDRESS_LOCK, network, address)
    taken = await conn.fetch(TAKEN, network, address, order["id"])
    return (
        {r["due_usdt"] for r in taken if r["due_usdt"] is not None},
        {r["due_trx"] for r in taken if r["due_trx"] is not None},
    )


async def assign_due(
    conn: asyncpg.Connection, order: Mapping[str, Any], left: Decimal
) -> tuple[Decimal, Decimal | None]:
    """Give the order exact amounts for `left` that no other open order of its address asks
    for, and store them; Conflict when all 9,999 are taken."""
    taken_usdt, taken_trx = await _taken(conn, order)
    rate = order["usdt_per_trx"] if order["accept_trx"] else None
    try:
        due = pick_due(left, rate, taken_usdt, taken_trx)
    except NoTailLeft as exc:
        raise Conflict(str(exc), code="shop_full") from None
    await conn.execute(SET_DUE, order["id"], due.usdt, due.trx)
    return due.usdt, due.trx


async def requote_due(conn: asyncpg.Connection, order: Mapping[str, Any], rate: Decimal) -> Decimal:
    """The TRX the order asks for at a new `rate`: what is left, with the order's own tail if
    no other open order of the address asks for that amount, else another free one. The USDT
    amount stays as the advertiser was told."""
    _usdt, taken_trx = await _taken(conn, order)
    left = order["price_usdt"] - order["paid_usdt"]
    tail = int((order["due_usdt"] - left) / MICRO) if order["due_usdt"] is not None else 0
    same = due_for(left, rate, tail).trx if 1 <= tail <= MAX_TAIL else None
    if same is not None and same not in taken_trx:
        return same
    try:
        other = pick_due(left, rate, set(), taken_trx).trx
    except NoTailLeft as exc:
        raise Conflict(str(exc), code="shop_full") from None
    assert other is not None  # a rate was given
    return other


def value_of(transfer: Mapping[str, Any], order: Mapping[str, Any]) -> Decimal:
    """What a transfer counts for in an order: USDT as is, TRX at the order's locked rate."""
    if transfer["coin"] == "USDT":
        return Decimal(transfer["amount"])
    if order["usdt_per_trx"]:
        return credited_usdt(Decimal(transfer["amount"]), order["usdt_per_trx"])
    raise Conflict("this order takes no TRX", code="order_coin")


@dataclass(frozen=True, slots=True)
class Credited:
    """A credit made: the order after it and the messages for its advertiser."""

    order: asyncpg.Record
    value: Decimal
    messages: list[QueuedCall]


async def credit(
    conn: asyncpg.Connection,
    transfer: Mapping[str, Any],
    order: Mapping[str, Any],
    matched_by: str,
    actor: str,
    now: datetime,
    texts: Texts,
) -> Credited:
    """Credit an unattributed, locked transfer to a locked order and move the order on.

    The order moves (partly paid, paid) while it is payable, when an expired order's payment was
    made before its deadline, or when the owner assigns it; a part payment gets a new exact
    amount for the rest.
    """
    value = value_of(transfer, order)
    done = await conn.execute(
        CREDIT, transfer["id"], order["bot_id"], order["id"], value, matched_by, actor
    )
    if done != "UPDATE 1":
        raise Conflict("this transfer is no longer waiting", code="transfer_state")
    total = await conn.fetchval(PAID, order["bot_id"], order["id"])
    await conn.execute(CLAIMS_CREDITED, order["bot_id"], order["id"], transfer["tx_hash"], value)
    deadline = order["due_at"] or order["expires_at"]
    moves = (
        order["state"] in PAYABLE
        or matched_by == "owner"
        or (
            order["state"] == "expired"
            and deadline is not None
            and transfer["block_time"] <= deadline
        )
    )
    paid = after_credit(
        order["state"], order["price_usdt"], total - value, value, order["due_at"], now
    )
    state = paid.state if moves else order["state"]
    await conn.execute(
        CREDITED, order["id"], total, state, paid.due_at if moves else order["due_at"]
    )
    if state == "partly_paid":
        await assign_due(conn, order, paid.left)
    await log_step(
        conn,
        order["id"],
        "payment_credited",
        actor,
        hash=transfer["tx_hash"],
        coin=transfer["coin"],
        amount=str(transfer["amount"]),
        credited_usdt=str(value),
        matched_by=matched_by,
    )
    updated = await conn.fetchrow(queries.ORDER, order["id"])
    out = [
        notices.say(
            updated,
            # USDT counts as itself: "(counted as 10 USDT)" would only repeat the amount.
            "shop_credited_usdt" if transfer["coin"] == "USDT" else "shop_credited",
            texts,
            amount=show(Decimal(transfer["amount"])),
            coin=transfer["coin"],
            credited=show(value),
            paid=show(total),
            price=show(order["price_usdt"]),
        )
    ]
    if moves and state == "paid":
        await log_step(conn, order["id"], "paid", actor)
        out.append(notices.say(updated, "shop_paid", texts))
        extra = over_payment(total, order["price_usdt"])
        if extra > 0:
            out.append(notices.say(updated, "shop_overpaid", texts, extra=show(extra)))
    elif moves:
        out.append(notices.still_due(updated, texts))
    return Credited(updated, value, out)
