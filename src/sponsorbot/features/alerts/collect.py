"""What the team should hear about, found by reading what the other features already record.

The collector reads; it never asks the shop, the engine or the campaigns to call it. Each
source is one of three shapes:

- a log read past a mark (the order log, the shop's transfers), re-reading a little behind the
  mark so that a row committed late is not missed: each row's alert has a unique key, so a row
  read twice is told once;
- a count kept per bot (dead updates, given-up messages): what it grew by since the last look
  is added to the bot's waiting alert, which gathers for a while before it goes;
- a condition (a bot's token refused, a gate channel without rights, TronGrid refusing a key):
  told when it starts to hold, again only after it stopped holding and started again.

The job runs once in the cluster (a lease) and in one transaction, so marks and alerts move
together: a crash between them re-reads, and the unique keys keep every alert once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg

from sponsorbot.engine.sender import GAVE_UP
from sponsorbot.features.shop.attribution import over_payment

# Rows behind the mark read again each time (ids handed out before a late commit).
SLACK = 200
# Finished campaigns and broadcasts are looked for this far back at most.
LOOK_BACK = timedelta(days=2)

MARKS = "SELECT name, value FROM alert_marks"
SET_MARK = """
INSERT INTO alert_marks (name, value) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET value = excluded.value
"""
DROP_MARKS = "DELETE FROM alert_marks WHERE name = ANY ($1::text[])"

ORDER_LOG = """
SELECT l.id, l.bot_id, l.order_id, l.kind, l.data, o.paid_usdt, o.price_usdt
FROM shop_order_log l JOIN shop_orders o ON o.bot_id = l.bot_id AND o.id = l.order_id
WHERE l.id > $1 AND l.kind IN ('submitted', 'resubmitted', 'payment_credited', 'expired')
ORDER BY l.id
"""
LAST_LOG = "SELECT coalesce(max(id), 0) FROM shop_order_log"
TRANSFERS = """
SELECT t.id, t.coin, t.amount, t.reason, t.to_address FROM shop_transfers t
WHERE t.id > $1 AND t.state = 'unattributed'
ORDER BY t.id
"""
# The shop a transfer reached (the first of those sharing the address), read apart: on Citus
# the transfers are a reference table and the settings a bot table.
SHOPS_OF = """
SELECT DISTINCT ON (address) address, bot_id FROM shop_settings
WHERE address = ANY ($1::bytea[]) ORDER BY address, bot_id
"""
LAST_TRANSFER = "SELECT coalesce(max(id), 0) FROM shop_transfers"
COUNTS = """
SELECT 'dead:' || bot_id AS name, bot_id, 'dead_updates' AS kind, count(*) AS n
FROM inbox WHERE status = 'dead' GROUP BY bot_id
UNION ALL
SELECT 'given_up:' || bot_id, bot_id, 'given_up', count(*)
FROM outbox WHERE status = 'failed' AND error = $1 GROUP BY bot_id
"""
CONDITIONS = """
SELECT 'cond:bot:' || b.id AS name, 'bot_refused' AS kind, b.id AS bot_id,
       jsonb_build_object('bot', b.username) AS data
FROM bots b WHERE b.status = 'token_refused'
UNION ALL
SELECT 'cond:channel:' || c.bot_id || ':' || c.chat_id, 'channel_rights', c.bot_id,
       jsonb_build_object('bot', b.username, 'channel', c.title, 'status', c.status,
                          'missing', to_jsonb(c.missing))
FROM channels c
JOIN gate_channels g ON g.bot_id = c.bot_id AND g.chat_id = c.chat_id
JOIN bots b ON b.id = c.bot_id
WHERE c.status <> 'ok'
UNION ALL
SELECT 'cond:tron:' || s.bot_id, 'tron_key', s.bot_id, jsonb_build_object('bot', b.username)
FROM shop_settings s JOIN bots b ON b.id = s.bot_id
WHERE s.key_refused_at > now() - interval '1 hour'
"""
FINISHED = """
SELECT 'campaign:' || c.id || ':' || c.status AS key, 'campaign_done' AS kind,
       NULL::bigint AS bot_id,
       jsonb_build_object('campaign_id', c.id, 'status', c.status) AS data
FROM campaigns c
WHERE c.status IN ('reached', 'ended') AND c.status_at > $1
UNION ALL
SELECT 'broadcast:' || b.id, 'broadcast_done', b.bot_id, jsonb_build_object('broadcast_id', b.id)
FROM broadcasts b
WHERE b.status = 'done' AND b.finished_at > $1
"""
ADD_ONCE = """
INSERT INTO alerts (kind, key, once, about_bot, data, subject)
SELECT k, key, true, bot, data, subject
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::jsonb[], $5::text[])
     AS s (k, key, bot, data, subject)
ON CONFLICT (key) WHERE once DO NOTHING
"""
# A gathering alert: the waiting one of the same key grows; a new one waits `$5` seconds.
ADD_GATHERING = """
INSERT INTO alerts (kind, key, once, about_bot, count, due_at)
SELECT k, key, false, bot, n, now() + make_interval(secs => $5)
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[]) AS s (k, key, bot, n)
ON CONFLICT (key) WHERE NOT once AND fanned_at IS NULL
DO UPDATE SET count = alerts.count + excluded.count
"""
SINCE = "since"


def review_subject(log_id: int) -> str:
    """What an order-review alert is about: one submission (its step in the order's log)."""
    return f"review:{log_id}"


def transfer_subject(transfer_id: int) -> str:
    """What a payment-decision alert about a transfer is about."""
    return f"transfer:{transfer_id}"


@dataclass(slots=True)
class Found:
    """Alerts found in one look, by shape."""

    once: list[tuple[str, str, int | None, dict[str, Any], str | None]]
    gathering: list[tuple[str, str, int | None, int]]
    marks: dict[str, int]
    dropped: list[str]

    def add(
        self,
        kind: str,
        key: str,
        bot: int | None,
        data: dict[str, Any],
        subject: str | None = None,
    ) -> None:
        """A `once` alert (`subject`: what it is about, when another alert may be too)."""
        self.once.append((kind, key, bot, data, subject))


async def collect(conn: asyncpg.Connection, now: datetime, gather_s: float) -> int:
    """One look at every source; the alerts added (a gathering one that grew counts too)."""
    marks = {r["name"]: int(r["value"]) for r in await conn.fetch(MARKS)}
    found = Found([], [], {}, [])
    if SINCE not in marks:
        # The first look starts from here: what happened before alerts existed is not news.
        found.marks[SINCE] = int(now.timestamp())
        found.marks["order_log"] = int(await conn.fetchval(LAST_LOG))
        found.marks["transfers"] = int(await conn.fetchval(LAST_TRANSFER))
        marks.update(found.marks)
    await _orders(conn, marks, found)
    await _transfers(conn, marks, found)
    await _counts(conn, marks, found)
    await _conditions(conn, marks, found)
    since = max(datetime.fromtimestamp(marks[SINCE], now.tzinfo), now - LOOK_BACK)
    for row in await conn.fetch(FINISHED, since):
        found.add(row["kind"], row["key"], row["bot_id"], _json(row["data"]))
    await _write(conn, found, gather_s)
    return len(found.once) + len(found.gathering)


async def _orders(conn: asyncpg.Connection, marks: dict[str, int], found: Found) -> None:
    last = marks.get("order_log", 0)
    for row in await conn.fetch(ORDER_LOG, last - SLACK):
        last = max(last, int(row["id"]))
        data = _json(row["data"])
        data.update(order_id=row["order_id"], step=row["kind"])
        subject = None
        if row["kind"] == "expired":
            if Decimal(row["paid_usdt"]) <= 0:
                continue  # nobody paid: nothing to decide
            kind = "payment_decision"  # paid in part, then the time ran out: refund or accept
            data.update(paid=str(row["paid_usdt"]), price=str(row["price_usdt"]))
        elif row["kind"] == "payment_credited":
            extra = over_payment(Decimal(row["paid_usdt"]), Decimal(row["price_usdt"]))
            kind = "payment_decision" if extra > 0 else "payment_credited"
            data.update(paid=str(row["paid_usdt"]), price=str(row["price_usdt"]))
        else:
            kind, subject = "order_review", review_subject(int(row["id"]))
        found.add(kind, f"order-log:{row['id']}", row["bot_id"], data, subject)
    found.marks["order_log"] = last


async def _transfers(conn: asyncpg.Connection, marks: dict[str, int], found: Found) -> None:
    last = marks.get("transfers", 0)
    rows = await conn.fetch(TRANSFERS, last - SLACK)
    addresses = list({bytes(r["to_address"]) for r in rows})
    shops = {bytes(r["address"]): r["bot_id"] for r in await conn.fetch(SHOPS_OF, addresses)}
    for row in rows:
        data = {"coin": row["coin"], "amount": str(row["amount"]), "reason": row["reason"]}
        bot = shops.get(bytes(row["to_address"]))
        subject = transfer_subject(int(row["id"]))
        found.add("payment_decision", f"transfer:{row['id']}", bot, data, subject)
        last = max(last, int(row["id"]))
    found.marks["transfers"] = max(last, int(await conn.fetchval(LAST_TRANSFER)))


async def _counts(conn: asyncpg.Connection, marks: dict[str, int], found: Found) -> None:
    seen = set()
    for row in await conn.fetch(COUNTS, GAVE_UP):
        name, n = row["name"], int(row["n"])
        seen.add(name)
        grew = n - marks.get(name, 0)
        if grew > 0:
            found.gathering.append((row["kind"], name, row["bot_id"], grew))
        if marks.get(name) != n:
            found.marks[name] = n
    # A bot whose dead updates were re-driven or pruned starts again from none.
    found.dropped += [m for m in marks if m.startswith(("dead:", "given_up:")) and m not in seen]


async def _conditions(conn: asyncpg.Connection, marks: dict[str, int], found: Found) -> None:
    holding = set()
    stamp = int(time.time() * 1000)
    for row in await conn.fetch(CONDITIONS):
        name = row["name"]
        holding.add(name)
        if name not in marks:
            found.add(row["kind"], f"{name}:{stamp}", row["bot_id"], _json(row["data"]))
            found.marks[name] = 1
    found.dropped += [m for m in marks if m.startswith("cond:") and m not in holding]


async def _write(conn: asyncpg.Connection, found: Found, gather_s: float) -> None:
    if found.once:
        await conn.execute(ADD_ONCE, *_columns(found.once))
    if found.gathering:
        await conn.execute(ADD_GATHERING, *_columns(found.gathering), gather_s)
    if found.marks:
        await conn.executemany(SET_MARK, list(found.marks.items()))
    if found.dropped:
        await conn.execute(DROP_MARKS, found.dropped)


def _columns(rows: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    return [list(c) for c in zip(*rows, strict=True)]


def _json(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = json.loads(value)
    return dict(value) if isinstance(value, dict) else {}
