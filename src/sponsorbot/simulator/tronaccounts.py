"""The simulated TronGrid's v1 account listings: the transfers into (or out of) an address.

``GET /v1/accounts/{address}/transactions/trc20`` lists TRC-20 transfers the way TronGrid does
(``transaction_id``, ``token_info``, ``block_timestamp``, ``from``, ``to``, ``type``, ``value``
as a decimal string); ``GET /v1/accounts/{address}/transactions`` lists whole transactions
(the node's shape plus ``block_timestamp`` and ``blockNumber``). Options as TronGrid takes them:
``only_to``, ``only_from``, ``only_confirmed``, ``only_unconfirmed``, ``min_timestamp``,
``max_timestamp``, ``contract_address``, ``order_by=block_timestamp,asc|desc``, ``limit`` (at
most 200). No pagination fingerprint: a test never needs more than one page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from sponsorbot.simulator import tronshapes
from sponsorbot.simulator.tron import Tx
from sponsorbot.simulator.tronbytes import parse_address, to_base58
from sponsorbot.simulator.trongrid import chain_of, flag, refusal, v1_answer, v1_error

MAX_LIMIT = 200


def _number(request: web.Request, snake: str, camel: str, default: int) -> int:
    raw = request.query.get(snake) or request.query.get(camel)
    return int(raw) if raw is not None else default


def _listing(render: Callable[[Tx], dict[str, Any]], trc20: bool) -> Any:
    async def handle(request: web.Request) -> web.Response:
        refused = await refusal(request, v1=True)
        if refused is not None:
            return refused
        try:
            address = parse_address(request.match_info["address"])
            low = _number(request, "min_timestamp", "minTimestamp", 0)
            high = _number(request, "max_timestamp", "maxTimestamp", 2**62)
            limit = _number(request, "limit", "limit", 20)
            token = request.query.get("contract_address") or request.query.get("contractAddress")
            contract = parse_address(token) if token else None
        except ValueError as exc:
            return v1_error(str(exc))
        if not 0 < limit <= MAX_LIMIT:
            return v1_error(f"limit must be between 1 and {MAX_LIMIT}")
        chain = chain_of(request)
        now = chain.now_ms()
        to_only = flag(request, "only_to", "onlyTo")
        from_only = flag(request, "only_from", "onlyFrom")
        confirmed = flag(request, "only_confirmed", "onlyConfirmed")
        unconfirmed = flag(request, "only_unconfirmed", "onlyUnconfirmed")
        found = []
        for tx in chain.ledger().values():
            if trc20 != (tx.token is not None) or not low <= tx.block_time_ms <= high:
                continue
            if contract is not None and tx.token != contract:
                continue
            # Filters are not exclusive: only_to and only_from together mean either.
            if (to_only or from_only) and not (
                (to_only and tx.recipient == address) or (from_only and tx.sender == address)
            ):
                continue
            if address not in (tx.recipient, tx.sender):
                continue
            solid = tx.solid(now)
            if (confirmed and not solid) or (unconfirmed and solid):
                continue
            found.append(tx)
        ascending = request.query.get("order_by", "").endswith(",asc")
        found.sort(key=lambda t: t.block_time_ms, reverse=not ascending)
        data = [render(tx) for tx in found[:limit]]
        meta = {"at": now, "page_size": len(data)}
        return v1_answer({"data": data, "success": True, "meta": meta})

    return handle


def _trc20(tx: Tx) -> dict[str, Any]:
    assert tx.token is not None
    return {
        "transaction_id": tx.hash,
        "token_info": {
            "symbol": "USDT",
            "address": to_base58(tx.token),
            "decimals": 6,
            "name": "Tether USD",
        },
        "block_timestamp": tx.block_time_ms,
        "from": to_base58(tx.sender),
        "to": to_base58(tx.recipient),
        "type": "Transfer",
        "value": str(tx.units),
    }


def _transaction(tx: Tx) -> dict[str, Any]:
    return {
        **tronshapes.transaction(tx, visible=False),
        "block_timestamp": tx.block_time_ms,
        "blockNumber": tx.block_number,
    }


def setup(app: web.Application) -> None:
    """Add the v1 account listings to ``app``."""
    base = "/v1/accounts/{address}/transactions"
    app.router.add_get(f"{base}/trc20", _listing(_trc20, trc20=True))
    app.router.add_get(base, _listing(_transaction, trc20=False))
