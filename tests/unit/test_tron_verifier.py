"""The payment verifier against real TronGrid answers, each rule broken one at a time."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.config import TronNetwork
from sponsorbot.tron import (
    CLOCK_SKEW,
    REASONS,
    Verdict,
    credited_usdt,
    network_info,
    parse_address,
    to_base58,
    verify,
)
from sponsorbot.tron.verifier import TRANSFER_TOPIC
from tests.unit.tron_shapes import (
    TRC10_INFO,
    TRC10_PAYEE,
    TRC10_TRANSACTION,
    TRX_INFO,
    TRX_PAYEE,
    TRX_PAYER,
    TRX_TRANSACTION,
    USDT_AMOUNT,
    USDT_BLOCK_TIME,
    USDT_INFO,
    USDT_OUT_OF_ENERGY_INFO,
    USDT_PAYEE,
    USDT_PAYER,
    USDT_TRANSACTION,
    JsonDict,
    fresh,
)

MAINNET = TronNetwork.MAINNET
SHOP = parse_address(USDT_PAYEE)
TRX_SHOP = parse_address(TRX_PAYEE)
USDT_BLOCK = datetime.fromisoformat(USDT_BLOCK_TIME)
TRX_BLOCK = datetime(2024, 11, 10, 10, 56, 30, tzinfo=UTC)
BEFORE = USDT_BLOCK - timedelta(minutes=10)
RATE = Decimal("0.2873")
USDC_MAINNET = "b8ae8b62f2a4cc78e3f66c45b5acfedb924fd2a6"  # a real TRC-20, not USDT
OTHER = "TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW"


def judge(
    transaction: JsonDict | None,
    info: JsonDict | None,
    *,
    shop: bytes = SHOP,
    approved_at: datetime = BEFORE,
    network: TronNetwork = MAINNET,
    accept_trx: bool = True,
    rate: Decimal | None = RATE,
) -> Verdict:
    return verify(
        transaction,
        info,
        network=network,
        address=shop,
        approved_at=approved_at,
        accept_trx=accept_trx,
        trx_rate=rate,
    )


def word(raw21: bytes) -> str:
    return "0" * 24 + raw21[1:].hex()


def transfer_log(
    to: bytes, units: int, *, contract: str | None = None, sender: bytes | None = None
) -> JsonDict:
    return {
        "address": contract or network_info(MAINNET).usdt[1:].hex(),
        "topics": [TRANSFER_TOPIC, word(sender or parse_address(USDT_PAYER)), word(to)],
        "data": f"{units:064x}",
    }


def usdt_info(*logs: JsonDict) -> JsonDict:
    info = fresh(USDT_INFO)
    info["log"] = list(logs)
    return info


# --- The fixtures are what they say ------------------------------------------------------


@pytest.mark.parametrize("transaction", [USDT_TRANSACTION, TRX_TRANSACTION])
def test_fixture_transactions_hash_to_their_id(transaction: JsonDict) -> None:
    # A transaction's id is the SHA-256 of its raw_data: these were transcribed intact.
    digest = hashlib.sha256(bytes.fromhex(transaction["raw_data_hex"])).hexdigest()
    assert digest == transaction["txID"]


# --- Credits -----------------------------------------------------------------------------


def test_real_usdt_transfer_is_credited() -> None:
    verdict = judge(USDT_TRANSACTION, USDT_INFO)
    assert verdict == Verdict(
        "credit",
        None,
        "USDT",
        Decimal(USDT_AMOUNT),
        parse_address(USDT_PAYER),
        SHOP,
        Decimal(USDT_AMOUNT),
        USDT_BLOCK,
    )
    assert verdict.to_json() == {
        "verdict": "credit",
        "reason": None,
        "coin": "USDT",
        "amount": "3.500000",
        "from": USDT_PAYER,
        "to": USDT_PAYEE,
        "credited_usdt": "3.500000",
        "block_time": USDT_BLOCK_TIME,
    }
    json.dumps(verdict.to_json())  # one JSON line, nothing exotic inside


def test_real_trx_transfer_is_credited_at_the_rate_rounded_down() -> None:
    verdict = judge(TRX_TRANSACTION, TRX_INFO, shop=TRX_SHOP, approved_at=TRX_BLOCK, rate=RATE)
    assert verdict.verdict == "credit"
    assert verdict.coin == "TRX"
    assert verdict.amount == Decimal(30)
    assert verdict.from_ == parse_address(TRX_PAYER)
    assert verdict.to == TRX_SHOP
    assert verdict.credited_usdt == Decimal("8.619000")
    assert verdict.block_time == TRX_BLOCK
    line = verdict.to_json()
    assert (line["amount"], line["credited_usdt"]) == ("30.000000", "8.619000")
    assert (line["from"], line["to"]) == (TRX_PAYER, TRX_PAYEE)


def test_trx_without_a_rate_is_credited_with_no_usdt_value() -> None:
    verdict = judge(TRX_TRANSACTION, TRX_INFO, shop=TRX_SHOP, rate=None)
    assert (verdict.verdict, verdict.coin, verdict.amount) == ("credit", "TRX", Decimal(30))
    assert verdict.credited_usdt is None
    assert verdict.to_json()["credited_usdt"] is None


def test_trx_is_not_taken_when_the_shop_does_not_accept_it() -> None:
    verdict = judge(TRX_TRANSACTION, TRX_INFO, shop=TRX_SHOP, accept_trx=False)
    assert (verdict.verdict, verdict.reason) == ("reject", "no_usdt")


def test_several_usdt_logs_to_the_shop_add_up() -> None:
    info = usdt_info(
        transfer_log(SHOP, 1_250_000),
        transfer_log(parse_address(OTHER), 9_000_000),  # to someone else: not counted
        transfer_log(SHOP, 2_000_001, sender=parse_address(OTHER)),
    )
    verdict = judge(USDT_TRANSACTION, info)
    assert verdict.verdict == "credit"
    assert verdict.amount == Decimal("3.250001")
    assert verdict.credited_usdt == Decimal("3.250001")
    assert verdict.from_ == parse_address(USDT_PAYER)  # the first paying log's sender


def test_usdt_to_the_shop_wins_over_trx_in_the_same_transaction() -> None:
    transaction = fresh(USDT_TRANSACTION)
    trx_part = fresh(TRX_TRANSACTION)["raw_data"]["contract"][0]
    trx_part["parameter"]["value"]["to_address"] = SHOP.hex()
    transaction["raw_data"]["contract"].insert(0, trx_part)
    verdict = judge(transaction, USDT_INFO)
    assert (verdict.verdict, verdict.coin, verdict.amount) == ("credit", "USDT", Decimal("3.5"))


def test_block_time_inside_the_clock_skew_is_accepted() -> None:
    assert judge(USDT_TRANSACTION, USDT_INFO, approved_at=USDT_BLOCK + CLOCK_SKEW).verdict == (
        "credit"
    )


def test_visible_true_answers_with_base58_addresses_are_read_the_same() -> None:
    info = fresh(USDT_INFO)
    info["log"][0]["address"] = network_info(MAINNET).usdt_base58
    assert judge(USDT_TRANSACTION, info).verdict == "credit"
    transaction = fresh(TRX_TRANSACTION)
    value = transaction["raw_data"]["contract"][0]["parameter"]["value"]
    value["owner_address"], value["to_address"] = TRX_PAYER, TRX_PAYEE
    assert judge(transaction, TRX_INFO, shop=TRX_SHOP).verdict == "credit"


# --- Each rule broken --------------------------------------------------------------------


@pytest.mark.parametrize("transaction", [None, {}])
def test_unknown_hash_waits(transaction: JsonDict | None) -> None:
    assert judge(transaction, None) == Verdict("wait", "unknown")
    assert judge(transaction, USDT_INFO) == Verdict("wait", "unknown")


@pytest.mark.parametrize("info", [None, {}])
def test_known_but_unsolidified_waits(info: JsonDict | None) -> None:
    assert judge(USDT_TRANSACTION, info) == Verdict("wait", "unconfirmed")


def test_info_without_a_block_time_waits() -> None:
    info = fresh(USDT_INFO)
    del info["blockTimeStamp"]
    assert judge(USDT_TRANSACTION, info) == Verdict("wait", "unconfirmed")


def test_usdt_from_another_contract_is_no_usdt() -> None:
    verdict = judge(
        USDT_TRANSACTION, usdt_info(transfer_log(SHOP, 3_500_000, contract=USDC_MAINNET))
    )
    assert (verdict.verdict, verdict.reason) == ("reject", "no_usdt")


def test_a_look_alike_token_named_usdt_is_no_usdt() -> None:
    # A token anyone could deploy, calling itself Tether USD, whose call data and log are the
    # real USDT's in every byte but the contract's address.
    fake = "a614f803b6fd780986a42c78ec9c7f77e6ded13d"
    transaction = fresh(USDT_TRANSACTION)
    transaction["raw_data"]["contract"][0]["parameter"]["value"]["contract_address"] = "41" + fake
    transaction["token_info"] = {"symbol": "USDT", "name": "Tether USD", "decimals": 6}
    info = fresh(USDT_INFO)
    info["log"][0]["address"] = fake
    info["contract_address"] = "41" + fake
    info["tokenInfo"] = {"tokenAbbr": "USDT", "tokenName": "Tether USD"}
    verdict = judge(transaction, info)
    assert (verdict.verdict, verdict.reason) == ("reject", "no_usdt")


def test_call_data_naming_the_shop_is_not_a_payment() -> None:
    # The call data says "transfer 103.8 USDT to the shop"; the official contract logged
    # nothing: nothing moved.
    transaction = fresh(USDT_TRANSACTION)
    value = transaction["raw_data"]["contract"][0]["parameter"]["value"]
    assert value["data"].startswith("a9059cbb")
    verdict = judge(
        transaction, usdt_info(), shop=parse_address("TUWYaaaJVA7iRs9CYTqWSz4Qjdz3XodECn")
    )
    assert (verdict.verdict, verdict.reason) == ("reject", "no_usdt")


@pytest.mark.parametrize(
    ("network", "log_from"), [(TronNetwork.MAINNET, TronNetwork.NILE), (TronNetwork.NILE, MAINNET)]
)
def test_another_networks_usdt_is_wrong_network(
    network: TronNetwork, log_from: TronNetwork
) -> None:
    other = network_info(log_from).usdt[1:].hex()
    verdict = judge(
        USDT_TRANSACTION, usdt_info(transfer_log(SHOP, 1_000_000, contract=other)), network=network
    )
    assert (verdict.verdict, verdict.reason) == ("reject", "wrong_network")


def test_this_networks_usdt_beside_another_networks_is_judged_normally() -> None:
    nile = network_info(TronNetwork.NILE).usdt[1:].hex()
    info = usdt_info(transfer_log(SHOP, 7, contract=nile), transfer_log(SHOP, 1_000_000))
    verdict = judge(USDT_TRANSACTION, info)
    assert (verdict.verdict, verdict.amount) == ("credit", Decimal("1"))


def test_usdt_sent_elsewhere_is_wrong_address_saying_where() -> None:
    verdict = judge(USDT_TRANSACTION, USDT_INFO, shop=parse_address(OTHER))
    assert (verdict.verdict, verdict.reason) == ("reject", "wrong_address")
    line = verdict.to_json()
    assert (line["from"], line["to"]) == (USDT_PAYER, USDT_PAYEE)
    assert (line["coin"], line["amount"], line["credited_usdt"]) == ("USDT", "3.500000", None)


def test_trx_sent_elsewhere_is_wrong_address_saying_where() -> None:
    verdict = judge(TRX_TRANSACTION, TRX_INFO, shop=SHOP)
    assert (verdict.verdict, verdict.reason, verdict.coin) == ("reject", "wrong_address", "TRX")
    assert (verdict.to_json()["from"], verdict.to_json()["to"]) == (TRX_PAYER, TRX_PAYEE)


def test_an_address_differing_in_one_byte_is_another_address() -> None:
    near = SHOP[:20] + bytes([SHOP[20] ^ 0x01])
    assert judge(USDT_TRANSACTION, USDT_INFO, shop=near).reason == "wrong_address"


def test_too_early_uses_the_block_time_not_the_payers_timestamp() -> None:
    approved_at = USDT_BLOCK + CLOCK_SKEW + timedelta(seconds=1)
    transaction = fresh(USDT_TRANSACTION)
    # The payer signs raw_data.timestamp and can put any time in it.
    transaction["raw_data"]["timestamp"] = int(
        (approved_at + timedelta(hours=1)).timestamp() * 1000
    )
    verdict = judge(transaction, USDT_INFO, approved_at=approved_at)
    assert (verdict.verdict, verdict.reason) == ("reject", "too_early")
    assert (verdict.coin, verdict.amount, verdict.credited_usdt) == ("USDT", Decimal("3.5"), None)
    assert verdict.block_time == USDT_BLOCK


def test_a_late_block_is_not_too_early_whatever_the_payers_timestamp() -> None:
    transaction = fresh(USDT_TRANSACTION)
    transaction["raw_data"]["timestamp"] = 1
    assert judge(transaction, USDT_INFO).verdict == "credit"


@pytest.mark.parametrize("contract_ret", ["REVERT", "OUT_OF_ENERGY", "", None])
def test_failed_in_ret_only_is_failed(contract_ret: str | None) -> None:
    transaction = fresh(USDT_TRANSACTION)
    transaction["ret"] = [{"contractRet": contract_ret}]
    assert judge(transaction, USDT_INFO) == Verdict("reject", "failed", block_time=USDT_BLOCK)


@pytest.mark.parametrize("ret", [None, [], "SUCCESS", [{"contractRet": "SUCCESS"}, {}]])
def test_a_missing_or_odd_ret_is_failed(ret: Any) -> None:
    transaction = fresh(USDT_TRANSACTION)
    transaction["ret"] = ret
    assert judge(transaction, USDT_INFO).reason == "failed"


def test_failed_in_receipt_only_is_failed() -> None:
    # The real answer of a USDT transfer that ran out of energy, beside a ret saying SUCCESS.
    assert judge(USDT_TRANSACTION, USDT_OUT_OF_ENERGY_INFO).reason == "failed"
    info = fresh(USDT_INFO)
    info["receipt"]["result"] = "REVERT"
    assert judge(USDT_TRANSACTION, info).reason == "failed"


def test_failed_in_info_result_only_is_failed() -> None:
    info = fresh(USDT_INFO)
    info["result"] = "FAILED"
    assert judge(USDT_TRANSACTION, info).reason == "failed"


def test_a_contract_call_without_a_receipt_result_is_failed() -> None:
    info = fresh(USDT_INFO)
    del info["receipt"]["result"]
    assert judge(USDT_TRANSACTION, info).reason == "failed"
    del info["receipt"]
    assert judge(USDT_TRANSACTION, info).reason == "failed"


def test_a_trx_transfer_needs_no_receipt_result() -> None:
    assert "result" not in TRX_INFO["receipt"]
    assert judge(TRX_TRANSACTION, TRX_INFO, shop=TRX_SHOP).verdict == "credit"
    info = fresh(TRX_INFO)
    info["receipt"]["result"] = "REVERT"
    assert judge(TRX_TRANSACTION, info, shop=TRX_SHOP).reason == "failed"


def test_a_trc10_token_transfer_is_no_usdt() -> None:
    shop = parse_address(TRC10_PAYEE)
    verdict = judge(
        TRC10_TRANSACTION, TRC10_INFO, shop=shop, approved_at=datetime(2019, 1, 1, tzinfo=UTC)
    )
    assert (verdict.verdict, verdict.reason) == ("reject", "no_usdt")


def test_trx_sent_along_a_contract_call_or_internally_is_not_counted() -> None:
    transaction = fresh(USDT_TRANSACTION)
    transaction["raw_data"]["contract"][0]["parameter"]["value"]["call_value"] = 50_000_000
    info = usdt_info()
    info["internal_transactions"] = [
        {
            "hash": "61318c1e41c5fd387f1e4e4e8ec1fc98f295d3ef002bab1b33dd1cba2f93cb75",
            "caller_address": "41a614f803b6fd780986a42c78ec9c7f77e6ded13c",
            "transferTo_address": SHOP.hex(),
            "callValueInfo": [{"callValue": 50_000_000}],
            "note": "63616c6c",
        }
    ]
    assert judge(transaction, info).reason == "no_usdt"


@pytest.mark.parametrize(
    "log",
    [
        {**transfer_log(SHOP, 1_000_000), "topics": [TRANSFER_TOPIC, word(SHOP)]},
        {
            **transfer_log(SHOP, 1_000_000),
            "topics": [*transfer_log(SHOP, 1)["topics"], "00" * 32],
        },
        {
            **transfer_log(SHOP, 1_000_000),
            "topics": ["8c5be1e5" + "0" * 56, word(SHOP), word(SHOP)],
        },
        {**transfer_log(SHOP, 1_000_000), "data": "0f4240"},
        {**transfer_log(SHOP, 1_000_000), "data": "zz" * 32},
        {**transfer_log(SHOP, 1_000_000), "data": f"{1_000_000:064x}" + "00" * 32},
        {**transfer_log(SHOP, 1_000_000), "data": None},
        {**transfer_log(SHOP, 1_000_000), "address": None},
        {**transfer_log(SHOP, 1_000_000), "address": "a614f803"},
        {**transfer_log(SHOP, 1_000_000), "topics": "ddf252ad"},
        # A topic word whose top 12 bytes are not zero is not an address.
        {
            **transfer_log(SHOP, 1_000_000),
            "topics": [TRANSFER_TOPIC, word(SHOP), "ff" * 12 + SHOP[1:].hex()],
        },
        transfer_log(SHOP, 0),  # zero-value transfers plant look-alike addresses
        "not a log",
    ],
)
def test_malformed_logs_are_never_credited(log: Any) -> None:
    assert judge(USDT_TRANSACTION, usdt_info(log)).reason == "no_usdt"


@pytest.mark.parametrize(
    "patch",
    [
        {"amount": True},
        {"amount": 0},
        {"amount": -5},
        {"amount": "30000000"},
        {"amount": 30000000.0},
        {"to_address": "41" + "zz" * 20},
        {"owner_address": None},
    ],
)
def test_malformed_trx_transfers_are_never_credited(patch: dict[str, Any]) -> None:
    transaction = fresh(TRX_TRANSACTION)
    transaction["raw_data"]["contract"][0]["parameter"]["value"].update(patch)
    assert judge(transaction, TRX_INFO, shop=TRX_SHOP).reason == "no_usdt"


def test_bad_inputs_are_programming_errors() -> None:
    with pytest.raises(ValueError, match="aware"):
        judge(USDT_TRANSACTION, USDT_INFO, approved_at=datetime(2024, 1, 1))
    for rate in (Decimal(0), Decimal(-1), Decimal("NaN"), Decimal("Infinity")):
        with pytest.raises(ValueError, match="rate"):
            judge(USDT_TRANSACTION, USDT_INFO, rate=rate)


def test_the_reasons_are_design_4s() -> None:
    assert set(REASONS) == {
        "no_usdt",
        "wrong_address",
        "too_early",
        "failed",
        "wrong_network",
        "unknown",
        "unconfirmed",
        "already_used",
    }


def test_a_wait_verdict_is_a_line_of_nulls() -> None:
    assert Verdict("wait", "unknown").to_json() == {
        "verdict": "wait",
        "reason": "unknown",
        "coin": None,
        "amount": None,
        "from": None,
        "to": None,
        "credited_usdt": None,
        "block_time": None,
    }


# --- Properties: only the official contract's transfers to the shop are ever credited ----

OFFICIAL = network_info(MAINNET).usdt
FOREIGN = network_info(TronNetwork.SHASTA).usdt
STRANGER = parse_address(OTHER)


@dataclass(frozen=True)
class LogSpec:
    contract: bytes
    topic0: str
    sender: bytes
    to: bytes
    units: int
    topic_count: int
    data_ok: bool

    def render(self) -> JsonDict:
        topics = [self.topic0, word(self.sender), word(self.to), "00" * 32][: self.topic_count]
        # Malformed data is one byte too long: never a uint256 whatever the value.
        data = f"{self.units:064x}" + ("" if self.data_ok else "00")
        return {"address": self.contract[1:].hex(), "topics": topics, "data": data}

    def qualifies(self) -> bool:
        return (
            self.contract == OFFICIAL
            and self.topic0.lower() == TRANSFER_TOPIC  # hex in either case is the same word
            and self.to == SHOP
            and self.units > 0
            and self.topic_count == 3
            and self.data_ok
        )


addresses = st.one_of(
    st.sampled_from([OFFICIAL, FOREIGN, SHOP, STRANGER]),
    st.binary(min_size=20, max_size=20).map(lambda b: b"\x41" + b),
)
log_specs = st.builds(
    LogSpec,
    contract=addresses,
    topic0=st.sampled_from(
        [TRANSFER_TOPIC, TRANSFER_TOPIC.upper(), "00" * 32, "ddf252ad" + "0" * 56]
    ),
    sender=addresses,
    to=addresses,
    units=st.one_of(st.integers(0, 10**12), st.integers(0, 2**256 - 1)),
    topic_count=st.sampled_from([3, 3, 3, 2, 4]),
    data_ok=st.booleans(),
)


@given(st.lists(log_specs, max_size=8))
def test_only_qualifying_logs_are_credited_and_exactly_them(specs: list[LogSpec]) -> None:
    verdict = judge(
        USDT_TRANSACTION, usdt_info(*(spec.render() for spec in specs)), accept_trx=False
    )
    expected = sum(s.units for s in specs if s.qualifies())
    if expected:
        assert verdict.verdict == "credit"
        assert verdict.coin == "USDT"
        assert verdict.to == SHOP
        assert Fraction(verdict.amount or 0) == Fraction(expected, 10**6)
        assert Fraction(verdict.credited_usdt or 0) == Fraction(expected, 10**6)
        assert verdict.from_ == next(s.sender for s in specs if s.qualifies())
    else:
        assert verdict.verdict == "reject"
        assert verdict.credited_usdt is None


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["TransferContract", "TransferAssetContract", "TriggerSmartContract"]),
            addresses,
            st.integers(-5, 10**15),
        ),
        max_size=5,
    )
)
def test_only_top_level_trx_transfers_to_the_shop_are_credited(
    contracts: list[tuple[str, bytes, int]],
) -> None:
    transaction = fresh(TRX_TRANSACTION)
    transaction["raw_data"]["contract"] = [
        {
            "parameter": {
                "value": {"amount": amount, "owner_address": STRANGER.hex(), "to_address": to.hex()}
            },
            "type": kind,
        }
        for kind, to, amount in contracts
    ]
    info = fresh(TRX_INFO)
    info["receipt"]["result"] = "SUCCESS"  # so that contract calls in the mix ran
    verdict = judge(transaction, info, shop=SHOP, approved_at=TRX_BLOCK, rate=RATE)
    expected = sum(a for k, to, a in contracts if k == "TransferContract" and to == SHOP and a > 0)
    if expected:
        assert (verdict.verdict, verdict.coin) == ("credit", "TRX")
        assert Fraction(verdict.amount or 0) == Fraction(expected, 10**6)
    else:
        assert verdict.verdict == "reject"


# --- Decimal rates and rounding ----------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "rate", "credited"),
    [
        ("30", "0.2873", "8.619000"),
        ("1", "0.1234567", "0.123456"),  # rounded down, not to nearest
        ("0.000001", "0.999999", "0.000000"),
        ("3", "0.3333333333", "0.999999"),
        ("9223372036854.775807", "0.2873", "2649874786188.377089"),  # the largest int64 in sun
        ("1", "1E-30", "0.000000"),
        ("1", "123456789012345678901234567890.123456789", "123456789012345678901234567890.123456"),
        ("123456789.123456", "987654321.987654321", "121932631356499752.087943"),
    ],
)
def test_credited_usdt_is_exact_and_rounded_down(amount: str, rate: str, credited: str) -> None:
    result = credited_usdt(Decimal(amount), Decimal(rate))
    assert format(result, "f") == credited
    assert result.as_tuple().exponent == -6


@given(
    st.integers(1, 2**63 - 1),
    st.decimals(
        min_value=Decimal("1E-20"), max_value=Decimal("1E+20"), allow_nan=False, places=None
    ),
)
def test_credited_usdt_is_the_floor_of_the_exact_product(sun: int, rate: Decimal) -> None:
    if not rate.is_finite() or rate <= 0:
        return
    amount = Decimal(sun).scaleb(-6)
    exact = Fraction(amount) * Fraction(rate)
    floor_micro = (exact * 10**6).__floor__()
    assert Fraction(credited_usdt(amount, rate)) == Fraction(floor_micro, 10**6)


def test_a_huge_usdt_amount_is_kept_exactly() -> None:
    units = 2**256 - 1
    verdict = judge(USDT_TRANSACTION, usdt_info(transfer_log(SHOP, units)))
    assert verdict.to_json()["amount"] == f"{str(units)[:-6]}.{str(units)[-6:]}"


def test_no_float_reaches_a_verdict() -> None:
    verdict = judge(TRX_TRANSACTION, TRX_INFO, shop=TRX_SHOP, rate=Decimal("0.1"))
    assert isinstance(verdict.amount, Decimal)
    assert isinstance(verdict.credited_usdt, Decimal)
    assert verdict.credited_usdt == Decimal("3.000000")  # a float would give 3.0000000000000004


def test_a_verdicts_addresses_are_base58() -> None:
    verdict = judge(USDT_TRANSACTION, USDT_INFO)
    assert verdict.to_json()["to"] == to_base58(SHOP) == USDT_PAYEE
