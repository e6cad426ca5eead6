"""The control API of the simulated chain and its TronGrid, JSON under ``/_sim/tron/``.

Payments are made here, as a payer's wallet would make them: each transfer answers with the
64-hex hash and a summary. The same error conventions as the rest of the control API apply
(400 for an invalid action, 404 for a hash the chain does not have).
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from sponsorbot.simulator.control import Action, Body, NotFound, mount
from sponsorbot.simulator.state import Simulator
from sponsorbot.simulator.tron import KINDS, NETWORKS, Timing, Tx, lookalike_contract
from sponsorbot.simulator.tronbytes import parse_address, to_base58

_HASH = re.compile(r"[0-9a-fA-F]{64}")


def _timing(body: Body) -> Timing:
    after = body.get("solidify_after_s")
    stamp = body.get("timestamp_ms")
    if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, int)):
        raise ValueError("timestamp_ms must be a whole number of milliseconds")
    return Timing(
        solidify=str(body.get("solidify", "default")),
        after_s=float(after) if after is not None else None,
        timestamp_ms=stamp,
    )


def _transfer(kind: str) -> Action:
    async def action(sim: Simulator, body: Body) -> Any:
        tx = sim.tron.transfer(
            kind,
            str(body["from"]),
            str(body["to"]),
            body["amount"],
            _timing(body),
            contract=body.get("contract"),
            other_network=body.get("network"),
            asset_id=str(body.get("asset_id", "1002000")),
        )
        return tx.summary(sim.tron.now_ms())

    action.__doc__ = f"Make a {kind} transfer: ``from``, ``to``, ``amount`` (decimal string)."
    return action


def _tx(sim: Simulator, body: Body) -> Tx:
    tx_hash = str(body.get("hash", ""))
    if not _HASH.fullmatch(tx_hash):
        raise ValueError("hash must be 64 hex digits")
    tx = sim.tron.find(tx_hash)
    if tx is None:
        raise NotFound(f"no transaction {tx_hash} on {sim.tron.network}")
    return tx


async def solidify(sim: Simulator, body: Body) -> Any:
    """The transaction ``hash`` becomes solid now (shows on ``/walletsolidity/*``)."""
    tx = _tx(sim, body)
    sim.tron.solidify(tx.hash)
    return tx.summary(sim.tron.now_ms())


async def status(sim: Simulator, body: Body) -> Any:
    """The network served, its USDT contract, head and solid blocks, key and faults."""
    chain = sim.tron
    head, head_time = chain.head()
    solid, solid_time = chain.solid_head()
    return {
        "network": chain.network,
        "usdt_contract": NETWORKS[chain.network].usdt,
        "lookalike_contract": to_base58(lookalike_contract(chain.network)),
        "head_block": {"number": head, "timestamp": head_time},
        "solid_block": {"number": solid, "timestamp": solid_time},
        "solidify_blocks": chain.solidify_blocks,
        "delay_s": chain.delay_s,
        "api_key_required": chain.api_key is not None,
        "faults_queued": len(chain.faults),
        "now_ms": chain.now_ms(),
    }


async def set_network(sim: Simulator, body: Body) -> Any:
    """Serve ``network`` (mainnet, nile, shasta) from now on; each keeps its transactions.
    ``solidify_blocks`` changes how many blocks a new transaction waits to be solid,
    ``delay_s`` how long every TronGrid answer takes."""
    if body.get("network") is not None:
        sim.tron.set_network(str(body["network"]))
    if body.get("solidify_blocks") is not None:
        blocks = int(body["solidify_blocks"])
        if not 0 <= blocks <= 10_000:
            raise ValueError("solidify_blocks must be between 0 and 10000")
        sim.tron.solidify_blocks = blocks
    if body.get("delay_s") is not None:
        delay = float(body["delay_s"])
        if not 0 <= delay <= 30:
            raise ValueError("delay_s must be between 0 and 30")
        sim.tron.delay_s = delay
    return await status(sim, body)


async def set_api_key(sim: Simulator, body: Body) -> Any:
    """Require ``key`` in the TRON-PRO-API-KEY header (null or absent: no key needed)."""
    key = body.get("key")
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise ValueError("key must be a non-empty string, or null")
    sim.tron.api_key = key
    return await status(sim, body)


async def add_faults(sim: Simulator, body: Body) -> Any:
    """The next ``count`` (default 1) TronGrid calls answer ``kind``: 429, 500 or garbage."""
    queued = sim.tron.add_faults(str(body.get("kind", "")), int(body.get("count", 1)))
    return {"faults_queued": queued}


async def clear_faults(sim: Simulator, body: Body) -> Any:
    """No more queued TronGrid faults."""
    sim.tron.faults.clear()
    return {"faults_queued": 0}


async def create_wallet(sim: Simulator, body: Body) -> Any:
    """A new random address holding ``trx`` (default 10000) and ``usdt`` (default 1000)."""
    wallet = sim.tron.create_wallet(body.get("trx", "10000"), body.get("usdt", "1000"))
    return wallet.json(sim.tron.network)


async def list_wallets(sim: Simulator, body: Body) -> Any:
    """The control-made wallets of the network served, or the one at ``address``."""
    chain = sim.tron
    if body.get("address"):
        wallet = chain.wallet(parse_address(str(body["address"])))
        if wallet is None:
            raise NotFound(f"no wallet {body['address']} on {chain.network}")
        return wallet.json(chain.network)
    return [w.json(chain.network) for w in chain.wallets.get(chain.network, {}).values()]


async def list_transactions(sim: Simulator, body: Body) -> Any:
    """Every transaction of the network served, oldest first."""
    now = sim.tron.now_ms()
    return [tx.summary(now) for tx in sim.tron.ledger().values()]


async def read_transaction(sim: Simulator, body: Body) -> Any:
    """One transaction's summary, by ``hash``."""
    return _tx(sim, body).summary(sim.tron.now_ms())


ROUTES: dict[str, Action] = {f"tron/{kind}": _transfer(kind) for kind in KINDS} | {
    "tron/solidify": solidify,
    "tron/network": set_network,
    "tron/api_key": set_api_key,
    "tron/faults": add_faults,
    "tron/faults/clear": clear_faults,
    "tron/wallets": create_wallet,
}
READ_ROUTES: dict[str, Action] = {
    "tron/status": status,
    "tron/wallets": list_wallets,
    "tron/transactions": list_transactions,
    "tron/transaction": read_transaction,
}


def setup(app: web.Application) -> None:
    """Add ``/_sim/tron/...`` to ``app``."""
    mount(app, ROUTES, READ_ROUTES)
