"""Transfers into an address, as TronGrid's v1 account listings tell them: hashes to check.

Nothing listed here is trusted: the shop checks each hash with the verifier against the node's
own answers (`sponsorbot.tron.check.verify_hash`) before anything is credited. A listing only
says which hashes are worth checking, so a payer who never sends their hash is still seen.
"""

from __future__ import annotations

from typing import Any, Final

import aiohttp

from sponsorbot.config import TronNetwork
from sponsorbot.tron.address import to_base58
from sponsorbot.tron.client import TronGrid
from sponsorbot.tron.networks import network_info

__all__ = ["incoming"]

TRC20_PATH: Final = "/v1/accounts/{address}/transactions/trc20"
TRX_PATH: Final = "/v1/accounts/{address}/transactions"
LIMIT: Final = 200
_HASH_LENGTH: Final = 64


async def incoming(
    session: aiohttp.ClientSession,
    base_url: str,
    api_key: str | None,
    network: TronNetwork,
    address: bytes,
    since_ms: int,
    *,
    usdt: bool,
    trx: bool,
    timeout_s: float = 10.0,
) -> list[str]:
    """The hashes of confirmed transactions into `address` from `since_ms` on: USDT of the
    network's official contract and/or plain TRX, oldest first, at most 200 of each.
    TronGridError on failure."""
    grid = TronGrid(session, base_url, api_key, timeout_s=timeout_s)
    where = to_base58(address)
    query = {
        "only_to": "true",
        "only_confirmed": "true",
        "min_timestamp": str(since_ms),
        "order_by": "block_timestamp,asc",
        "limit": str(LIMIT),
    }
    found: list[str] = []
    if usdt:
        contract = to_base58(network_info(network).usdt)
        path = TRC20_PATH.format(address=where)
        listed = {**query, "contract_address": contract}
        rows = await grid.listing(path, listed)
        found += [str(r["transaction_id"]).lower() for r in rows if _hash(r.get("transaction_id"))]
    if trx:
        path = TRX_PATH.format(address=where)
        rows = await grid.listing(path, query)
        found += [str(r["txID"]).lower() for r in rows if _hash(r.get("txID")) and _plain_trx(r)]
    return found


def _hash(value: object) -> bool:
    return isinstance(value, str) and len(value) == _HASH_LENGTH


def _plain_trx(row: dict[str, Any]) -> bool:
    # Only a top-level TRX transfer can pay in TRX; the verifier checks it again anyway.
    raw = row.get("raw_data")
    contracts = raw.get("contract") if isinstance(raw, dict) else None
    return (
        isinstance(contracts, list)
        and bool(contracts)
        and isinstance(contracts[0], dict)
        and contracts[0].get("type") == "TransferContract"
    )
