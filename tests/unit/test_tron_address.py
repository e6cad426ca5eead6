"""TRON addresses (Base58Check and hex), the networks' official USDT, hashes and links."""

from __future__ import annotations

import base58
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.config import TronNetwork
from sponsorbot.tron import (
    NETWORKS,
    AddressError,
    HashError,
    from_hex,
    is_address,
    network_info,
    network_of_link,
    parse_address,
    parse_hash,
    to_base58,
    tronscan_url,
    usdt_network,
)

# (Base58, hex) pairs published together: TRON's protocol documentation's worked example, the
# mainnet USDT contract as TronGrid writes it, and the recipient of a Nile USDT transfer in
# the wallet-cli documentation.
KNOWN = [
    ("TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW", "415a523b449890854c8fc460ab602df9f31fe4293f"),
    ("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"),
    ("TR311sD6KasRnofj5RnFiFBA2rH8RH2kYk", "41a5418b8da12e73075abb46375e7a15c758ea21fc"),
]
BASE58_ALPHABET = base58.BITCOIN_ALPHABET.decode()

MAINNET = TronNetwork.MAINNET

raw_addresses = st.binary(min_size=20, max_size=20).map(lambda b: b"\x41" + b)


@pytest.mark.parametrize(("text", "hex41"), KNOWN)
def test_known_addresses_round_trip(text: str, hex41: str) -> None:
    raw = parse_address(text)
    assert raw.hex() == hex41
    assert len(raw) == 21
    assert to_base58(raw) == text
    assert from_hex(hex41) == raw
    assert from_hex(hex41[2:]) == raw  # the 20-byte form of log addresses and topics
    assert from_hex("0x" + hex41[2:].upper()) == raw
    assert is_address(text)


@pytest.mark.parametrize(("text", "_hex41"), KNOWN)
def test_every_one_character_change_fails(text: str, _hex41: str) -> None:
    for position, original in enumerate(text):
        for replacement in BASE58_ALPHABET:
            if replacement == original:
                continue
            changed = text[:position] + replacement + text[position + 1 :]
            with pytest.raises(AddressError):
                parse_address(changed)
            assert not is_address(changed)


def test_a_changed_character_is_reported_as_a_wrong_checksum() -> None:
    text = KNOWN[0][0]
    changed = text[:10] + ("a" if text[10] != "a" else "b") + text[11:]
    with pytest.raises(AddressError, match="wrong checksum"):
        parse_address(changed)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxM0", "not Base58"),
        ("TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMl", "contains 'l'"),
        ("TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW ü", "not Base58"),
        ("TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sx", "wrong length"),
        ("TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMWW", "wrong length"),
        # A Bitcoin address: valid Base58Check of the right size, but version byte 0x00.
        ("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "not a TRON address"),
        ("0x5a523b449890854c8fc460ab602df9f31fe4293f", "not Base58"),
    ],
)
def test_what_is_wrong_is_said(text: str, words: str) -> None:
    with pytest.raises(AddressError, match=words) as caught:
        parse_address(text)
    assert isinstance(caught.value, ValueError)
    assert "\n" not in str(caught.value)
    assert not is_address(text)


def test_pasted_whitespace_is_ignored() -> None:
    text, hex41 = KNOWN[0]
    assert parse_address(f"  {text}\n").hex() == hex41


def test_a_long_input_is_not_echoed_whole() -> None:
    with pytest.raises(AddressError) as caught:
        parse_address("T" * 5000)
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize(
    "text",
    [
        "",
        "41",
        "5a523b449890854c8fc460ab602df9f31fe4293",  # 39 digits
        "425a523b449890854c8fc460ab602df9f31fe4293f",  # 21 bytes, not 0x41
        "zz5a523b449890854c8fc460ab602df9f31fe4293f",
        "0x",
        "+x5a523b449890854c8fc460ab602df9f31fe4293f",
    ],
)
def test_bad_hex_is_refused(text: str) -> None:
    with pytest.raises(AddressError):
        from_hex(text)


@pytest.mark.parametrize("raw", [b"", b"\x41" * 20, b"\x42" + b"\x00" * 20, b"\x41" * 22])
def test_only_21_bytes_starting_0x41_have_a_base58_form(raw: bytes) -> None:
    with pytest.raises(AddressError):
        to_base58(raw)


@given(raw_addresses)
def test_base58_round_trips(raw: bytes) -> None:
    text = to_base58(raw)
    assert text.startswith("T")
    assert len(text) == 34
    assert parse_address(text) == raw
    assert to_base58(parse_address(text)) == text
    assert from_hex(raw.hex()) == raw
    assert from_hex(raw[1:].hex()) == raw


@given(st.text(max_size=40))
def test_arbitrary_text_is_an_address_or_an_address_error(text: str) -> None:
    try:
        raw = parse_address(text)
    except AddressError:
        return
    assert to_base58(raw) == text.strip()


# --- Networks ----------------------------------------------------------------------------


def test_each_network_has_its_official_usdt_decoded() -> None:
    assert set(NETWORKS) == set(TronNetwork)
    assert network_info(TronNetwork.MAINNET).usdt.hex() == (
        "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"
    )
    for network, info in NETWORKS.items():
        assert info.network is network
        assert info.usdt == parse_address(info.usdt_base58)
        assert usdt_network(info.usdt) is network
    assert len({info.usdt for info in NETWORKS.values()}) == 3


def test_usdt_network_compares_all_21_bytes() -> None:
    official = network_info(TronNetwork.MAINNET).usdt
    assert usdt_network(official[:20] + bytes([official[20] ^ 1])) is None
    assert usdt_network(official[1:]) is None  # the 20-byte log form must be widened first
    assert usdt_network(parse_address(KNOWN[0][0])) is None


@pytest.mark.parametrize(
    ("network", "url"),
    [
        (TronNetwork.MAINNET, "https://tronscan.org/#/transaction/ab"),
        (TronNetwork.NILE, "https://nile.tronscan.org/#/transaction/ab"),
        (TronNetwork.SHASTA, "https://shasta.tronscan.org/#/transaction/ab"),
    ],
)
def test_tronscan_links(network: TronNetwork, url: str) -> None:
    assert tronscan_url(network, "ab") == url
    assert network_info(network).tx_url("ab") == url


# --- Hashes and links --------------------------------------------------------------------

HASH = "b69c51db8f9d974e6a38c76852c8ce1adcb682dbacb25ad8ad4f6876121fe9dc"


@pytest.mark.parametrize(
    ("text", "network"),
    [
        (HASH, None),
        (HASH.upper(), None),
        ("0x" + HASH, None),
        (f"  {HASH}\n", None),
        (f"https://tronscan.org/#/transaction/{HASH}", MAINNET),
        (f"tronscan.org/#/transaction/{HASH}", MAINNET),
        (f"http://www.tronscan.org/#/transaction/{HASH}", MAINNET),
        (f"https://nile.tronscan.org/#/transaction/{HASH}", TronNetwork.NILE),
        (f"shasta.tronscan.org/#/transaction/{HASH.upper()}", TronNetwork.SHASTA),
        (f"https://tronscan.org/#/transaction/{HASH}/internal-transactions", MAINNET),
        (f"https://tronscan.org/#/transaction/{HASH}?lang=fa", MAINNET),
    ],
)
def test_hashes_and_tronscan_links_are_read(text: str, network: TronNetwork | None) -> None:
    assert parse_hash(text) == HASH
    assert network_of_link(text) == network


@pytest.mark.parametrize(
    "text",
    [
        "",
        HASH[:-1],
        HASH + "0",
        "0x" + HASH[:-1] + "g",
        f"https://evil.example/#/transaction/{HASH}",
        f"https://tronscan.org.evil.example/#/transaction/{HASH}",
        f"https://moon.tronscan.org/#/transaction/{HASH}",
        f"https://tronscan.org/#/address/{HASH}",
        f"https://tronscan.org/#/transaction/{HASH}0",
        f"{HASH} {HASH}",
    ],
)
def test_anything_else_is_a_clear_hash_error(text: str) -> None:
    with pytest.raises(HashError, match="not a transaction hash") as caught:
        parse_hash(text)
    assert isinstance(caught.value, ValueError)
    assert network_of_link(text) is None
