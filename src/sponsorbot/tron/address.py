"""TRON addresses: 21 bytes (0x41 and 20 bytes of account), shown as Base58Check ``T...``.

Everything inside the package compares the raw 21 bytes; text forms exist only at the edges.
"""

from __future__ import annotations

import hashlib
import re

import base58

__all__ = [
    "ADDRESS_LENGTH",
    "TRON_PREFIX",
    "AddressError",
    "from_hex",
    "is_address",
    "parse_address",
    "to_base58",
]

TRON_PREFIX = 0x41
ADDRESS_LENGTH = 21
_CHECKSUM_LENGTH = 4
_HEX_RE = re.compile(r"[0-9a-fA-F]*")
_BASE58_CHARS = frozenset(base58.BITCOIN_ALPHABET.decode("ascii"))
# Enough of a bad input to recognise it in a message, never a page of it.
_SHOWN_CHARS = 48


class AddressError(ValueError):
    """Text that is not a TRON address; the message says what is wrong with it."""


def _shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…")


def _checksum(payload: bytes) -> bytes:
    return hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:_CHECKSUM_LENGTH]


def parse_address(text: str) -> bytes:
    """The 21 bytes of a Base58Check TRON address (``T...``), checksum verified.

    Surrounding whitespace is ignored (addresses are pasted); anything else wrong raises
    :class:`AddressError` naming the problem.
    """
    candidate = text.strip()
    if not candidate:
        raise AddressError("not a TRON address: the text is empty")
    bad = next((c for c in candidate if c not in _BASE58_CHARS), None)
    if bad is not None:
        # Base58 leaves out 0, O, I and l so that they cannot be confused; say which one it was.
        raise AddressError(f"not Base58: {_shown(candidate)} contains {bad!r}")
    decoded = base58.b58decode(candidate)
    expected = ADDRESS_LENGTH + _CHECKSUM_LENGTH
    if len(decoded) != expected:
        raise AddressError(
            f"wrong length: {_shown(candidate)} decodes to {len(decoded)} bytes, "
            f"a TRON address to {expected}"
        )
    payload, checksum = decoded[:ADDRESS_LENGTH], decoded[ADDRESS_LENGTH:]
    if _checksum(payload) != checksum:
        raise AddressError(f"wrong checksum: {_shown(candidate)} has a mistyped character")
    if payload[0] != TRON_PREFIX:
        raise AddressError(
            f"not a TRON address: {_shown(candidate)} starts with byte 0x{payload[0]:02x}, "
            "TRON addresses with 0x41 (they read T...)"
        )
    return payload


def to_base58(raw: bytes) -> str:
    """The Base58Check text (``T...``) of a 21-byte address."""
    if len(raw) != ADDRESS_LENGTH or raw[0] != TRON_PREFIX:
        raise AddressError(f"not a TRON address: {len(raw)} bytes starting {raw[:1].hex()!r}")
    return base58.b58encode(raw + _checksum(raw)).decode("ascii")


def from_hex(text: str) -> bytes:
    """The 21 bytes of a hex address: ``41`` + 40 hex, or the 40 hex of an EVM-style address.

    The 40-hex form is how TronGrid writes log addresses and the tail of a topic word; the
    0x41 that TRON puts in front of every account is added back. A ``0x`` prefix is allowed.
    """
    digits = text[2:] if text[:2] in ("0x", "0X") else text
    if not _HEX_RE.fullmatch(digits):
        raise AddressError(f"not hex: {_shown(text)}")
    if len(digits) == 2 * (ADDRESS_LENGTH - 1):
        return bytes([TRON_PREFIX]) + bytes.fromhex(digits)
    if len(digits) == 2 * ADDRESS_LENGTH:
        raw = bytes.fromhex(digits)
        if raw[0] != TRON_PREFIX:
            raise AddressError(f"not a TRON address: {_shown(text)} does not start with 41")
        return raw
    raise AddressError(
        f"wrong length: {_shown(text)} has {len(digits)} hex digits, an address 40 or 42"
    )


def is_address(text: str) -> bool:
    """Whether ``text`` is a valid Base58Check TRON address."""
    try:
        parse_address(text)
    except AddressError:
        return False
    return True
