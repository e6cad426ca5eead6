"""The simulated TronGrid: real shapes in both visible forms, solidification, faults, control."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import base58
import orjson
import pytest

from sponsorbot.simulator.client import SimulatorError
from sponsorbot.simulator.tronbytes import Contract, Raw, parse_address, transfer_call
from sponsorbot.tron.networks import NETWORKS
from tests.simulator.conftest import Sim, SimFactory

MAINNET_USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
MAINNET_USDT_HEX = "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"
NILE_USDT = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
NILE_GENESIS = "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc"
TRANSFER_TOPIC = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
NODE_PATHS = (
    "/wallet/gettransactionbyid",
    "/walletsolidity/gettransactionbyid",
    "/wallet/gettransactioninfobyid",
    "/walletsolidity/gettransactioninfobyid",
)


def hex41(address: str) -> str:
    """Base58Check -> 41... hex, independently of the simulator's own helpers."""
    return bytes(base58.b58decode_check(address)).hex()


async def node(
    sim: Sim,
    path: str,
    value: str,
    visible: bool = False,
    get: bool = False,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """Call a java-tron endpoint by POST JSON (or GET with query params)."""
    if get:
        params = {"value": value, "visible": str(visible).lower()}
        request = sim.http.get(sim.url + path, params=params, headers=headers)
    else:
        body = {"value": value, "visible": visible}
        request = sim.http.post(sim.url + path, json=body, headers=headers)
    async with request as response:
        return response.status, orjson.loads(await response.read())


async def events(sim: Sim, tx_hash: str, query: str = "") -> tuple[int, Any]:
    async with sim.http.get(f"{sim.url}/v1/transactions/{tx_hash}/events{query}") as response:
        return response.status, orjson.loads(await response.read())


async def pair(sim: Sim) -> tuple[dict[str, Any], dict[str, Any]]:
    """A payer's wallet and a shop's wallet made through the control API."""
    return await sim.control.tron_create_wallet(), await sim.control.tron_create_wallet("0", "0")


def test_raw_data_encoding_matches_real_transactions() -> None:
    # A real mainnet TRX transfer and a real Nile USDT transfer: same bytes, same txID.
    trx = Raw(
        bytes.fromhex("fdf6"),
        bytes.fromhex("4cd898aed8ce5d14"),
        1717419846000,
        Contract(
            "TransferContract",
            bytes.fromhex("419b3281a60ab7a44f351ef2896c653f134972ad22"),
            bytes.fromhex("4105cc125604448afeb6867eb688efb7e80411d57a"),
            5,
        ),
        1717419788444,
    )
    assert trx.tx_id() == "47086db397eac45d2fe7dacedcb6f77267d6895dce645210e495e64f8a2a7910"
    to = bytes.fromhex("41ed87a3ae2bf2ab8b95486a23f224487ad75c6020")
    usdt = Raw(
        bytes.fromhex("84e1"),
        bytes.fromhex("1731d6450e11a03f"),
        1670168865000,
        Contract(
            "TriggerSmartContract",
            bytes.fromhex("41b42b84bad413dde093e27d01bb02ed9eede52c43"),
            contract_address=parse_address(NILE_USDT),
            data=bytes.fromhex(transfer_call(to, 20)),
        ),
        1670168805340,
        100_000_000,
    )
    assert usdt.encode().hex() == (
        "0a0284e122081731d6450e11a03f40e8d1c9eecd305aae01081f12a9010a31747970652e676f6f676c65617069"
        "732e636f6d2f70726f746f636f6c2e54726967676572536d617274436f6e747261637412740a1541b42b84ba"
        "d413dde093e27d01bb02ed9eede52c43121541eca9bc828a3005b9a3b909f2cc5c2a54794de05f2244a9059c"
        "bb000000000000000000000000ed87a3ae2bf2ab8b95486a23f224487ad75c602000000000000000000000000"
        "0000000000000000000000000000000000000001470dcffc5eecd30900180c2d72f"
    )
    assert hex41(MAINNET_USDT) == MAINNET_USDT_HEX


async def test_usdt_transfer_in_both_visible_forms(sim: Sim) -> None:
    payer, shop = await pair(sim)
    made = await sim.control.tron_usdt(payer["address"], shop["address"], "12.5")
    tx_hash = made["hash"]
    assert len(tx_hash) == 64 and tx_hash == tx_hash.lower()
    assert made["block_timestamp"] % 3000 == 0 and made["block_timestamp"] >= made["raw_timestamp"]

    status, tx = await node(sim, "/wallet/gettransactionbyid", tx_hash)
    assert status == 200 and tx["txID"] == tx_hash
    assert hashlib.sha256(bytes.fromhex(tx["raw_data_hex"])).hexdigest() == tx_hash
    assert tx["ret"] == [{"contractRet": "SUCCESS"}] and len(tx["signature"][0]) == 130
    contract = tx["raw_data"]["contract"][0]
    assert contract["type"] == "TriggerSmartContract"
    assert contract["parameter"]["type_url"] == "type.googleapis.com/protocol.TriggerSmartContract"
    value = contract["parameter"]["value"]
    assert value["owner_address"] == payer["hex"] and value["contract_address"] == MAINNET_USDT_HEX
    data = value["data"]
    assert data[:8] == "a9059cbb" and len(data) == 8 + 128
    assert data[8:32] == "0" * 24 and data[32:72] == shop["hex"][2:]
    assert int(data[72:], 16) == 12_500_000
    raw = tx["raw_data"]
    assert raw["timestamp"] == made["raw_timestamp"] and raw["fee_limit"] == 100_000_000
    assert len(raw["ref_block_bytes"]) == 4 and len(raw["ref_block_hash"]) == 16

    _, shown = await node(sim, "/wallet/gettransactionbyid", tx_hash, visible=True)
    shown_value = shown["raw_data"]["contract"][0]["parameter"]["value"]
    assert shown_value["owner_address"] == payer["address"]
    assert shown_value["contract_address"] == MAINNET_USDT and shown_value["data"] == data
    _, by_get = await node(sim, "/wallet/gettransactionbyid", tx_hash, get=True)
    assert by_get == tx

    _, info = await node(sim, "/wallet/gettransactioninfobyid", tx_hash)
    assert info["id"] == tx_hash and info["blockNumber"] == made["block_number"]
    assert info["blockTimeStamp"] == made["block_timestamp"]
    assert info["receipt"]["result"] == "SUCCESS" and "result" not in info
    assert info["contract_address"] == MAINNET_USDT_HEX and info["fee"] > 0
    [log] = info["log"]
    assert log["address"] == MAINNET_USDT_HEX[2:]
    assert log["topics"] == [
        TRANSFER_TOPIC,
        "0" * 24 + payer["hex"][2:],
        "0" * 24 + shop["hex"][2:],
    ]
    assert int(log["data"], 16) == 12_500_000
    _, visible_info = await node(sim, "/wallet/gettransactioninfobyid", tx_hash, visible=True)
    assert visible_info["log"][0]["address"] == MAINNET_USDT
    assert visible_info["contract_address"] == MAINNET_USDT
    assert visible_info["log"][0]["topics"] == log["topics"]
    _, info_by_get = await node(sim, "/wallet/gettransactioninfobyid", tx_hash, True, get=True)
    assert info_by_get == visible_info

    assert (await sim.control.tron_wallet(payer["address"]))["usdt"] == "987.5"
    assert (await sim.control.tron_wallet(shop["address"]))["usdt"] == "12.5"


async def test_unknown_and_bad_hashes_answer_as_the_node_does(sim: Sim) -> None:
    unknown = "ab" * 32
    for path in NODE_PATHS:
        assert await node(sim, path, unknown) == (200, {})
        assert await node(sim, path, unknown, get=True) == (200, {})
        assert await node(sim, path, "abcd") == (200, {})  # hex, but no 32-byte hash
    status, body = await node(sim, "/wallet/gettransactionbyid", "not-a-hash")
    assert status == 200
    assert body["Error"].startswith("class org.tron.core.services.http.JsonFormat$ParseException")
    assert body["Error"].endswith("invalidate hex String")
    status, body = await node(sim, "/wallet/gettransactioninfobyid", "xyz", get=True)
    assert status == 200 and "DecoderException" in body["Error"]
    async with sim.http.post(sim.url + "/wallet/gettransactionbyid", data=b"{oops") as response:
        assert "JSONException" in orjson.loads(await response.read())["Error"]
    status, body = await events(sim, unknown)
    assert status == 200 and body["data"] == [] and body["success"] is True
    assert body["meta"]["page_size"] == 0 and body["meta"]["at"] > 1_700_000_000_000
    status, body = await events(sim, "12345")
    assert status == 400 and body["success"] is False and body["statusCode"] == 400


async def test_solidified_about_57_seconds_later(sim: Sim) -> None:
    payer, shop = await pair(sim)
    made = await sim.control.tron_usdt(payer["address"], shop["address"], "3")
    tx_hash = made["hash"]
    assert made["solid"] is False
    assert made["solid_at"] == made["block_timestamp"] + 19 * 3000
    for path in NODE_PATHS[1::2]:
        assert await node(sim, path, tx_hash) == (200, {})
    assert (await node(sim, NODE_PATHS[0], tx_hash))[1]["txID"] == tx_hash
    _, unconfirmed = await events(sim, tx_hash)
    assert unconfirmed["data"][0]["_unconfirmed"] is True
    assert (await events(sim, tx_hash, "?only_confirmed=true"))[1]["data"] == []

    await sim.control.advance_clock(50)
    assert await node(sim, "/walletsolidity/gettransactioninfobyid", tx_hash) == (200, {})
    await sim.control.advance_clock(11)
    _, info = await node(sim, "/walletsolidity/gettransactioninfobyid", tx_hash)
    assert info["id"] == tx_hash and info["blockNumber"] == made["block_number"]
    _, solid_tx = await node(sim, "/walletsolidity/gettransactionbyid", tx_hash, visible=True)
    assert solid_tx["txID"] == tx_hash
    _, confirmed = await events(sim, tx_hash, "?only_confirmed=true")
    [event] = confirmed["data"]
    assert "_unconfirmed" not in event and event["event_name"] == "Transfer"
    assert event["contract_address"] == MAINNET_USDT and event["transaction_id"] == tx_hash
    assert event["result"]["from"] == "0x" + payer["hex"][2:]
    assert event["result"]["to"] == "0x" + shop["hex"][2:]
    assert event["result"]["value"] == "3000000" and event["result"]["2"] == "3000000"
    assert event["block_timestamp"] == made["block_timestamp"]
    assert (await sim.control.tron_transaction(tx_hash))["solid"] is True


async def test_solidify_now_later_or_when_told(sim: Sim) -> None:
    payer, shop = await pair(sim)
    path = "/walletsolidity/gettransactioninfobyid"
    now = await sim.control.tron_usdt(payer["address"], shop["address"], "1", solidify="now")
    assert now["solid"] is True and (await node(sim, path, now["hash"]))[1]["id"] == now["hash"]

    later = await sim.control.tron_usdt(payer["address"], shop["address"], "1", solidify_after_s=5)
    assert await node(sim, path, later["hash"]) == (200, {})
    await sim.control.advance_clock(5)
    assert (await node(sim, path, later["hash"]))[1]["id"] == later["hash"]

    never = await sim.control.tron_trx(payer["address"], shop["address"], "2", solidify="never")
    await sim.control.advance_clock(3600)
    assert never["solid_at"] is None and await node(sim, path, never["hash"]) == (200, {})
    told = await sim.control.tron_solidify(never["hash"])
    assert told["solid"] is True and (await node(sim, path, never["hash"]))[1]["id"]

    with pytest.raises(SimulatorError) as error:
        await sim.control.tron_usdt(
            payer["address"], shop["address"], "1", solidify="now", solidify_after_s=3
        )
    assert error.value.status == 400
    with pytest.raises(SimulatorError) as error:
        await sim.control.tron_solidify("cd" * 32)
    assert error.value.status == 404


async def test_payer_timestamp_can_lie_the_block_cannot(sim: Sim) -> None:
    payer, shop = await pair(sim)
    fake = 1_600_000_000_000
    made = await sim.control.tron_usdt(payer["address"], shop["address"], "5", timestamp_ms=fake)
    _, tx = await node(sim, "/wallet/gettransactionbyid", made["hash"])
    assert tx["raw_data"]["timestamp"] == fake
    assert hashlib.sha256(bytes.fromhex(tx["raw_data_hex"])).hexdigest() == made["hash"]
    _, info = await node(sim, "/wallet/gettransactioninfobyid", made["hash"])
    assert info["blockTimeStamp"] == made["block_timestamp"] > fake + 10**11


async def test_trx_transfer(sim: Sim) -> None:
    payer, shop = await pair(sim)
    made = await sim.control.tron_trx(payer["address"], shop["address"], "25.5", solidify="now")
    assert made["coin"] == "TRX" and made["amount"] == "25.5"
    _, tx = await node(sim, "/wallet/gettransactionbyid", made["hash"], visible=True)
    contract = tx["raw_data"]["contract"][0]
    assert contract["type"] == "TransferContract" and "fee_limit" not in tx["raw_data"]
    assert contract["parameter"]["value"] == {
        "amount": 25_500_000,
        "owner_address": payer["address"],
        "to_address": shop["address"],
    }
    _, hex_tx = await node(sim, "/wallet/gettransactionbyid", made["hash"])
    assert hex_tx["raw_data"]["contract"][0]["parameter"]["value"]["to_address"] == shop["hex"]
    _, info = await node(sim, "/walletsolidity/gettransactioninfobyid", made["hash"])
    assert info == {
        "id": made["hash"],
        "blockNumber": made["block_number"],
        "blockTimeStamp": made["block_timestamp"],
        "contractResult": [""],
        "receipt": {"net_usage": 268},
    }
    assert (await events(sim, made["hash"]))[1]["data"] == []
    assert (await sim.control.tron_wallet(shop["address"]))["trx"] == "25.5"


async def test_failed_usdt_transfer_reverts(sim: Sim) -> None:
    payer, shop = await pair(sim)
    made = await sim.control.tron_usdt_revert(
        payer["address"], shop["address"], "10", solidify="now"
    )
    assert made["success"] is False
    _, tx = await node(sim, "/wallet/gettransactionbyid", made["hash"])
    assert tx["ret"] == [{"contractRet": "REVERT"}]
    assert tx["raw_data"]["contract"][0]["type"] == "TriggerSmartContract"
    _, info = await node(sim, "/walletsolidity/gettransactioninfobyid", made["hash"])
    assert info["result"] == "FAILED" and info["receipt"]["result"] == "REVERT"
    assert bytes.fromhex(info["resMessage"]) == b"REVERT opcode executed"
    assert "log" not in info and info["contractResult"] == [""]
    _, shown = await node(sim, "/walletsolidity/gettransactioninfobyid", made["hash"], True)
    assert shown["resMessage"] == "REVERT opcode executed"
    assert (await events(sim, made["hash"]))[1]["data"] == []
    assert (await sim.control.tron_wallet(payer["address"]))["usdt"] == "1000"


async def test_lookalike_and_other_network_usdt(sim: Sim) -> None:
    payer, shop = await pair(sim)
    status = await sim.control.tron_status()
    fake = await sim.control.tron_lookalike(payer["address"], shop["address"], "100")
    _, info = await node(sim, "/wallet/gettransactioninfobyid", fake["hash"], visible=True)
    assert info["log"][0]["address"] == status["lookalike_contract"] != MAINNET_USDT
    assert (
        info["log"][0]["topics"][0] == TRANSFER_TOPIC and int(info["log"][0]["data"], 16) == 10**8
    )
    own = await sim.control.tron_create_wallet()
    chosen = await sim.control.tron_lookalike(
        payer["address"], shop["address"], "1", contract=own["address"]
    )
    assert chosen["token"] == own["address"]

    foreign = await sim.control.tron_foreign_usdt(payer["address"], shop["address"], "7")
    _, info = await node(sim, "/wallet/gettransactioninfobyid", foreign["hash"])
    assert info["log"][0]["address"] == hex41(NILE_USDT)[2:]
    _, tx = await node(sim, "/wallet/gettransactionbyid", foreign["hash"], visible=True)
    assert tx["raw_data"]["contract"][0]["parameter"]["value"]["contract_address"] == NILE_USDT
    # Neither moves the official USDT balance.
    assert (await sim.control.tron_wallet(shop["address"]))["usdt"] == "0"


async def test_trc10_transfer(sim: Sim) -> None:
    payer, shop = await pair(sim)
    made = await sim.control.tron_trc10(payer["address"], shop["address"], "3")
    _, tx = await node(sim, "/wallet/gettransactionbyid", made["hash"])
    contract = tx["raw_data"]["contract"][0]
    assert contract["type"] == "TransferAssetContract"
    assert contract["parameter"]["value"]["asset_name"] == b"1002000".hex()
    assert contract["parameter"]["value"]["amount"] == 3_000_000
    _, shown = await node(sim, "/wallet/gettransactionbyid", made["hash"], visible=True)
    assert shown["raw_data"]["contract"][0]["parameter"]["value"]["asset_name"] == "1002000"


async def test_api_key(make_sim: SimFactory) -> None:
    sim = await make_sim(tron_api_key="sekret")
    payer, shop = await pair(sim)
    made = await sim.control.tron_usdt(payer["address"], shop["address"], "1")
    path = "/wallet/gettransactionbyid"
    assert await node(sim, path, made["hash"]) == (401, {"Error": "ApiKey not exists"})
    wrong = await node(sim, path, made["hash"], headers={"TRON-PRO-API-KEY": "nope"})
    assert wrong[0] == 401
    right = await node(sim, path, made["hash"], headers={"TRON-PRO-API-KEY": "sekret"})
    assert right[0] == 200 and right[1]["txID"] == made["hash"]
    assert (await events(sim, made["hash"]))[0] == 401
    await sim.control.tron_require_api_key(None)
    assert (await node(sim, path, made["hash"]))[0] == 200
    await sim.control.tron_require_api_key("other")
    assert (await sim.control.tron_status())["api_key_required"] is True


async def test_faults_429_500_and_garbage(sim: Sim) -> None:
    payer, shop = await pair(sim)
    made = await sim.control.tron_usdt(payer["address"], shop["address"], "1")
    await sim.control.tron_fault("429")
    await sim.control.tron_fault("500")
    assert await sim.control.tron_fault("garbage", 2) == 4
    path = sim.url + "/wallet/gettransactionbyid"
    answers = []
    for _ in range(5):
        async with sim.http.post(path, json={"value": made["hash"]}) as response:
            answers.append((response.status, await response.read()))
    assert answers[0][0] == 429 and "frequency limit" in orjson.loads(answers[0][1])["Error"]
    assert answers[1][0] == 500 and answers[1][1].startswith(b"<html>")
    for status, body in answers[2:4]:
        assert status == 200
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(body)
    assert orjson.loads(answers[4][1])["txID"] == made["hash"]
    await sim.control.tron_fault("429")
    status, body = await events(sim, made["hash"])
    assert status == 429 and body["success"] is False and body["statusCode"] == 429
    await sim.control.tron_fault("500", 3)
    await sim.control.tron_clear_faults()
    assert (await node(sim, "/wallet/gettransactionbyid", made["hash"]))[0] == 200


async def test_networks_keep_their_own_transactions(make_sim: SimFactory) -> None:
    sim = await make_sim(tron_network="nile")
    status = await sim.control.tron_status()
    assert status["network"] == "nile" and status["usdt_contract"] == NILE_USDT
    payer, shop = await pair(sim)
    on_nile = await sim.control.tron_usdt(payer["address"], shop["address"], "2")
    _, tx = await node(sim, "/wallet/gettransactionbyid", on_nile["hash"], visible=True)
    assert tx["raw_data"]["contract"][0]["parameter"]["value"]["contract_address"] == NILE_USDT
    assert on_nile["tronscan"].startswith("https://nile.tronscan.org/#/transaction/")

    await sim.control.tron_set_network("mainnet")
    assert await node(sim, "/wallet/gettransactionbyid", on_nile["hash"]) == (200, {})
    assert await sim.control.tron_transactions() == []
    foreign = await sim.control.tron_foreign_usdt(payer["address"], shop["address"], "1")
    assert foreign["token"] == NILE_USDT
    await sim.control.tron_set_network("nile")
    assert (await node(sim, "/wallet/gettransactionbyid", on_nile["hash"]))[1]["txID"]
    with pytest.raises(SimulatorError) as error:
        await sim.control.tron_set_network("ropsten")
    assert error.value.status == 400


async def block_by_number(sim: Sim, body: Any, path: str = "/wallet/getblockbynum") -> Any:
    async with sim.http.post(sim.url + path, json=body) as response:
        assert response.status == 200
        return orjson.loads(await response.read())


async def test_block_0_is_the_genesis_of_the_network_served(sim: Sim) -> None:
    # The real networks' ids, as the product checks them: a client learns a node's chain so.
    for name, network in NETWORKS.items():
        await sim.control.tron_set_network(name.value)
        genesis = await block_by_number(sim, {"num": 0})
        assert genesis["blockID"] == network.genesis_id
        raw = genesis["block_header"]["raw_data"]
        assert "number" not in raw and "timestamp" not in raw  # proto3 leaves out zeros
        assert "witness_signature" not in genesis["block_header"]
        solid = await block_by_number(sim, {}, "/walletsolidity/getblockbynum")
        assert solid["blockID"] == network.genesis_id
    await sim.control.tron_set_network("nile")
    async with sim.http.get(sim.url + "/wallet/getblockbynum", params={"num": "0"}) as response:
        assert orjson.loads(await response.read())["blockID"] == NILE_GENESIS


async def test_blocks_by_number_up_to_the_head(sim: Sim) -> None:
    async with sim.http.post(sim.url + "/wallet/getnowblock", json={}) as response:
        head = orjson.loads(await response.read())
    number = head["block_header"]["raw_data"]["number"]
    again = await block_by_number(sim, {"num": number, "visible": True})
    assert again["blockID"] == head["blockID"]
    assert (
        again["block_header"]["raw_data"]["timestamp"]
        == head["block_header"]["raw_data"]["timestamp"]
    )
    parent = await block_by_number(sim, {"num": str(number - 1)})
    assert again["block_header"]["raw_data"]["parentHash"] == parent["blockID"]
    assert await block_by_number(sim, {"num": number + 1000}) == {}
    assert await block_by_number(sim, {"num": number}, "/walletsolidity/getblockbynum") == {}
    assert "Error" in await block_by_number(sim, {"num": "zero"})
    async with sim.http.get(sim.url + "/wallet/getblockbynum") as response:
        assert "NumberFormatException" in orjson.loads(await response.read())["Error"]
    await sim.control.tron_fault("500")
    async with sim.http.post(sim.url + "/wallet/getblockbynum", json={"num": 0}) as response:
        assert response.status == 500


async def test_control_refuses_bad_transfers(sim: Sim) -> None:
    payer, shop = await pair(sim)
    bad = [
        ("T" + "1" * 33, shop["address"], "1"),  # checksum fails
        (payer["address"], shop["address"], "1.0000001"),  # seven decimals
        (payer["address"], shop["address"], "0"),
        (payer["address"], shop["address"], "-3"),
        (payer["address"], shop["address"], "1001"),  # more than the wallet holds
    ]
    for sender, recipient, amount in bad:
        with pytest.raises(SimulatorError) as error:
            await sim.control.tron_usdt(sender, recipient, amount)
        assert error.value.status == 400, (sender, amount)
    with pytest.raises(SimulatorError) as error:
        await sim.control.tron_usdt(payer["address"], shop["address"], "1", timestamp_ms=-5)
    assert error.value.status == 400
    with pytest.raises(SimulatorError):
        await sim.control.tron_fault("teapot")
    # An outside payer (not made here) has whatever it pays; hex addresses work too.
    outside = "41" + "11" * 20
    made = await sim.control.tron_usdt(outside, shop["hex"], "5000")
    assert made["from"] == base58.b58encode_check(bytes.fromhex(outside)).decode()


async def test_reset_clears_the_chain(make_sim: SimFactory) -> None:
    sim = await make_sim(seed=3, tron_network="shasta")
    payer, shop = await pair(sim)
    made = await sim.control.tron_usdt(payer["address"], shop["address"], "1", solidify="now")
    await sim.control.tron_set_network("mainnet")
    await sim.control.tron_require_api_key("k")
    await sim.control.tron_fault("500", 5)
    await sim.control.reset()
    status = await sim.control.tron_status()
    assert status["network"] == "shasta" and status["api_key_required"] is False
    assert status["faults_queued"] == 0 and await sim.control.tron_transactions() == []
    assert await node(sim, "/wallet/gettransactionbyid", made["hash"]) == (200, {})
    # Same seed, same wallets again.
    assert (await sim.control.tron_create_wallet())["address"] == payer["address"]


async def test_head_blocks_are_three_seconds_apart(sim: Sim) -> None:
    before = await sim.control.tron_status()
    await sim.control.advance_clock(30)
    after = await sim.control.tron_status()
    assert after["head_block"]["number"] - before["head_block"]["number"] in (10, 11)
    assert after["solid_block"]["number"] == after["head_block"]["number"] - 19
    async with sim.http.post(sim.url + "/walletsolidity/getnowblock", json={}) as response:
        block = orjson.loads(await response.read())
    assert block["block_header"]["raw_data"]["number"] == after["solid_block"]["number"]
    assert block["blockID"].startswith(format(after["solid_block"]["number"], "016x"))


async def listing(sim: Sim, path: str, **query: str) -> tuple[int, Any]:
    async with sim.http.get(sim.url + path, params=query) as response:
        return response.status, orjson.loads(await response.read())


async def test_account_listings_name_the_transfers_into_an_address(sim: Sim) -> None:
    payer, shop = await pair(sim)
    control = sim.control
    usdt = await control.tron_usdt(payer["address"], shop["address"], "5", solidify="now")
    trx = await control.tron_trx(payer["address"], shop["address"], "7", solidify="now")
    await control.tron_usdt(payer["address"], payer["address"], "1", solidify="now")
    pending = await control.tron_usdt(payer["address"], shop["address"], "2", solidify="never")
    status = await control.tron_status()
    base = f"/v1/accounts/{shop['address']}/transactions"
    query = {"only_to": "true", "only_confirmed": "true", "order_by": "block_timestamp,asc"}
    code, trc20 = await listing(
        sim, f"{base}/trc20", **query, contract_address=status["usdt_contract"]
    )
    assert code == 200 and trc20["success"] is True
    assert [row["transaction_id"] for row in trc20["data"]] == [usdt["hash"]]
    row = trc20["data"][0]
    assert (row["to"], row["value"], row["type"]) == (shop["address"], "5000000", "Transfer")
    assert row["token_info"]["address"] == status["usdt_contract"]
    _code, plain = await listing(sim, base, **query)
    assert [row["txID"] for row in plain["data"]] == [trx["hash"]]
    assert plain["data"][0]["raw_data"]["contract"][0]["type"] == "TransferContract"
    _code, everything = await listing(sim, f"{base}/trc20")
    assert pending["hash"] in [row["transaction_id"] for row in everything["data"]]
    _code, later = await listing(sim, f"{base}/trc20", min_timestamp=str(status["now_ms"] + 60_000))
    assert later["data"] == []
    code, refused = await listing(sim, "/v1/accounts/nothing/transactions/trc20")
    assert code == 400 and refused["success"] is False


async def test_a_slow_trongrid_answers_after_its_delay(sim: Sim) -> None:
    status = await sim.control.tron_set_network(delay_s=0.3)
    assert status["delay_s"] == 0.3
    loop = asyncio.get_running_loop()
    started = loop.time()
    code, _answer = await node(sim, "/wallet/gettransactionbyid", "ab" * 32)
    assert code == 200 and loop.time() - started >= 0.3
    await sim.control.tron_set_network(delay_s=0)
