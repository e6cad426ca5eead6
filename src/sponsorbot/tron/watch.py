"""Transfers into an address, as TronGrid's v1 account listings tell them: hashes to check.

Nothing listed here is trusted: the shop checks each hash with the verifier against the node's
own answers (`sponsorbot.tron.check.verify_hash`) before anything is credited. A listing only
says which hashes are worth checking, so a payer who never sends their hash is still seen.
"""

from __future__ import annotations

from typing import Any, Final

import aiohttp
import orjson

from sponsorbot.config import TronNetwork
from sponsorbot.tron.address import to_base58
from sponsorbot.tron.client import API_KEY_HEADER, TronGridError
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
    base = base_url.rstrip("/")
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
        rows = await _get(session, base, path, listed, api_key, timeout_s)
        found += [str(r["transaction_id"]).lower() for r in rows if _hash(r.get("transaction_id"))]
    if trx:
        path = TRX_PATH.format(address=where)
        rows = await _get(session, base, path, query, api_key, timeout_s)
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


async def _get(
    session: aiohttp.ClientSession,
    base: str,
    path: str,
    params: dict[str, str],
    api_key: str | None,
    timeout_s: float,
) -> list[dict[str, Any]]:
    headers = {"Accept": "application/json"}
    if api_key:
        headers[API_KEY_HEADER] = api_key
    where = f"TronGrid {path.split('/')[-1]} listing"
    try:
        async with session.get(
            base + path,
            params=params,
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=timeout_s),
        ) as resp:
            status, body = resp.status, await resp.read()
    except TimeoutError:
        raise TronGridError("unavailable", f"{where}: timed out") from None
    except (aiohttp.ClientError, OSError) as exc:
        raise TronGridError("unavailable", f"{where}: {type(exc).__name__}") from None
    if status in (401, 403):
        raise TronGridError("unauthorized", f"{where}: HTTP {status}, the API key was refused")
    if status == 429:
        raise TronGridError("rate_limited", f"{where}: HTTP 429, rate limited")
    if status != 200:
        raise TronGridError("unavailable", f"{where}: HTTP {status}")
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        answer = None
    if not isinstance(answer, dict) or answer.get("success") is not True:
        raise TronGridError("garbage", f"{where}: not a successful listing")
    data = answer.get("data")
    if not isinstance(data, list):
        raise TronGridError("garbage", f"{where}: no data in the listing")
    return [row for row in data if isinstance(row, dict)]
