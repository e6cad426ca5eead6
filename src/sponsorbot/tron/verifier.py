"""The payment verifier (docs/shop-payments.md): from TronGrid's two answers to a verdict, purely.

Inputs are the parsed JSON of ``/wallet/gettransactionbyid`` (the transaction as signed, plus
``ret``) and of ``/walletsolidity/gettransactioninfobyid`` (its solidified execution: block
time, receipt, logs). Nothing here does I/O, reads a clock or trusts a field the payer chose:

- USDT comes only from ``Transfer`` logs emitted by the network's official USDT contract, never
  from a token's name or the call data (a contract can say anything in its call data; only the
  official contract's own log says its balances moved).
- TRX comes only from a top-level ``TransferContract``.
- The time is the block's (``blockTimeStamp``), never ``raw_data.timestamp``, which the payer
  sets when signing.

Addresses are compared as 21 bytes. Any malformed part of an answer is skipped, never credited.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_DOWN, Decimal
from typing import Any, Final, Literal

from sponsorbot.config import TronNetwork
from sponsorbot.tron.address import AddressError, from_hex, parse_address, to_base58
from sponsorbot.tron.networks import network_info, usdt_network

__all__ = [
    "CLOCK_SKEW",
    "REASONS",
    "TRANSFER_TOPIC",
    "Coin",
    "Transfer",
    "Verdict",
    "VerdictKind",
    "credited_usdt",
    "transfer_logs",
    "trx_transfers",
    "verify",
]

Coin = Literal["USDT", "TRX"]
VerdictKind = Literal["credit", "reject", "wait"]
JsonDict = Mapping[str, Any]

NO_USDT: Final = "no_usdt"
WRONG_ADDRESS: Final = "wrong_address"
TOO_EARLY: Final = "too_early"
FAILED: Final = "failed"
WRONG_NETWORK: Final = "wrong_network"
UNKNOWN: Final = "unknown"
UNCONFIRMED: Final = "unconfirmed"
# Decided by the database when crediting (a hash pays one order once), not here.
ALREADY_USED: Final = "already_used"
REASONS: Final = (
    NO_USDT,
    WRONG_ADDRESS,
    TOO_EARLY,
    FAILED,
    WRONG_NETWORK,
    UNKNOWN,
    UNCONFIRMED,
    ALREADY_USED,
)

# keccak256("Transfer(address,address,uint256)")
TRANSFER_TOPIC: Final = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
CLOCK_SKEW: Final = timedelta(minutes=2)
# USDT has 6 decimals; a TRX is 10**6 sun: both amounts are integers of millionths.
_DECIMALS: Final = 6
_MICRO: Final = Decimal("0.000001")
_SUCCESS: Final = "SUCCESS"
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_WORD_RE: Final = re.compile(r"(?:0[xX])?([0-9a-fA-F]{64})")
_ADDRESS_WORD_PAD: Final = "0" * 24


@dataclass(frozen=True)
class Transfer:
    """One movement of coins: ``units`` are millionths (micro-USDT, or sun for TRX)."""

    coin: Coin
    from_: bytes
    to: bytes
    units: int

    @property
    def amount(self) -> Decimal:
        """The amount in whole coins, exactly."""
        return _whole(self.units)


@dataclass(frozen=True)
class Verdict:
    """What the verifier decided, and what it saw (for the owner and the advertiser)."""

    verdict: VerdictKind
    reason: str | None = None
    coin: Coin | None = None
    amount: Decimal | None = None
    from_: bytes | None = None
    to: bytes | None = None
    credited_usdt: Decimal | None = None
    block_time: datetime | None = None

    def to_json(self) -> dict[str, str | None]:
        """What `sponsorbot payments verify` prints: decimals as strings, addresses in Base58."""
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "coin": self.coin,
            "amount": _decimal_text(self.amount),
            "from": to_base58(self.from_) if self.from_ is not None else None,
            "to": to_base58(self.to) if self.to is not None else None,
            "credited_usdt": _decimal_text(self.credited_usdt),
            "block_time": self.block_time.isoformat() if self.block_time is not None else None,
        }


def _decimal_text(value: Decimal | None) -> str | None:
    # "f" keeps a plain decimal: never "1E+3" or "1E-6" in a JSON line read by people.
    return format(value, "f") if value is not None else None


def _whole(units: int) -> Decimal:
    # Built from text, so it is exact whatever the size (arithmetic would round at 28 digits).
    return Decimal(f"{units}e-{_DECIMALS}")


def credited_usdt(amount: Decimal, rate: Decimal) -> Decimal:
    """``amount`` × ``rate`` rounded down to 6 places (a millionth of a USDT), exactly."""
    _check_rate(rate)
    with decimal.localcontext() as ctx:
        # Enough precision for the product to be exact before the one rounding we want.
        ctx.prec = decimal.MAX_PREC
        ctx.Emax = decimal.MAX_EMAX
        ctx.Emin = decimal.MIN_EMIN
        return (amount * rate).quantize(_MICRO, rounding=ROUND_DOWN)


def _check_rate(rate: Decimal) -> None:
    if not isinstance(rate, Decimal) or not rate.is_finite() or rate <= 0:
        raise ValueError(f"the TRX rate must be a positive finite Decimal, got {rate!r}")


def _account(value: object) -> bytes | None:
    """An address field: hex (``41...``, as with visible=false) or Base58 (visible=true)."""
    if not isinstance(value, str):
        return None
    try:
        return parse_address(value) if value.startswith("T") else from_hex(value)
    except AddressError:
        return None


def _hex_word(value: object) -> str | None:
    """A 32-byte word as 64 lower-case hex digits (TronGrid writes them without 0x)."""
    match = _WORD_RE.fullmatch(value) if isinstance(value, str) else None
    return match.group(1).lower() if match else None


def _word_address(value: object) -> bytes | None:
    """The address in an indexed topic: 12 zero bytes, then 20 bytes of account."""
    word = _hex_word(value)
    if word is None or not word.startswith(_ADDRESS_WORD_PAD):
        return None
    return from_hex(word[len(_ADDRESS_WORD_PAD) :])


def _transfer_log(log: object) -> tuple[bytes, Transfer] | None:
    """(emitting contract, transfer) of a well-formed ERC-20 style Transfer log, else None."""
    if not isinstance(log, Mapping):
        return None
    contract = _account(log.get("address"))
    topics = log.get("topics")
    if contract is None or not isinstance(topics, list) or len(topics) != 3:
        return None
    if _hex_word(topics[0]) != TRANSFER_TOPIC:
        return None
    sender, recipient = _word_address(topics[1]), _word_address(topics[2])
    value = _hex_word(log.get("data"))
    if sender is None or recipient is None or value is None:
        return None
    units = int(value, 16)
    # Zero-value transfers carry nothing; they are a known trick to plant look-alike addresses
    # in a wallet's history, so they are not payments.
    if units == 0:
        return None
    return contract, Transfer("USDT", sender, recipient, units)


def transfer_logs(info: JsonDict) -> list[tuple[bytes, Transfer]]:
    """Every well-formed Transfer log of a transaction info, with the contract that emitted it.

    The coin is labelled USDT; whether it *is* USDT depends on the contract, which the caller
    compares with the network's official one.
    """
    logs = info.get("log")
    if not isinstance(logs, list):
        return []
    return [found for log in logs if (found := _transfer_log(log)) is not None]


def trx_transfers(transaction: JsonDict) -> list[Transfer]:
    """The top-level TRX transfers (``TransferContract``) of a transaction.

    TRC-10 tokens (``TransferAssetContract``), TRX sent along a contract call (``call_value``)
    and internal transactions are not top-level TRX transfers and are not counted.
    """
    raw = transaction.get("raw_data")
    contracts = raw.get("contract") if isinstance(raw, Mapping) else None
    if not isinstance(contracts, list):
        return []
    found = []
    for contract in contracts:
        if not isinstance(contract, Mapping) or contract.get("type") != "TransferContract":
            continue
        parameter = contract.get("parameter")
        value = parameter.get("value") if isinstance(parameter, Mapping) else None
        if not isinstance(value, Mapping):
            continue
        amount = value.get("amount")
        sender, recipient = _account(value.get("owner_address")), _account(value.get("to_address"))
        # bool is an int in Python; a JSON true is not an amount.
        if type(amount) is not int or amount <= 0 or sender is None or recipient is None:
            continue
        found.append(Transfer("TRX", sender, recipient, amount))
    return found


def _contract_types(transaction: JsonDict) -> list[object]:
    raw = transaction.get("raw_data")
    contracts = raw.get("contract") if isinstance(raw, Mapping) else None
    if not isinstance(contracts, list):
        return []
    return [c.get("type") for c in contracts if isinstance(c, Mapping)]


def _failed(transaction: JsonDict, info: JsonDict) -> bool:
    """Whether either answer says the transaction did not succeed."""
    ret = transaction.get("ret")
    if not isinstance(ret, list) or not ret:
        return True
    if any(not isinstance(r, Mapping) or r.get("contractRet") != _SUCCESS for r in ret):
        return True
    # TronGrid leaves "result" out on success (the protobuf default) and writes "FAILED".
    if info.get("result", _SUCCESS) != _SUCCESS:
        return True
    receipt = info.get("receipt")
    receipt_result = receipt.get("result") if isinstance(receipt, Mapping) else None
    if receipt_result is not None and receipt_result != _SUCCESS:
        return True
    # A contract call always has a receipt result; without one nothing says it ran to the end.
    return "TriggerSmartContract" in _contract_types(transaction) and receipt_result != _SUCCESS


def _block_time(info: JsonDict) -> datetime | None:
    stamp = info.get("blockTimeStamp")
    if type(stamp) is not int or stamp <= 0:
        return None
    try:
        return _EPOCH + timedelta(milliseconds=stamp)
    except OverflowError:
        return None


def verify(
    transaction: JsonDict | None,
    info: JsonDict | None,
    *,
    network: TronNetwork,
    address: bytes,
    approved_at: datetime,
    accept_trx: bool,
    trx_rate: Decimal | None = None,
) -> Verdict:
    """Judge one transaction as a payment to ``address`` for an order approved at ``approved_at``.

    ``transaction`` and ``info`` are TronGrid's answers (None or ``{}``: not known / not yet
    solidified). ``trx_rate`` is USDT per TRX, locked when the order was approved; without it a
    TRX payment is still judged but ``credited_usdt`` is None.
    """
    if approved_at.tzinfo is None:
        raise ValueError("approved_at must be timezone-aware")
    if trx_rate is not None:
        _check_rate(trx_rate)
    if not transaction:
        return Verdict("wait", UNKNOWN)
    if not info:
        return Verdict("wait", UNCONFIRMED)
    block_time = _block_time(info)
    if block_time is None:
        # Solidified info always has a block time; without one, judge it later.
        return Verdict("wait", UNCONFIRMED)
    if _failed(transaction, info):
        return Verdict("reject", FAILED, block_time=block_time)

    official = network_info(network).usdt
    logs = transfer_logs(info)
    usdt = [transfer for contract, transfer in logs if contract == official]
    trx = trx_transfers(transaction) if accept_trx else []
    if not usdt and not trx:
        foreign = any(usdt_network(contract) not in (None, network) for contract, _ in logs)
        return Verdict("reject", WRONG_NETWORK if foreign else NO_USDT, block_time=block_time)

    # USDT to the shop wins over TRX to the shop; several transfers of one coin add up.
    paid = [t for t in usdt if t.to == address] or [t for t in trx if t.to == address]
    if not paid:
        # Report where the coins went, so the owner can explain to the advertiser.
        first = (usdt or trx)[0]
        return Verdict(
            "reject",
            WRONG_ADDRESS,
            coin=first.coin,
            amount=first.amount,
            from_=first.from_,
            to=first.to,
            block_time=block_time,
        )
    coin = paid[0].coin
    amount = _whole(sum(t.units for t in paid))
    if block_time < approved_at - CLOCK_SKEW:
        return Verdict(
            "reject", TOO_EARLY, coin, amount, paid[0].from_, address, block_time=block_time
        )
    if coin == "USDT":
        credited: Decimal | None = amount
    else:
        credited = credited_usdt(amount, trx_rate) if trx_rate is not None else None
    return Verdict("credit", None, coin, amount, paid[0].from_, address, credited, block_time)
