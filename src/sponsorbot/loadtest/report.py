"""What a load test measured, from the database and the simulator's call log."""

from __future__ import annotations

import collections
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from sponsorbot.engine.outbox import BACKGROUND
from sponsorbot.loadtest.statements import table as statements_table

SENDS = frozenset({"sendMessage", "sendVideo", "sendDocument", "sendPhoto", "copyMessage"})
RECEIVED = """
SELECT chat_key, min(extract(epoch FROM received_at))::float8 AS received
FROM inbox WHERE bot_id = ANY ($1::bigint[]) AND kind = 'message' AND chat_key = ANY ($2::bigint[])
GROUP BY chat_key
"""
# By kind: the visitors' messages are what "handled" compares with "offered"; with campaigns
# the joins through their links come as chat_member updates besides.
HANDLED_BETWEEN = """
SELECT kind, count(*) AS n FROM inbox
WHERE bot_id = ANY ($1::bigint[])
  AND handled_at >= to_timestamp($2) AND handled_at < to_timestamp($3)
GROUP BY kind
"""
# The database's work, read at both ends of the window: transactions, rows written and WAL.
# The counters cover every database of the cluster (the load test is alone on it); the
# statistics reach them within a second, which a window of tens of seconds absorbs.
DB_WORK = """
SELECT sum(xact_commit + xact_rollback)::float8 AS transactions,
       sum(tup_inserted + tup_updated + tup_deleted)::float8 AS rows,
       (pg_current_wal_lsn() - '0/0'::pg_lsn)::float8 AS wal
FROM pg_stat_database
"""
BACKLOG = """
SELECT count(*) FROM inbox WHERE bot_id = ANY ($1::bigint[]) AND status IN ('pending', 'processing')
"""
# Replies still to send; a broadcast's rows (background) are not waited for: a broadcast
# runs on after the load test, as it would after any busy minute.
DUE_OUTBOX = f"""
SELECT count(*) FROM outbox
WHERE bot_id = ANY ($1::bigint[]) AND status = 'pending' AND not_before <= now()
  AND priority < {BACKGROUND}
"""
DEAD = "SELECT count(*) FROM inbox WHERE bot_id = ANY ($1::bigint[]) AND status = 'dead'"
# What the campaigns of these bots credited: joins through the gate (each bot's own link, by
# someone the bot knew) and joins any other way.
CREDITED = """
SELECT count(m.gate_joined_at) AS through_gate,
       count(*) FILTER (WHERE m.gate_joined_at IS NULL AND m.outside_at IS NOT NULL) AS outside
FROM campaign_members m
WHERE m.campaign_id IN (SELECT campaign_id FROM campaign_bots WHERE bot_id = ANY ($1::bigint[]))
"""
RUNNING = """
SELECT count(DISTINCT c.id) FROM campaigns c JOIN campaign_bots b ON b.campaign_id = c.id
WHERE b.bot_id = ANY ($1::bigint[]) AND c.status = 'running'
"""
# The processes that are the product (the rest is the simulated Telegram and the load itself);
# with `--peer`, the peer's one process is.
PRODUCT = ("api", "worker", "postgres", "peer")


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def latency_figures(latencies: list[float], prefix: str = "") -> dict[str, float]:
    """p50, p95, p99 and max of these latencies, in seconds, keys named with `prefix`."""
    return {
        f"{prefix}p50_s": round(percentile(latencies, 50), 3),
        f"{prefix}p95_s": round(percentile(latencies, 95), 3),
        f"{prefix}p99_s": round(percentile(latencies, 99), 3),
        f"{prefix}max_s": round(max(latencies, default=math.nan), 3),
    }


@dataclass
class Window:
    """The measured phase."""

    start: float
    end: float
    offered: int

    @property
    def seconds(self) -> float:
        """Its length."""
        return max(1e-9, self.end - self.start)


def gate_answers(
    calls: list[dict[str, Any]], visitors: set[int]
) -> tuple[dict[int, float], int, int, int]:
    """First accepted send per visitor, duplicate answers, busiest bot-second, 429s."""
    first: dict[int, float] = {}
    per_chat: collections.Counter[int] = collections.Counter()
    per_bot_second: collections.Counter[tuple[int, int]] = collections.Counter()
    throttled = 0
    for call in calls:
        if call.get("error_code") == 429:
            throttled += 1
        if call["method"] not in SENDS or not call["ok"]:
            continue
        per_bot_second[(call["bot_id"], int(call["ts"]))] += 1
        chat = call.get("chat_id")
        if chat in visitors:
            per_chat[chat] += 1
            first.setdefault(chat, call["ts"])
    duplicates = sum(n - 1 for n in per_chat.values() if n > 1)
    busiest = max(per_bot_second.values(), default=0)
    return first, duplicates, busiest, throttled


async def measure(
    pool: asyncpg.Pool,
    bot_ids: list[int],
    visitors: dict[int, tuple[int, float]],
    calls: list[dict[str, Any]],
    window: Window,
    backlog: int,
    cpu: dict[str, float],
    points: list[tuple[float, float]] | None = None,
) -> dict[str, Any]:
    """The report's figures (the JSON keys of the issue, and a few more); `points`, if given,
    receives (arrival time, latency) of every answered visitor."""
    users = set(visitors)
    answered, duplicates, busiest, throttled = gate_answers(calls, users)
    rows = await pool.fetch(RECEIVED, bot_ids, list(users))
    received = {r["chat_key"]: r["received"] for r in rows}
    pairs = [
        (received[u], answered[u] - received[u]) for u in users if u in answered and u in received
    ]
    if points is not None:
        points.extend(pairs)
    latencies = [latency for _, latency in pairs]
    # From the link's opening (the load generator's clock), as a peer without an inbox is
    # measured (`--peer`): the same latency plus the simulator's delivery to the api.
    from_open = [answered[u] - t for u, (_, t) in visitors.items() if u in answered]
    kinds = {
        r["kind"]: int(r["n"])
        for r in await pool.fetch(HANDLED_BETWEEN, bot_ids, window.start, window.end)
    }
    dead = await pool.fetchval(DEAD, bot_ids)
    return {
        "offered_per_s": round(window.offered / window.seconds, 1),
        "handled_per_s": round(kinds.get("message", 0) / window.seconds, 1),
        "handled_other_per_s": round(
            sum(n for k, n in kinds.items() if k != "message") / window.seconds, 1
        ),
        "latency_from": "inbox",
        **latency_figures(latencies),
        **latency_figures(from_open, "open_"),
        "backlog": backlog,
        "max_bot_msgs_per_s": busiest,
        "throttled_429": throttled,
        "dead": dead,
        "duplicates": duplicates,
        "visitors": len(users),
        "answered": len(latencies),
        "unanswered": len(users) - len(answered),
        "cpu_s": cpu,
        **cpu_per_visitor(cpu, len(users)),
    }


def cpu_per_visitor(cpu: dict[str, float], visitors: int) -> dict[str, float]:
    """CPU per visitor of the window: every process, and the product's (api, workers,
    PostgreSQL, or a peer's process) alone, also without PostgreSQL; and the product's CPU over
    the simulator's, which does the same work for the same visitors in every run and so takes
    out how fast the shared machine was."""
    product = sum(v for k, v in cpu.items() if k.startswith(PRODUCT))
    database = sum(v for k, v in cpu.items() if k.startswith("postgres"))
    simulator = cpu.get("simulator", 0.0)
    n = max(1, visitors)
    return {
        "cpu_ms_per_visitor": round(1000 * sum(cpu.values()) / n, 2),
        "product_cpu_ms_per_visitor": round(1000 * product / n, 2),
        "product_cpu_ms_per_visitor_without_postgres": round(1000 * (product - database) / n, 2),
        "product_over_simulator": round(product / simulator, 2) if simulator else math.nan,
    }


async def database_work(pool: asyncpg.Pool) -> dict[str, float]:
    """The cluster's counters now (DB_WORK); two readings make `database_per_visitor`."""
    row = await pool.fetchrow(DB_WORK)
    return {k: float(row[k] or 0.0) for k in ("transactions", "rows", "wal")}


def database_per_visitor(
    before: dict[str, float], after: dict[str, float], visitors: int
) -> dict[str, float]:
    """What the database did per visitor between two readings: transactions, rows written,
    WAL bytes (the load generator's own few queries included)."""
    n = max(1, visitors)
    return {
        "db_transactions_per_visitor": round(
            (after["transactions"] - before["transactions"]) / n, 2
        ),
        "db_rows_per_visitor": round((after["rows"] - before["rows"]) / n, 2),
        "db_wal_bytes_per_visitor": round((after["wal"] - before["wal"]) / n),
    }


def broadcast_figures(
    calls: list[dict[str, Any]], recipients: set[int], window: Window, total: int
) -> dict[str, Any]:
    """With a broadcast: messages the simulator accepted for its made-up recipients per second
    of the window, the recipients reached (over the whole run) and those who got it more than
    once, out of the `total` made up."""
    per_chat: collections.Counter[int] = collections.Counter()
    in_window = 0
    for call in calls:
        if call["method"] not in SENDS or not call["ok"]:
            continue
        chat = call.get("chat_id")
        if chat in recipients:
            per_chat[chat] += 1
            if window.start <= call["ts"] < window.end:
                in_window += 1
    return {
        "broadcast_recipients": total,
        "broadcast_delivered": len(per_chat),
        "broadcast_duplicates": sum(1 for n in per_chat.values() if n > 1),
        "broadcast_sent_per_s": round(in_window / window.seconds, 1),
    }


async def campaign_figures(pool: asyncpg.Pool, bot_ids: list[int], joins: int) -> dict[str, int]:
    """With campaigns: how many ran, the joins made through their links, and what they credited."""
    row = await pool.fetchrow(CREDITED, bot_ids)
    return {
        "running": int(await pool.fetchval(RUNNING, bot_ids)),
        "joins_made": joins,
        "credited": int(row["through_gate"]),
        "outside_gate": int(row["outside"]),
    }


def table(setup: str, r: dict[str, Any]) -> str:
    """The article's row: setup, offered, handled, answer p50 / p95 / p99."""
    head = (
        "| Setup | Offered | Handled | Answer sent: p50 / p95 / p99 | max | backlog | dead | dup |"
    )
    rule = "|---|---|---|---|---|---|---|---|"
    row = (
        f"| {setup} | {r['offered_per_s']:.0f}/s | {r['handled_per_s']:.0f}/s | "
        f"{r['p50_s']:.2f} s / {r['p95_s']:.2f} s / {r['p99_s']:.2f} s | {r['max_s']:.2f} s | "
        f"{r['backlog']} | {'–' if r['dead'] is None else r['dead']} | {r['duplicates']} |"
    )
    cpu = ", ".join(f"{k} {v:.1f}" for k, v in r["cpu_s"].items())
    peer = "peer" in r["cpu_s"]
    text = f"{head}\n{rule}\n{row}\n\n" + (
        f"answer sent, from the link's opening: {r['open_p50_s']:.2f} s / {r['open_p95_s']:.2f} s "
        f"/ {r['open_p99_s']:.2f} s, max {r['open_max_s']:.2f} s"
        + (" (the peer has no inbox: this is its latency above)\n" if peer else "\n")
    )
    text += f"CPU seconds in the measured window: {cpu}\n" + (
        f"CPU per visitor: {r['cpu_ms_per_visitor']:.2f} ms, of which the product "
        f"({'the peer' if peer else 'api, workers, PostgreSQL'}) "
        f"{r['product_cpu_ms_per_visitor']:.2f} ms, without PostgreSQL "
        f"{r['product_cpu_ms_per_visitor_without_postgres']:.2f} ms; product ÷ simulator "
        f"CPU: {r['product_over_simulator']:.2f}\n"
        + (
            f"PostgreSQL per visitor: {r['db_transactions_per_visitor']:.2f} transactions, "
            f"{r['db_rows_per_visitor']:.2f} rows written, "
            f"{r['db_wal_bytes_per_visitor'] / 1024:.1f} kB of WAL\n"
            if "db_transactions_per_visitor" in r
            else ""
        )
        + f"busiest second of any bot: {r['max_bot_msgs_per_s']} messages; "
        f"429s: {r['throttled_429']}; unanswered visitors: {r['unanswered']}"
    )
    campaigns = r.get("campaigns")
    if campaigns:
        text += (
            f"\ncampaigns: on, {campaigns['running']} running (one per bot, on its second gate "
            f"channel); joins made through their links: {campaigns['joins_made']}, credited: "
            f"{campaigns['credited']}, outside the gate: {campaigns['outside_gate']}; other "
            f"updates (the joins) handled: {r['handled_other_per_s']:.0f}/s"
        )
    else:
        text += "\ncampaigns: off"
        if r.get("joins"):
            text += (
                f"; joins made by @username: {r['joins']['made']}; other updates (the joins) "
                f"handled: {r['handled_other_per_s']:.0f}/s"
            )
    if "broadcast_recipients" in r:
        status = r.get("broadcast_status") or {}
        text += (
            f"\nbroadcast: {r['broadcast_recipients']:,} made-up recipients; "
            f"{r['broadcast_sent_per_s']:.1f} messages/s sent to them in the window, "
            f"{r['broadcast_delivered']:,} reached by the end, "
            f"{r['broadcast_duplicates']} more than once; broadcasts "
            + ", ".join(f"{k} {v}" for k, v in sorted(status.get("statuses", {}).items()))
        )
    else:
        text += "\nbroadcast: off"
    if r.get("peer"):
        text += f"\npeer: {r['peer']}; errors it logged: {r['peer_errors']}"
    if r.get("statements"):
        pg_cpu = r["cpu_s"].get("postgres", 0.0)
        pg_ms = pg_cpu * 1000 / r["visitors"] if pg_cpu and r.get("visitors") else None
        text += "\n" + statements_table(r["statements"], pg_ms)
    rss = r.get("peak_rss_mb") or {}
    if rss:
        text += "\npeak RSS (MB): " + ", ".join(
            f"{k} {v:.0f}" for k, v in rss.items() if v is not None
        )
    return text


def write_json(path: Path, result: dict[str, Any]) -> None:
    """The figures as JSON."""
    path.write_text(json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")
