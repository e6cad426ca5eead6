"""TRON payments: addresses, networks, the TronGrid client, the verifier and TRX prices.

A layer beside the engine and the Telegram client: it knows the settings and nothing else of
the product.
"""

from sponsorbot.tron.address import AddressError, from_hex, is_address, parse_address, to_base58
from sponsorbot.tron.check import verify_hash
from sponsorbot.tron.client import TronGrid, TronGridError
from sponsorbot.tron.networks import (
    NETWORKS,
    HashError,
    NetworkInfo,
    network_info,
    network_of_genesis,
    network_of_link,
    parse_hash,
    tronscan_url,
    usdt_network,
)
from sponsorbot.tron.prices import PriceSources, PriceUnavailable, Quote
from sponsorbot.tron.verifier import (
    CLOCK_SKEW,
    REASONS,
    Transfer,
    Verdict,
    credited_usdt,
    verify,
)

__all__ = [
    "CLOCK_SKEW",
    "NETWORKS",
    "REASONS",
    "AddressError",
    "HashError",
    "NetworkInfo",
    "PriceSources",
    "PriceUnavailable",
    "Quote",
    "Transfer",
    "TronGrid",
    "TronGridError",
    "Verdict",
    "credited_usdt",
    "from_hex",
    "is_address",
    "network_info",
    "network_of_genesis",
    "network_of_link",
    "parse_address",
    "parse_hash",
    "to_base58",
    "tronscan_url",
    "usdt_network",
    "verify",
    "verify_hash",
]
