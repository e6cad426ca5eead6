"""The TRON networks we accept payments on, and the transaction hashes and links people paste.

Each network has one official USDT (TRC-20, 6 decimals) contract; only its Transfer logs count.
The addresses are written once, in Base58 as their issuers publish them, and decoded (checksum
verified) at import, so a typo here fails loudly instead of comparing against wrong bytes.

Each network is also known by the id of its block 0 (``blockID`` of ``/wallet/getblockbynum``
``{"num": 0}``), which a node of another chain cannot give: the verifier asks a node for it
before believing any of its answers (ADR 0018). A TRON block id starts with the block's number
in 8 bytes, so every genesis id starts with 16 zeros; TRON's ``eth_chainId`` is its last 4 bytes
(0x2b6653dc, 0xcd8690dc, 0x94a9059e in TRON's JSON-RPC reference), which the values below end in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from sponsorbot.config import TronNetwork
from sponsorbot.tron.address import parse_address

__all__ = [
    "NETWORKS",
    "HashError",
    "NetworkInfo",
    "network_info",
    "network_of_genesis",
    "network_of_link",
    "parse_hash",
    "tronscan_url",
    "usdt_network",
]


@dataclass(frozen=True)
class NetworkInfo:
    """What the verifier and the shop need to know about one network."""

    network: TronNetwork
    usdt_base58: str
    usdt: bytes
    tronscan: str
    genesis_id: str  # blockID of block 0, lower-case hex

    def tx_url(self, tx_hash: str) -> str:
        """The TronScan page of a transaction on this network."""
        return f"{self.tronscan}/#/transaction/{tx_hash}"


def _info(network: TronNetwork, usdt_base58: str, tronscan: str, genesis_id: str) -> NetworkInfo:
    if not re.fullmatch(r"0{16}[0-9a-f]{48}", genesis_id):
        raise ValueError(f"{network}: a genesis block id is 0 in 8 bytes, then 24 bytes of hex")
    return NetworkInfo(network, usdt_base58, parse_address(usdt_base58), tronscan, genesis_id)


NETWORKS: Mapping[TronNetwork, NetworkInfo] = MappingProxyType(
    {
        TronNetwork.MAINNET: _info(
            TronNetwork.MAINNET,
            "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
            "https://tronscan.org",
            "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc",
        ),
        TronNetwork.NILE: _info(
            TronNetwork.NILE,
            "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf",
            "https://nile.tronscan.org",
            "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc",
        ),
        TronNetwork.SHASTA: _info(
            TronNetwork.SHASTA,
            "TG3XXyExBkPp9nzdajDZsozEu4BkaSJozs",
            "https://shasta.tronscan.org",
            "0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e",
        ),
    }
)
_BY_USDT = {info.usdt: network for network, info in NETWORKS.items()}
_BY_GENESIS = {info.genesis_id: network for network, info in NETWORKS.items()}


def network_info(network: TronNetwork) -> NetworkInfo:
    """The :class:`NetworkInfo` of ``network``."""
    return NETWORKS[network]


def usdt_network(contract: bytes) -> TronNetwork | None:
    """The network whose official USDT contract is ``contract`` (21 bytes), if any."""
    return _BY_USDT.get(contract)


def network_of_genesis(block_id: str) -> TronNetwork | None:
    """The network whose block 0 has the id ``block_id`` (hex, any case), if it is one of ours."""
    return _BY_GENESIS.get(block_id.lower())


def tronscan_url(network: TronNetwork, tx_hash: str) -> str:
    """The TronScan page of ``tx_hash`` on ``network``."""
    return NETWORKS[network].tx_url(tx_hash)


class HashError(ValueError):
    """Text that is neither a transaction hash nor a TronScan transaction link."""


_HASH_RE = re.compile(r"(?:0[xX])?([0-9a-fA-F]{64})")
# TronScan puts the page after a '#'; anything after the hash (a tab, a query) is ignored.
_LINK_RE = re.compile(
    r"(?:https?://)?(?:www\.)?(?:(nile|shasta)\.)?tronscan\.org/?#/transaction/"
    r"([0-9a-fA-F]{64})(?:[/?#].*)?",
    re.IGNORECASE,
)
_SHOWN_CHARS = 100


def parse_hash(text: str) -> str:
    """The lower-case 64-hex transaction hash in ``text``.

    Accepts the hash itself (any case, optional ``0x``) or a TronScan transaction link
    (``tronscan.org``, ``nile.tronscan.org``, ``shasta.tronscan.org``; with or without
    ``https://``). Anything else raises :class:`HashError`.
    """
    candidate = text.strip()
    if match := _HASH_RE.fullmatch(candidate):
        return match.group(1).lower()
    if match := _LINK_RE.fullmatch(candidate):
        return match.group(2).lower()
    shown = candidate if len(candidate) <= _SHOWN_CHARS else candidate[:_SHOWN_CHARS] + "…"
    raise HashError(
        f"not a transaction hash: {shown!r}; send the 64-character hash "
        "or the TronScan link of the transaction"
    )


def network_of_link(text: str) -> TronNetwork | None:
    """The network a TronScan link names; None for a bare hash or anything else."""
    match = _LINK_RE.fullmatch(text.strip())
    if match is None:
        return None
    subdomain = match.group(1)
    return TronNetwork(subdomain.lower()) if subdomain else TronNetwork.MAINNET
