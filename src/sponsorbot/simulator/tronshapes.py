"""What java-tron and TronGrid print for a transaction, its info, its events and a block.

The shapes follow java-tron's HTTP servlets (``Util.printTransaction``, ``JsonFormat`` over
``TransactionInfo``) and real answers of the mainnet node:

- proto3 leaves out fields at their default value: no ``fee`` when nothing was burned, no
  ``result`` on a successful ``TransactionInfo``, no ``receipt.result`` for a plain transfer;
- ``visible=true`` prints the address fields in Base58Check (a log's 20-byte address gets its
  ``41`` back first) and ``resMessage`` and ``asset_name`` as text; everything else stays hex;
- the official USDT contract's ``transfer`` returns nothing, so ``contractResult`` is one zero
  word on success.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sponsorbot.simulator.tron import BLOCK_MS, Chain, Tx
from sponsorbot.simulator.tronbytes import TRANSFER_TOPIC, to_base58, word

ENERGY_PRICE_SUN = 210
# What a USDT transfer to an address that already holds USDT costs on mainnet, with the
# dynamic-energy penalty the USDT contract carries.
USDT_ENERGY = 64_285
USDT_PENALTY = 34_820
REVERT_ENERGY = 1_120
TRIGGER_NET = 345
TRANSFER_NET = 268
ASSET_NET = 283
REVERT_MESSAGE = "REVERT opcode executed"
TRANSFER_EVENT = "Transfer(address indexed from, address indexed to, uint256 value)"


def _address(raw: bytes, visible: bool) -> str:
    return to_base58(raw) if visible else raw.hex()


def transaction(tx: Tx, visible: bool) -> dict[str, Any]:
    """``/wallet/gettransactionbyid``: the signed transaction with its execution result."""
    contract = tx.raw.contract
    value: dict[str, Any]
    if contract.type == "TriggerSmartContract":
        value = {
            "data": contract.data.hex(),
            "owner_address": _address(contract.owner, visible),
            "contract_address": _address(contract.contract_address, visible),
        }
    else:
        value = {
            "amount": contract.amount,
            "owner_address": _address(contract.owner, visible),
            "to_address": _address(contract.to, visible),
        }
        if contract.type == "TransferAssetContract":
            name = contract.asset_name
            value["asset_name"] = name.decode() if visible else name.hex()
    raw: dict[str, Any] = {
        "contract": [
            {
                "parameter": {"value": value, "type_url": contract.type_url},
                "type": contract.type,
            }
        ],
        "ref_block_bytes": tx.raw.ref_block_bytes.hex(),
        "ref_block_hash": tx.raw.ref_block_hash.hex(),
        "expiration": tx.raw.expiration,
    }
    if tx.raw.fee_limit:
        raw["fee_limit"] = tx.raw.fee_limit
    raw["timestamp"] = tx.raw.timestamp
    return {
        "ret": [{"contractRet": "SUCCESS" if tx.success else "REVERT"}],
        "signature": [tx.signature],
        "txID": tx.hash,
        "raw_data": raw,
        "raw_data_hex": tx.raw.encode().hex(),
    }


def transfer_log(tx: Tx, visible: bool) -> dict[str, Any]:
    """The token's ``Transfer(from, to, value)`` log of a successful TRC-20 transfer."""
    assert tx.token is not None
    return {
        # The node keeps a log's address as the 20 EVM bytes; visible=true puts 41 back.
        "address": to_base58(tx.token) if visible else tx.token[1:].hex(),
        "topics": [TRANSFER_TOPIC, word(tx.sender[1:]), word(tx.recipient[1:])],
        "data": word(tx.units),
    }


def info(tx: Tx, visible: bool) -> dict[str, Any]:
    """``/wallet*/gettransactioninfobyid``: the block, the fee, the receipt and the logs."""
    out: dict[str, Any] = {"id": tx.hash}
    if tx.token is None:
        net = ASSET_NET if tx.kind == "trc10" else TRANSFER_NET
        out.update(
            blockNumber=tx.block_number,
            blockTimeStamp=tx.block_time_ms,
            contractResult=[""],
            receipt={"net_usage": net},
        )
        return out
    energy = USDT_ENERGY if tx.success else REVERT_ENERGY
    fee = energy * ENERGY_PRICE_SUN
    receipt: dict[str, Any] = {
        "energy_fee": fee,
        "energy_usage_total": energy,
        "net_usage": TRIGGER_NET,
        "result": "SUCCESS" if tx.success else "REVERT",
    }
    if tx.success:
        receipt["energy_penalty_total"] = USDT_PENALTY
    out.update(
        fee=fee,
        blockNumber=tx.block_number,
        blockTimeStamp=tx.block_time_ms,
        contractResult=[word(0) if tx.success else ""],
        contract_address=_address(tx.token, visible),
        receipt=receipt,
    )
    if tx.success:
        out["log"] = [transfer_log(tx, visible)]
    else:
        out["result"] = "FAILED"
        out["resMessage"] = REVERT_MESSAGE if visible else REVERT_MESSAGE.encode().hex()
    return out


def events(tx: Tx, solid: bool) -> list[dict[str, Any]]:
    """TronGrid's ``/v1/transactions/{id}/events``: the decoded Transfer event, if any."""
    if tx.token is None or not tx.success:
        return []
    sender, recipient = "0x" + tx.sender[1:].hex(), "0x" + tx.recipient[1:].hex()
    contract = to_base58(tx.token)
    event: dict[str, Any] = {
        "block_number": tx.block_number,
        "block_timestamp": tx.block_time_ms,
        "caller_contract_address": contract,
        "contract_address": contract,
        "event_index": 0,
        "event_name": "Transfer",
        "result": {
            "0": sender,
            "1": recipient,
            "2": str(tx.units),
            "from": sender,
            "to": recipient,
            "value": str(tx.units),
        },
        "result_type": {"from": "address", "to": "address", "value": "uint256"},
        "event": TRANSFER_EVENT,
        "transaction_id": tx.hash,
    }
    if not solid:
        event["_unconfirmed"] = True
    return [event]


def block(chain: Chain, solid: bool, visible: bool) -> dict[str, Any]:
    """``/wallet*/getnowblock`` without its transactions: the head (or solid head) block."""
    number, time_ms = chain.solid_head() if solid else chain.head()
    return _block(chain, number, time_ms, visible)


def block_by_number(chain: Chain, number: int, solid: bool, visible: bool) -> dict[str, Any]:
    """``/wallet*/getblockbynum`` without its transactions: ``{}`` for a block the node does not
    have (past its head, or its solid head). Block 0 carries the network's genesis id."""
    head, head_ms = chain.solid_head() if solid else chain.head()
    if not 0 <= number <= head:
        return {}
    return _block(chain, number, head_ms - (head - number) * BLOCK_MS if number else 0, visible)


def _block(chain: Chain, number: int, time_ms: int, visible: bool) -> dict[str, Any]:
    block_id = chain.block_id(number)
    witness = b"\x41" + chain.block_id(number // 27)[12:32]  # 27 super representatives
    parent = chain.block_id(number - 1) if number else hashlib.sha256(block_id).digest()
    raw: dict[str, Any] = {
        "number": number,
        "txTrieRoot": hashlib.sha256(block_id).hexdigest(),
        "witness_address": _address(witness, visible),
        "parentHash": parent.hex(),
        "version": 32,
        "timestamp": time_ms,
    }
    header: dict[str, Any] = {"raw_data": raw}
    if number == 0:
        # proto3 leaves out zeros: the genesis block shows no number, time or version, and no
        # witness signed it.
        for name in ("number", "timestamp", "version"):
            del raw[name]
    else:
        header["witness_signature"] = hashlib.sha512(block_id).hexdigest() + "00"
    return {"blockID": block_id.hex(), "block_header": header}
