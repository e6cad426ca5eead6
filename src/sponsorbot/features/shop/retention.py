"""How long the shop's records are kept (its tables only grew: docs/adr/0014-retention.md).

- Refused hashes (`shop_payments` rejected) go after :data:`REJECTED_KEEP_DAYS`. Anyone can
  send any hash (ADR 0008), so these rows are mostly junk; the order's timeline keeps a
  `payment_rejected` line with the hash and the reason for good.
- An order's timeline (`shop_order_log`) is its history and stays, finished or not, for as
  long as the order does. Only repeated lines go: the `start_failed` and `payment_unconfirmed`
  lines of an order after its first of each kind, once older than :data:`REPEATS_KEEP_DAYS`
  (a paid ad that cannot start logs a line again and again while it stays paid).
- Transfers the owner sent back (`shop_transfers` returned) go after a year. Credited and
  unattributed transfers are never swept: they are what an order was paid with, or money
  still waiting for the owner.
"""

from __future__ import annotations

from typing import Final

import asyncpg

from sponsorbot.engine.janitor import Sweep, sweep

CLEANUP_EVERY_S: Final = 600.0
# Longer than any order stays payable (at most 30 days, plus 48 h after a part payment), with
# room for the advertiser's questions after it: the owner can still see the refused hash and
# its reason on the order's page while anyone is likely to ask about it.
REJECTED_KEEP_DAYS: Final = 90
REPEATS_KEEP_DAYS: Final = 30
# A year of bookkeeping for money that came in and was sent back.
RETURNED_KEEP_DAYS: Final = 365

DELETE_REJECTED = """
DELETE FROM shop_payments WHERE (bot_id, id) IN (
    SELECT bot_id, id FROM shop_payments
    WHERE status = 'rejected'
      AND coalesce(decided_at, submitted_at) < now() - make_interval(days => $2)
    LIMIT $1)
"""
# The first line of each kind (the lowest id) of an order stays, so the timeline still says
# what happened and when it began.
DELETE_REPEATS = """
DELETE FROM shop_order_log WHERE (bot_id, id) IN (
    SELECT l.bot_id, l.id FROM shop_order_log l
    WHERE l.kind IN ('start_failed', 'payment_unconfirmed')
      AND l.at < now() - make_interval(days => $2)
      AND EXISTS (SELECT 1 FROM shop_order_log f
                  WHERE f.bot_id = l.bot_id AND f.order_id = l.order_id
                    AND f.kind = l.kind AND f.id < l.id)
    LIMIT $1)
"""
DELETE_RETURNED = """
DELETE FROM shop_transfers WHERE id IN (
    SELECT id FROM shop_transfers
    WHERE state = 'returned'
      AND coalesce(decided_at, seen_at) < now() - make_interval(days => $2)
    LIMIT $1)
"""


def sweeps() -> list[Sweep]:
    """The shop's clean-up, for the janitor's `sweep`."""
    return [
        Sweep("shop_payments", DELETE_REJECTED, (REJECTED_KEEP_DAYS,)),
        Sweep("shop_order_log", DELETE_REPEATS, (REPEATS_KEEP_DAYS,)),
        Sweep("shop_transfers", DELETE_RETURNED, (RETURNED_KEEP_DAYS,)),
    ]


async def cleanup(pool: asyncpg.Pool) -> None:
    """Run the shop's sweeps (a periodic job)."""
    await sweep(pool, sweeps())
