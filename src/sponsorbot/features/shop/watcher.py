"""The shop's watcher: it looks at the addresses that have open orders for incoming USDT and
TRX, so an advertiser who just pays the exact amount is credited without sending a hash (as a
BTCPay invoice notices its payment). The hash stays a way to speed it up.

A listing only names hashes: each new one is checked by the verifier on the node's answers,
then recorded and matched by the same rules as a sent hash (`ledger.record`, `ledger.match`,
`ledger.credit`), under the same unique key, so the watcher and a runner checking a sent hash
never credit one transfer twice.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg

from sponsorbot.config import TronNetwork
from sponsorbot.features.shop import ledger
from sponsorbot.features.shop.attribution import CLOCK_SKEW
from sponsorbot.features.shop.ledger import enqueue
from sponsorbot.features.shop.runner import (
    CALLS_PER_CHECK,
    TronGridJob,
    key_refused,
    trongrid_key,
)
from sponsorbot.tron.address import to_base58
from sponsorbot.tron.check import verify_hash
from sponsorbot.tron.client import TronGridError
from sponsorbot.tron.verifier import Verdict
from sponsorbot.tron.watch import incoming

log = logging.getLogger(__name__)

# Addresses worth watching: open orders, and ones expired lately (a payment made in time may
# be confirmed late). One row per (network, address), from the earliest approval.
WATCHED = """
SELECT network, address, min(approved_at) AS since, bool_or(accept_usdt) AS usdt,
       bool_or(accept_trx) AS trx, min(bot_id) AS bot_id
FROM shop_orders
WHERE approved_at IS NOT NULL AND address IS NOT NULL
  AND (state IN ('awaiting_payment', 'partly_paid')
       OR state = 'expired' AND updated_at > now() - interval '1 day')
GROUP BY network, address
"""
KNOWN = "SELECT tx_hash FROM shop_transfers WHERE network = $1 AND tx_hash = ANY($2::text[])"
# Hashes checked and found to be no payment (a TRC-10 transfer, a failed one): not asked again.
FORGET_AFTER = 10_000
LISTING_CALLS = 2


@dataclass(eq=False, repr=False)
class ShopWatcher(TronGridJob):
    """Looks for transfers into watched addresses and credits what is some order's amount."""

    # Hashes found to be no payment, oldest first (FORGET_AFTER of them at most).
    _not_payments: OrderedDict[str, None] = field(default_factory=OrderedDict, init=False)

    async def tick(self, _pool: asyncpg.Pool) -> None:
        """One look at every watched address; one address's trouble stops no other."""
        await self._ask_citus()
        for row in await self.pool.fetch(WATCHED):
            try:
                await self._watch(row)
            except TronGridError as exc:
                log.warning("watching %s: TronGrid: %s", to_base58(bytes(row["address"])), exc)
                await key_refused(self.pool, row["bot_id"], exc)
            except Exception:
                log.exception("watching %s failed", to_base58(bytes(row["address"])))

    async def _watch(self, row: asyncpg.Record) -> None:
        network = TronNetwork(row["network"])
        address = bytes(row["address"])
        url = self.settings.trongrid_url_for(network)
        # The listings are two calls, and each new hash two more, from the shop's budget.
        if not await self.shop.spend_calls(row["bot_id"], LISTING_CALLS):
            return
        key = await trongrid_key(self.shop, self.settings, row["bot_id"])
        since: datetime = row["since"] - CLOCK_SKEW
        seen = await incoming(
            self.session(),
            url,
            key,
            network,
            address,
            int(since.timestamp() * 1000),
            usdt=bool(row["usdt"]),
            trx=bool(row["trx"]),
        )
        fresh = [tx_hash for tx_hash in seen if tx_hash not in self._not_payments]
        if not fresh:
            return
        known = {r["tx_hash"] for r in await self.pool.fetch(KNOWN, network.value, fresh)}
        for tx_hash in dict.fromkeys(h for h in fresh if h not in known):
            if not await self.shop.spend_calls(row["bot_id"], CALLS_PER_CHECK):
                return
            verdict = await verify_hash(
                self.session(),
                url,
                key,
                tx_hash,
                network,
                to_base58(address),
                since,
                None,
                accept_trx=bool(row["trx"]),
            )
            if verdict.verdict == "credit":
                await self._settle(network, tx_hash, verdict)
            elif verdict.verdict == "reject":
                self._forget(tx_hash)

    def _forget(self, tx_hash: str) -> None:
        self._not_payments[tx_hash] = None
        while len(self._not_payments) > FORGET_AFTER:
            self._not_payments.popitem(last=False)

    async def _settle(self, network: TronNetwork, tx_hash: str, verdict: Verdict) -> None:
        """Record the transfer and credit it if it is some open order's exact amount; any other
        waits for the owner on the Transfers page, as a sent hash's would."""
        woken: set[int] = set()
        async with ledger.transaction(self.pool) as conn:
            transfer = await ledger.record(conn, network.value, tx_hash, verdict)
            if transfer["state"] != "unattributed" or transfer["reason"] is not None:
                return  # decided already, or held for the owner already
            _outcome, target = await ledger.match(conn, transfer, bool(self.citus))
            if target is None:
                return
            texts = (await self.shop.config.get(target["bot_id"])).texts
            now = self.shop.clock()
            made = await ledger.credit(conn, transfer, target, "amount", "system", now, texts)
            await enqueue(conn, target["bot_id"], made.messages)
            woken.add(target["bot_id"])
        for bot_id in woken:
            self.shop.wake(bot_id)
