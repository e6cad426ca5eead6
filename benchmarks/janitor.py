"""How fast the clean-up deletes, against what a busy install adds (the security review, H2).

    python benchmarks/janitor.py [--visitors 200000] [--batch 5000] [--json PATH]

A visitor leaves about two updates (/start and "I've joined"), four messages (the gate, the
button's answer, the gate's deletion, the content) and a message reference in the queues.
The benchmark fills a fresh embedded PostgreSQL with `--visitors` visitors' worth of finished
rows past their retention (payloads shaped like real ones), runs the janitor's `sweep` once
with no time limit, and prints JSON: rows deleted per table, the seconds it took, rows per
second, and the steady intake (visitors per second) that rate keeps up with, also as a share
of the 20 s the job may spend each minute.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sponsorbot.db.embedded import EmbeddedPostgres, dsn_for
from sponsorbot.db.migrate import migrate
from sponsorbot.db.pool import connect, create_pool
from sponsorbot.engine import janitor

BOT = 1
ROWS_PER_VISITOR = {"inbox": 2, "outbox": 4, "message_refs": 1}
UPDATE = (
    '{"update_id": 1, "message": {"message_id": 7, "date": 1764547200, "text": "/start '
    'AbC123xYz789", "chat": {"id": 1, "type": "private", "first_name": "Visitor"}, "from": '
    '{"id": 1, "is_bot": false, "first_name": "Visitor", "language_code": "fa"}}}'
)
CALL = '{"text": "To get this content, please join:\\n• Channel", "reply_markup": {}}'


async def fill(dsn: str, visitors: int) -> None:
    """Finished rows for `visitors` visitors, all eight days old."""
    conn = await connect(dsn)
    try:
        await migrate(conn)
        await conn.execute(
            "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
            " webhook_secret_hash) VALUES ($1, 'bench_bot', '', 'xxxx', 'polling', 'p', '')",
            BOT,
        )
        await conn.execute(
            "INSERT INTO inbox (bot_id, update_id, kind, chat_key, payload, status, attempts,"
            " received_at, handled_at)"
            " SELECT $1, g, 'message', g / 2, $3::jsonb, 'done', 1,"
            " now() - interval '8 days', now() - interval '8 days'"
            " FROM generate_series(1, $2) g",
            BOT,
            visitors * ROWS_PER_VISITOR["inbox"],
            UPDATE,
        )
        await conn.execute(
            "INSERT INTO outbox (bot_id, chat_id, method, params, status, attempts, created_at,"
            " sent_at, result_message_id)"
            " SELECT $1, g / 4, 'sendMessage', $3::jsonb, 'sent', 1, now() - interval '8 days',"
            " now() - interval '8 days', g FROM generate_series(1, $2) g",
            BOT,
            visitors * ROWS_PER_VISITOR["outbox"],
            CALL,
        )
        await conn.execute(
            "INSERT INTO message_refs (bot_id, ref, chat_id, message_id, created_at)"
            " SELECT $1, 'gate:' || g, g, g, now() - interval '8 days'"
            " FROM generate_series(1, $2) g",
            BOT,
            visitors * ROWS_PER_VISITOR["message_refs"],
        )
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()


async def bench(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; returns what it prints."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--visitors", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=janitor.BATCH)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="sponsorbot-janitor-bench-"))
    embedded = EmbeddedPostgres(home)
    try:
        uri = await asyncio.to_thread(embedded.start)
        dsn = dsn_for(uri, "postgres")
        started = time.monotonic()
        await fill(dsn, args.visitors)
        filled_s = time.monotonic() - started
        pool = await create_pool(dsn, role="janitor-bench", min_size=1, max_size=2)
        try:
            sweeps = janitor.engine_sweeps(7 * 86400, 30 * 86400)
            started = time.monotonic()
            deleted = await janitor.sweep(pool, sweeps, budget_s=3600, batch=args.batch)
            took = time.monotonic() - started
        finally:
            await pool.close()
    finally:
        await asyncio.to_thread(embedded.release)
        shutil.rmtree(home, ignore_errors=True)
    rows = sum(deleted.values())
    per_visitor = sum(ROWS_PER_VISITOR.values())
    rate = rows / took
    # The job runs every minute and may spend 20 s of it: a third of the rate is sustainable.
    share = janitor.BUDGET_S / janitor.EVERY_S
    result = {
        "visitors": args.visitors,
        "batch": args.batch,
        "fill_s": round(filled_s, 1),
        "deleted": deleted,
        "seconds": round(took, 2),
        "rows_per_s": round(rate),
        "visitors_per_s_at_full_time": round(rate / per_visitor),
        "visitors_per_s_in_budget": round(rate * share / per_visitor),
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return result


def main() -> None:
    """Print the benchmark's result as JSON."""
    print(json.dumps(asyncio.run(bench(sys.argv[1:])), indent=2))


if __name__ == "__main__":
    main()
