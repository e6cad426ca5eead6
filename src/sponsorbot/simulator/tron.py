"""The simulated TRON chain: networks, wallets, transactions, blocks and solidification.

One simulator serves one network at a time (the one its TronGrid answers for); each network
keeps its own ledger, so switching networks hides the other network's transactions as a
different TronGrid host would. Blocks come every 3 s of the simulator's clock. A transaction
lands in the first block produced at or after the moment it is made, and becomes solid (shows
on ``/walletsolidity/*``) 19 blocks later unless the control call says otherwise.
"""

from __future__ import annotations

import hashlib
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from sponsorbot.simulator.readers import read_decimal
from sponsorbot.simulator.tronbytes import Contract, Raw, parse_address, to_base58, transfer_call

BLOCK_MS = 3_000
SOLIDIFY_BLOCKS = 19
DECIMALS = 6  # USDT, TRX (sun) and the default TRC-10 token all have six
MAX_UNITS = 2**63 - 1  # amounts are protobuf int64 in TRX and TRC-10 transfers
FEE_LIMIT = 100_000_000  # 100 TRX, what wallets usually put on a TRC-20 transfer
EXPIRATION_MS = 60_000  # wallets sign with "the reference block + 60 s"
DEFAULT_TRC10 = "1002000"  # BitTorrent's old TRC-10 token, a real id


@dataclass(frozen=True, slots=True)
class Network:
    """A TRON network: its official USDT contract, a block it had, its explorer, and the id of
    its block 0 (what a client asks a node for to learn which chain it serves)."""

    name: str
    usdt: str
    ref_number: int  # a block number at ref_time_ms, so block numbers look like the real ones
    ref_time_ms: int
    explorer: str
    genesis: str


# The genesis ids are the real networks' (their last 4 bytes are TRON's eth_chainId).
NETWORKS: dict[str, Network] = {
    "mainnet": Network(
        "mainnet", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", 69_316_644, 1_738_601_751_000,
        "https://tronscan.org",
        "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc",
    ),
    "nile": Network(
        "nile", "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf", 53_900_000, 1_738_601_751_000,
        "https://nile.tronscan.org",
        "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc",
    ),
    "shasta": Network(
        "shasta", "TG3XXyExBkPp9nzdajDZsozEu4BkaSJozs", 50_100_000, 1_738_601_751_000,
        "https://shasta.tronscan.org",
        "0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e",
    ),
}  # fmt: skip

KINDS = ("usdt", "usdt_revert", "lookalike", "foreign_usdt", "trx", "trc10")
FAULT_KINDS = ("429", "500", "garbage")


def network(name: str) -> Network:
    """The network called ``name`` (mainnet, nile or shasta)."""
    found = NETWORKS.get(str(name).lower())
    if found is None:
        raise ValueError(f"network must be one of {', '.join(NETWORKS)}")
    return found


def lookalike_contract(net: str) -> bytes:
    """A fixed contract address of a fake token that calls itself "USDT" on ``net``."""
    return b"\x41" + hashlib.sha256(f"lookalike-usdt:{net}".encode()).digest()[:20]


def parse_amount(value: Any, decimals: int = DECIMALS) -> int:
    """A positive decimal string (or whole number) in the coin's units, e.g. "12.5" -> 12500000."""
    amount = read_decimal(value, "amount", "12.5")
    units = amount.scaleb(decimals)
    if not amount.is_finite() or units != units.to_integral_value():
        raise ValueError(f"amount {value!r} has more than {decimals} decimal places")
    if not 0 < units <= MAX_UNITS:
        raise ValueError(f"amount {value!r} must be above zero and below 2^63 units")
    return int(units)


def _balance(value: Any) -> int:
    # A starting balance may be zero, unlike an amount paid.
    try:
        if isinstance(value, str | int) and Decimal(str(value).strip() or "0") == 0:
            return 0
    except InvalidOperation:
        pass
    return parse_amount(value)


def format_amount(units: int, decimals: int = DECIMALS) -> str:
    """Units back to a plain decimal string: 12500000 -> "12.5"."""
    text = format(Decimal(units).scaleb(-decimals), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


@dataclass(slots=True)
class Wallet:
    """An address made through the control API, with the balances the phone page shows."""

    address: bytes
    trx_sun: int
    usdt_units: int

    def json(self, net: str) -> dict[str, Any]:
        """The wallet as the control API shows it."""
        return {
            "address": to_base58(self.address),
            "hex": self.address.hex(),
            "network": net,
            "trx": format_amount(self.trx_sun),
            "usdt": format_amount(self.usdt_units),
        }


@dataclass(slots=True)
class Tx:
    """One transaction on the simulated chain, with what its receipt will say."""

    hash: str
    kind: str
    network: str
    raw: Raw
    signature: str
    block_number: int
    block_time_ms: int
    made_at_ms: int
    solid_at_ms: int | None  # None: not before a control call solidifies it
    success: bool
    sender: bytes
    recipient: bytes
    units: int
    token: bytes | None = None  # the TRC-20 contract whose Transfer log this makes
    asset: str | None = None  # the TRC-10 token id

    def solid(self, now_ms: int) -> bool:
        """Whether the solidity node shows it by ``now_ms``."""
        return self.solid_at_ms is not None and now_ms >= self.solid_at_ms

    @property
    def coin(self) -> str:
        """USDT (for every TRC-20 kind: the name means nothing), TRX or TRC10."""
        return {"trx": "TRX", "trc10": "TRC10"}.get(self.kind, "USDT")

    def summary(self, now_ms: int) -> dict[str, Any]:
        """What the control API answers about it."""
        return {
            "hash": self.hash,
            "kind": self.kind,
            "network": self.network,
            "coin": self.coin,
            "token": to_base58(self.token) if self.token else self.asset,
            "from": to_base58(self.sender),
            "to": to_base58(self.recipient),
            "amount": format_amount(self.units),
            "units": self.units,
            "success": self.success,
            "block_number": self.block_number,
            "block_timestamp": self.block_time_ms,
            "raw_timestamp": self.raw.timestamp,
            "solid": self.solid(now_ms),
            "solid_at": self.solid_at_ms,
            "tronscan": f"{NETWORKS[self.network].explorer}/#/transaction/{self.hash}",
        }


@dataclass(slots=True)
class Timing:
    """When a new transaction becomes solid, and the timestamp its payer writes into it."""

    solidify: str = "default"  # default (19 blocks), now, never (until the control says)
    after_s: float | None = None  # solid this many seconds after it is made
    timestamp_ms: int | None = None  # a fake raw_data.timestamp (the payer's clock)

    def __post_init__(self) -> None:
        if self.solidify not in ("default", "now", "never"):
            raise ValueError("solidify must be default, now or never")
        if self.after_s is not None:
            if self.solidify != "default":
                raise ValueError("give solidify_after_s or solidify, not both")
            if not 0 <= self.after_s <= 10 * 365 * 86_400:
                raise ValueError("solidify_after_s must be between 0 and ten years")
        # A protobuf int64 that is zero is left out of the signed bytes; a negative one is not
        # a time. Either way no wallet writes it.
        if self.timestamp_ms is not None and not 0 < self.timestamp_ms < 2**63:
            raise ValueError("timestamp_ms must be a positive number of milliseconds")


@dataclass(slots=True)
class Chain:
    """The simulated chain of every network, the TronGrid settings, and queued faults."""

    clock: Callable[[], float]
    seed: int | None = None
    network: str = "mainnet"
    api_key: str | None = None
    solidify_blocks: int = SOLIDIFY_BLOCKS
    # Seconds every TronGrid answer waits (a slow node, for race and timeout tests).
    delay_s: float = 0.0
    faults: deque[str] = field(default_factory=deque)
    ledgers: dict[str, dict[str, Tx]] = field(default_factory=dict)
    # Per network, the newest block a transaction landed in: it counts as produced already.
    tops: dict[str, tuple[int, int]] = field(default_factory=dict)
    wallets: dict[str, dict[bytes, Wallet]] = field(default_factory=dict)
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.network = network(self.network).name
        # Its own random, so paying on the chain never changes the Telegram ids a seed gives.
        self.rng = random.Random(f"tron:{self.seed}" if self.seed is not None else None)

    # Time and blocks ---------------------------------------------------------------------

    def now_ms(self) -> int:
        """The simulator's clock in milliseconds."""
        return int(self.clock() * 1000)

    def _slot(self, now_ms: int, *, ceil: bool) -> tuple[int, int]:
        net = NETWORKS[self.network]
        steps, rest = divmod(now_ms - net.ref_time_ms, BLOCK_MS)
        if ceil and rest:
            steps += 1
        return net.ref_number + steps, net.ref_time_ms + steps * BLOCK_MS

    def head(self) -> tuple[int, int]:
        """The newest block (number, time in ms): the clock's, or a transaction's if later."""
        return max(self._slot(self.now_ms(), ceil=False), self.tops.get(self.network, (0, 0)))

    def solid_head(self) -> tuple[int, int]:
        """The newest solid block by the default rule (19 blocks behind the head)."""
        number, time_ms = self.head()
        return number - self.solidify_blocks, time_ms - self.solidify_blocks * BLOCK_MS

    def block_id(self, number: int) -> bytes:
        """A block's 32-byte id: its number in the first 8 bytes, as TRON's block ids are; block
        0's is the real network's genesis id."""
        if number == 0:
            return bytes.fromhex(NETWORKS[self.network].genesis)
        digest = hashlib.sha256(f"{self.network}:block:{number}".encode()).digest()
        return number.to_bytes(8, "big") + digest[8:]

    # State -------------------------------------------------------------------------------

    def ledger(self) -> dict[str, Tx]:
        """The current network's transactions by hash."""
        return self.ledgers.setdefault(self.network, {})

    def set_network(self, name: str) -> Network:
        """Serve another network from now on (each keeps its own transactions)."""
        net = network(name)
        self.network = net.name
        return net

    def find(self, tx_hash: str) -> Tx | None:
        """The current network's transaction with this hash (any case), if any."""
        return self.ledger().get(tx_hash.lower())

    def solidify(self, tx_hash: str) -> Tx | None:
        """Make a transaction solid now (None if there is no such transaction)."""
        tx = self.find(tx_hash)
        if tx is not None and not tx.solid(self.now_ms()):
            tx.solid_at_ms = self.now_ms()
        return tx

    def create_wallet(self, trx: Any = "10000", usdt: Any = "1000") -> Wallet:
        """A new random address on the current network holding ``trx`` TRX and ``usdt`` USDT."""
        mine = self.wallets.setdefault(self.network, {})
        while True:
            address = b"\x41" + self.rng.randbytes(20)
            if address not in mine:
                break
        wallet = mine[address] = Wallet(address, _balance(trx), _balance(usdt))
        return wallet

    def wallet(self, address: bytes) -> Wallet | None:
        """The control-made wallet at ``address`` on the current network, if any."""
        return self.wallets.get(self.network, {}).get(address)

    def add_faults(self, kind: str, count: int) -> int:
        """The next ``count`` TronGrid calls fail with ``kind``; returns how many are queued."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"kind must be one of {', '.join(FAULT_KINDS)}")
        if not 0 < count <= 10_000:
            raise ValueError("count must be between 1 and 10000")
        self.faults.extend([kind] * count)
        return len(self.faults)

    def take_fault(self) -> str | None:
        """The fault of this TronGrid call, if one is queued."""
        return self.faults.popleft() if self.faults else None

    # Transactions ------------------------------------------------------------------------

    def transfer(
        self,
        kind: str,
        sender: str,
        recipient: str,
        amount: Any,
        timing: Timing | None = None,
        *,
        contract: str | None = None,
        other_network: str | None = None,
        asset_id: str = DEFAULT_TRC10,
    ) -> Tx:
        """Make and record a transaction of ``kind`` (see :data:`KINDS`)."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}")
        timing = timing or Timing()
        owner, to, units = parse_address(sender), parse_address(recipient), parse_amount(amount)
        token = self._token(kind, contract, other_network)
        now = self.now_ms()
        if kind == "trx":
            body = Contract("TransferContract", owner, to=to, amount=units)
        elif kind == "trc10":
            if not asset_id.isdigit():
                raise ValueError("asset_id must be a TRC-10 token's number, such as 1002000")
            body = Contract("TransferAssetContract", owner, to, units, asset_id.encode())
        else:
            data = bytes.fromhex(transfer_call(to, units))
            body = Contract("TriggerSmartContract", owner, contract_address=token, data=data)
        ref_number, ref_time = self._slot(now, ceil=False)
        ref_id = self.block_id(ref_number)
        stamp = timing.timestamp_ms if timing.timestamp_ms is not None else now
        while True:
            raw = Raw(
                ref_block_bytes=ref_id[6:8],
                ref_block_hash=ref_id[8:16],
                expiration=ref_time + EXPIRATION_MS,
                contract=body,
                timestamp=stamp,
                fee_limit=FEE_LIMIT if body.type == "TriggerSmartContract" else 0,
            )
            tx_hash = raw.tx_id()
            if tx_hash not in self.ledger():
                break
            stamp += 1  # the same payment twice in a millisecond: a wallet's clock moved on
        block_number, block_time = self._slot(now, ceil=True)
        tx = Tx(
            hash=tx_hash,
            kind=kind,
            network=self.network,
            raw=raw,
            signature=self.rng.randbytes(65).hex(),
            block_number=block_number,
            block_time_ms=block_time,
            made_at_ms=now,
            solid_at_ms=self._solid_at(timing, now, block_time),
            success=kind != "usdt_revert",
            sender=owner,
            recipient=to,
            units=units,
            token=token if body.type == "TriggerSmartContract" else None,
            asset=asset_id if kind == "trc10" else None,
        )
        self._move_balances(kind, owner, to, units)
        self.ledger()[tx_hash] = tx
        self.tops[self.network] = max(
            self.tops.get(self.network, (0, 0)), (block_number, block_time)
        )
        return tx

    def _token(self, kind: str, contract: str | None, other_network: str | None) -> bytes:
        here = NETWORKS[self.network]
        if kind == "lookalike":
            return parse_address(contract) if contract else lookalike_contract(self.network)
        if kind == "foreign_usdt":
            other = network(other_network or ("nile" if here.name == "mainnet" else "mainnet"))
            if other.name == here.name:
                raise ValueError("other_network must differ from the network being served")
            return parse_address(other.usdt)
        return parse_address(here.usdt)

    def _move_balances(self, kind: str, owner: bytes, to: bytes, units: int) -> None:
        # Only the official coins of control-made wallets move; any other payer is an outside
        # wallet with enough funds. A wallet refuses to sign what it cannot pay.
        if kind not in ("usdt", "trx"):
            return
        attribute = "usdt_units" if kind == "usdt" else "trx_sun"
        payer, payee = self.wallet(owner), self.wallet(to)
        if payer is not None:
            if getattr(payer, attribute) < units:
                raise ValueError(f"the wallet holds less than that in {kind.upper()}")
            setattr(payer, attribute, getattr(payer, attribute) - units)
        if payee is not None:
            setattr(payee, attribute, getattr(payee, attribute) + units)

    def _solid_at(self, timing: Timing, now: int, block_time: int) -> int | None:
        if timing.solidify == "never":
            return None
        if timing.solidify == "now":
            return now
        if timing.after_s is not None:
            return now + int(timing.after_s * 1000)
        return block_time + self.solidify_blocks * BLOCK_MS
