"""TRON's byte formats for the simulated chain: addresses, ABI words and ``raw_data``.

A TRON address is 21 bytes: ``0x41`` and the 20 bytes an EVM address would have. Nodes show it
as hex (``41...``) or, with ``visible=true``, in Base58Check (``T...``); a contract's event log
carries only the 20 bytes. A transaction's id is the SHA-256 of its ``raw_data`` protobuf bytes,
so the simulator encodes ``raw_data`` as java-tron does: a client that checks ``txID`` against
``raw_data_hex`` finds them matching, as on the real chain.

The simulator may not import ``sponsorbot.tron``: these few helpers are its own.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import base58

PREFIX = 0x41
_HEX = re.compile(r"[0-9a-fA-F]*")

# keccak256("Transfer(address,address,uint256)"): hashlib has no Keccak (its sha3 pads
# differently), and the value is a constant of every ERC-20/TRC-20 log.
TRANSFER_TOPIC = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
TRANSFER_SELECTOR = "a9059cbb"  # transfer(address,uint256)


class AddressError(ValueError):
    """Text that is no TRON address (bad Base58, checksum, length or prefix)."""


def to_base58(raw: bytes) -> str:
    """The ``T...`` form of a 21-byte address."""
    return base58.b58encode_check(raw).decode()


def parse_address(text: str) -> bytes:
    """21 address bytes from Base58Check ``T...``, hex ``41...`` or 20-byte hex ``0x...``."""
    text = text.strip()
    if text.startswith("T"):
        try:
            raw = base58.b58decode_check(text)
        except ValueError as exc:
            raise AddressError(f"{text!r} is not a Base58Check address") from exc
    else:
        digits = text.removeprefix("0x")
        if not _HEX.fullmatch(digits) or len(digits) not in (40, 42):
            raise AddressError(f"{text!r} is not a TRON address")
        raw = bytes.fromhex(digits if len(digits) == 42 else "41" + digits)
    if len(raw) != 21 or raw[0] != PREFIX:
        raise AddressError(f"{text!r} is not a TRON address (21 bytes starting 0x41)")
    return raw


def word(value: int | bytes) -> str:
    """One 32-byte ABI word in hex: an unsigned number, or bytes padded on the left."""
    if isinstance(value, bytes):
        return value.rjust(32, b"\0").hex()
    return value.to_bytes(32, "big").hex()


def transfer_call(to: bytes, amount: int) -> str:
    """The call data of ``transfer(to, amount)``: selector, 20-byte address word, amount word."""
    return TRANSFER_SELECTOR + word(to[1:]) + word(amount)


# Protobuf, only as much as raw_data needs ------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _int_field(number: int, value: int) -> bytes:
    # proto3 leaves out fields at their default, and so does the hash of the real transaction.
    return _varint(number << 3) + _varint(value) if value else b""


def _bytes_field(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value if value else b""


CONTRACT_TYPES = {"TransferContract": 1, "TransferAssetContract": 2, "TriggerSmartContract": 31}


@dataclass(frozen=True, slots=True)
class Contract:
    """The one contract of a transaction, with the fields these three types use."""

    type: str
    owner: bytes
    to: bytes = b""  # TransferContract, TransferAssetContract
    amount: int = 0  # sun, or the TRC-10 token's units
    asset_name: bytes = b""  # TransferAssetContract: the token id as text, "1002000"
    contract_address: bytes = b""  # TriggerSmartContract
    data: bytes = b""  # TriggerSmartContract call data

    def value_bytes(self) -> bytes:
        """The contract message itself (``parameter.value`` of the Any)."""
        if self.type == "TransferContract":
            return (
                _bytes_field(1, self.owner) + _bytes_field(2, self.to) + _int_field(3, self.amount)
            )
        if self.type == "TransferAssetContract":
            return (
                _bytes_field(1, self.asset_name)
                + _bytes_field(2, self.owner)
                + _bytes_field(3, self.to)
                + _int_field(4, self.amount)
            )
        return (
            _bytes_field(1, self.owner)
            + _bytes_field(2, self.contract_address)
            + _bytes_field(4, self.data)
        )

    @property
    def type_url(self) -> str:
        """The Any's type URL, as nodes print it."""
        return "type.googleapis.com/protocol." + self.type


@dataclass(frozen=True, slots=True)
class Raw:
    """``Transaction.raw``: what the payer signs, and what the id is the hash of."""

    ref_block_bytes: bytes
    ref_block_hash: bytes
    expiration: int
    contract: Contract
    timestamp: int
    fee_limit: int = 0

    def encode(self) -> bytes:
        """The protobuf bytes, field by field in number order as protobuf writes them."""
        contract = self.contract
        any_message = _bytes_field(1, contract.type_url.encode()) + _bytes_field(
            2, contract.value_bytes()
        )
        contract_message = _int_field(1, CONTRACT_TYPES[contract.type]) + _bytes_field(
            2, any_message
        )
        return (
            _bytes_field(1, self.ref_block_bytes)
            + _bytes_field(4, self.ref_block_hash)
            + _int_field(8, self.expiration)
            + _bytes_field(11, contract_message)
            + _int_field(14, self.timestamp)
            + _int_field(18, self.fee_limit)
        )

    def tx_id(self) -> str:
        """The transaction's id: SHA-256 of the raw bytes, 64 lower-case hex."""
        return hashlib.sha256(self.encode()).hexdigest()
