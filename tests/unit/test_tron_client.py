"""The TronGrid client and ``verify_hash`` over real HTTP, against a small local stand-in."""

from __future__ import annotations

import asyncio
import logging
import socket
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from pydantic import SecretStr

from sponsorbot.config import TronNetwork
from sponsorbot.tron import (
    NETWORKS,
    HashError,
    TronGrid,
    TronGridError,
    check,
    network_of_genesis,
    verify_hash,
)
from tests.loopback import served
from tests.unit.tron_shapes import (
    TRX_INFO,
    TRX_PAYEE,
    TRX_TRANSACTION,
    USDT_INFO,
    USDT_PAYEE,
    USDT_TRANSACTION,
    JsonDict,
)

KEY = "5f0c2a9e-7d41-4b8e-9a3c-key-for-tests"
HASH = USDT_TRANSACTION["txID"]
TRX_HASH = TRX_TRANSACTION["txID"]
BLOCK_PATH = "/wallet/getblockbynum"
MAINNET_GENESIS = NETWORKS[TronNetwork.MAINNET].genesis_id
NILE_GENESIS = NETWORKS[TronNetwork.NILE].genesis_id
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class FakeGrid:
    base_url: str = ""
    # (path, headers, JSON body) of every request, in order.
    seen: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    override: Handler | None = None
    transactions: dict[str, JsonDict] = field(default_factory=dict)
    infos: dict[str, JsonDict] = field(default_factory=dict)
    # The id of block 0 the node tells: the chain it serves.
    genesis: str = MAINNET_GENESIS

    def lookups(self) -> list[str]:
        """The paths asked, but for the network check."""
        return [path for path, _, _ in self.seen if path != BLOCK_PATH]


@pytest.fixture(autouse=True)
def no_node_checked_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each test's node starts unchecked, even on a port an earlier test's node had.
    monkeypatch.setattr(check, "_confirmed", set())


@pytest.fixture
async def grid() -> AsyncIterator[FakeGrid]:
    state = FakeGrid(
        transactions={HASH: USDT_TRANSACTION, TRX_HASH: TRX_TRANSACTION},
        # The real infos are of other transactions of the same kind (tron_shapes.py says why):
        # here each answers for the transaction it is paired with, as TronGrid's would.
        infos={HASH: {**USDT_INFO, "id": HASH}, TRX_HASH: {**TRX_INFO, "id": TRX_HASH}},
    )

    async def dispatch(request: web.Request) -> web.StreamResponse:
        body = await request.json() if request.can_read_body else None
        state.seen.append((request.path, dict(request.headers), body))
        if state.override is not None:
            return await state.override(request)
        if request.path == BLOCK_PATH:
            # A real block 0 has more (header, transactions); only its id matters here.
            return web.json_response({"blockID": state.genesis, "block_header": {"raw_data": {}}})
        value = body["value"] if isinstance(body, dict) else ""
        table = state.infos if "info" in request.path else state.transactions
        return web.json_response(table.get(value, {}))

    app = web.Application()
    app.router.add_post("/wallet/gettransactionbyid", dispatch)
    app.router.add_post("/walletsolidity/gettransactioninfobyid", dispatch)
    app.router.add_post(BLOCK_PATH, dispatch)
    async with served(app) as state.base_url:
        yield state


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client_session:
        yield client_session


def _answer(status: int, body: bytes | str, **headers: str) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        data = body.encode() if isinstance(body, str) else body
        return web.Response(status=status, body=data, headers=headers)

    return handler


def _assert_keyless(exc: BaseException) -> None:
    texts = [str(exc), repr(exc), repr(exc.args), "".join(traceback.format_exception(exc))]
    texts.append(repr(vars(exc)))
    for text in texts:
        assert KEY not in text
    assert exc.__cause__ is None
    assert exc.__context__ is None


async def _error(call: Awaitable[Any]) -> TronGridError:
    with pytest.raises(TronGridError) as caught:
        await call
    _assert_keyless(caught.value)
    assert "\n" not in str(caught.value)
    return caught.value


# --- Answers -----------------------------------------------------------------------------


async def test_answers_are_returned_parsed(grid: FakeGrid, session: aiohttp.ClientSession) -> None:
    client = TronGrid(session, grid.base_url + "/", KEY)
    assert await client.transaction(HASH) == USDT_TRANSACTION
    assert await client.transaction_info(HASH) == {**USDT_INFO, "id": HASH}
    paths = [path for path, _, _ in grid.seen]
    assert paths == ["/wallet/gettransactionbyid", "/walletsolidity/gettransactioninfobyid"]
    for _, headers, body in grid.seen:
        assert headers["TRON-PRO-API-KEY"] == KEY
        assert body == {"value": HASH, "visible": False}


async def test_empty_object_means_not_known(grid: FakeGrid, session: aiohttp.ClientSession) -> None:
    client = TronGrid(session, grid.base_url)
    unknown = "ab" * 32
    assert await client.transaction(unknown) is None
    assert await client.transaction_info(unknown) is None


async def test_no_key_sends_no_header(grid: FakeGrid, session: aiohttp.ClientSession) -> None:
    for key in (None, "", SecretStr("")):
        await TronGrid(session, grid.base_url, key).transaction(HASH)
    assert all("TRON-PRO-API-KEY" not in headers for _, headers, _ in grid.seen)


async def test_a_secret_key_is_sent_and_never_shown(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    client = TronGrid(session, grid.base_url, SecretStr(KEY))
    await client.transaction(HASH)
    assert grid.seen[0][1]["TRON-PRO-API-KEY"] == KEY
    assert KEY not in repr(client)
    assert KEY not in str(vars(client).get("base_url"))


async def test_a_malformed_hash_is_refused_before_any_request(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    with pytest.raises(ValueError, match="64"):
        await TronGrid(session, grid.base_url).transaction("not-a-hash")
    assert grid.seen == []


# --- Errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refused_key_is_unauthorized(
    grid: FakeGrid, session: aiohttp.ClientSession, status: int
) -> None:
    grid.override = _answer(status, f'{{"Error": "ApiKey not exists: {KEY}"}}')
    error = await _error(TronGrid(session, grid.base_url, KEY).transaction(HASH))
    assert error.kind == "unauthorized"
    assert f"HTTP {status}" in str(error)


async def test_429_is_rate_limited_with_retry_after(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    grid.override = _answer(429, '{"Error": "slow down"}', **{"Retry-After": "7"})
    error = await _error(TronGrid(session, grid.base_url, KEY).transaction(HASH))
    assert (error.kind, error.retry_after) == ("rate_limited", 7.0)


async def test_429_takes_the_wait_from_trongrids_message(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    message = "The key exceeds the frequency limit(15), and the query server is suspended for 30s"
    grid.override = _answer(429, f'{{"Error": "{message}"}}')
    error = await _error(TronGrid(session, grid.base_url, KEY).transaction_info(HASH))
    assert (error.kind, error.retry_after) == ("rate_limited", 30.0)


@pytest.mark.parametrize("retry_after", ["soon", "-3", "nan", "inf"])
async def test_a_useless_retry_after_is_dropped(
    grid: FakeGrid, session: aiohttp.ClientSession, retry_after: str
) -> None:
    grid.override = _answer(429, "", **{"Retry-After": retry_after})
    error = await _error(TronGrid(session, grid.base_url).transaction(HASH))
    assert (error.kind, error.retry_after) == ("rate_limited", None)


async def test_a_rate_limit_told_with_200_is_rate_limited(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    message = "request rate exceeded the allowed_rps(10), and the query server is suspended for 5 s"
    grid.override = _answer(200, f'{{"Error": "{message}"}}')
    error = await _error(TronGrid(session, grid.base_url).transaction(HASH))
    assert (error.kind, error.retry_after) == ("rate_limited", 5.0)


@pytest.mark.parametrize("status", [500, 502, 503, 504, 404])
async def test_server_errors_are_unavailable(
    grid: FakeGrid, session: aiohttp.ClientSession, status: int
) -> None:
    grid.override = _answer(status, "<html>oops</html>")
    error = await _error(TronGrid(session, grid.base_url, KEY).transaction(HASH))
    assert error.kind == "unavailable"
    assert f"HTTP {status}" in str(error)


@pytest.mark.parametrize(
    "body",
    [
        b'{"ret":[{"contractRet":"SUCC',  # cut off mid-way
        b"<html>maintenance</html>",
        b"[1, 2]",
        b'"text"',
        b"",
        b'{"txID": "ab"}',  # no raw_data: not a transaction
        b'{"Error": "class org.tron.core.services.http.JsonFormat$ParseException : 1:10"}',
    ],
)
async def test_garbage_is_garbage(
    grid: FakeGrid, session: aiohttp.ClientSession, body: bytes
) -> None:
    grid.override = _answer(200, body)
    error = await _error(TronGrid(session, grid.base_url, KEY).transaction(HASH))
    assert error.kind == "garbage"


async def test_info_without_a_block_time_is_garbage(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    grid.override = _answer(200, b'{"id": "ab", "blockTimeStamp": "soon"}')
    error = await _error(TronGrid(session, grid.base_url).transaction_info(HASH))
    assert error.kind == "garbage"


async def test_a_slow_answer_times_out_as_unavailable(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.4)
        return web.json_response({})

    grid.override = slow
    error = await _error(TronGrid(session, grid.base_url, KEY, timeout_s=0.1).transaction(HASH))
    assert error.kind == "unavailable"
    assert "timed out" in str(error)


async def test_no_server_is_unavailable(session: aiohttp.ClientSession) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    error = await _error(TronGrid(session, f"http://127.0.0.1:{port}", KEY).transaction(HASH))
    assert error.kind == "unavailable"


async def test_the_key_echoed_back_is_scrubbed(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    grid.override = _answer(200, f'{{"Error": "no such key {KEY}"}}')
    error = await _error(TronGrid(session, grid.base_url, KEY).transaction(HASH))
    assert "<key>" in str(error)


async def test_the_key_never_reaches_a_log_line(
    grid: FakeGrid, session: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = TronGrid(session, grid.base_url, KEY)
    await client.transaction(HASH)
    grid.override = _answer(401, KEY)
    with pytest.raises(TronGridError):
        await client.transaction_info(HASH)
    assert caplog.records  # the lookups were logged, at DEBUG
    for record in caplog.records:
        assert KEY not in record.getMessage()
        assert KEY not in repr(record.args)


# --- verify_hash: lookup and verdict -----------------------------------------------------

APPROVED = datetime(2024, 11, 10, 10, 30, tzinfo=UTC)


async def _verify(
    grid: FakeGrid,
    session: aiohttp.ClientSession,
    tx: str,
    address: str,
    *,
    network: TronNetwork = TronNetwork.MAINNET,
    rate: Decimal | None = None,
) -> JsonDict:
    verdict = await verify_hash(
        session, grid.base_url, KEY, tx, network, address, APPROVED, rate, accept_trx=True
    )
    return verdict.to_json()


async def test_verify_hash_credits_a_real_usdt_payment(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    line = await _verify(grid, session, f"https://tronscan.org/#/transaction/{HASH}", USDT_PAYEE)
    assert (line["verdict"], line["coin"], line["amount"]) == ("credit", "USDT", "3.500000")
    assert [path for path, _, _ in grid.seen] == [
        BLOCK_PATH,
        "/wallet/gettransactionbyid",
        "/walletsolidity/gettransactioninfobyid",
    ]


async def test_verify_hash_credits_trx_at_the_given_rate(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    line = await _verify(grid, session, TRX_HASH.upper(), TRX_PAYEE, rate=Decimal("0.25"))
    assert (line["verdict"], line["coin"], line["credited_usdt"]) == ("credit", "TRX", "7.500000")


async def test_verify_hash_of_an_unknown_hash_waits_after_one_lookup(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    line = await _verify(grid, session, "cd" * 32, USDT_PAYEE)
    assert (line["verdict"], line["reason"]) == ("wait", "unknown")
    assert grid.lookups() == ["/wallet/gettransactionbyid"]


async def test_verify_hash_of_an_unsolidified_transaction_waits(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    del grid.infos[HASH]
    line = await _verify(grid, session, HASH, USDT_PAYEE)
    assert (line["verdict"], line["reason"]) == ("wait", "unconfirmed")


async def test_verify_hash_rejects_a_link_to_another_network_without_a_lookup(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    line = await _verify(grid, session, f"nile.tronscan.org/#/transaction/{HASH}", USDT_PAYEE)
    assert (line["verdict"], line["reason"]) == ("reject", "wrong_network")
    assert grid.seen == []


async def test_verify_hash_refuses_bad_input_before_any_lookup(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    with pytest.raises(HashError):
        await _verify(grid, session, "12345", USDT_PAYEE)
    with pytest.raises(ValueError, match="checksum"):
        await _verify(grid, session, HASH, USDT_PAYEE[:-1] + "X")
    assert grid.seen == []


async def test_verify_hash_passes_trongrid_errors_on(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    grid.override = _answer(503, "")
    error = await _error(_verify(grid, session, HASH, USDT_PAYEE))
    assert error.kind == "unavailable"


async def test_verify_hash_judges_too_early_by_block_time(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    verdict = await verify_hash(
        session,
        grid.base_url,
        None,
        HASH,
        TronNetwork.MAINNET,
        USDT_PAYEE,
        APPROVED + timedelta(hours=1),
        None,
        accept_trx=False,
    )
    assert (verdict.verdict, verdict.reason) == ("reject", "too_early")


async def test_verify_hash_refuses_an_answer_about_another_transaction(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    grid.transactions["cd" * 32] = grid.transactions[HASH]
    error = await _error(_verify(grid, session, "cd" * 32, USDT_PAYEE))
    assert error.kind == "garbage" and "another transaction" in str(error)


# --- verify_hash: the node's network (ADR 0018) -----------------------------------------


def test_each_network_is_known_by_its_genesis_block_id() -> None:
    # TRON's eth_chainId is the last 4 bytes of block 0's id; these are the values TRON's
    # JSON-RPC reference gives, a check on the ids copied into networks.py.
    chain_ids = {"mainnet": "2b6653dc", "nile": "cd8690dc", "shasta": "94a9059e"}
    for network, info in NETWORKS.items():
        assert info.genesis_id.startswith("0" * 16)  # block number 0 in 8 bytes
        assert info.genesis_id.endswith(chain_ids[network.value])
        assert network_of_genesis(info.genesis_id.upper()) == network
    assert network_of_genesis("00" * 32) is None


async def test_genesis_block_id_asks_for_block_0(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    grid.genesis = MAINNET_GENESIS.upper()
    assert await TronGrid(session, grid.base_url, KEY).genesis_block_id() == MAINNET_GENESIS
    [(path, headers, body)] = grid.seen
    assert (path, body, headers["TRON-PRO-API-KEY"]) == (BLOCK_PATH, {"num": 0}, KEY)


@pytest.mark.parametrize("body", [b"{}", b'{"blockID": "00ff"}', b'{"blockID": 7}'])
async def test_a_block_0_without_an_id_is_garbage(
    grid: FakeGrid, session: aiohttp.ClientSession, body: bytes
) -> None:
    grid.override = _answer(200, body)
    error = await _error(TronGrid(session, grid.base_url, KEY).genesis_block_id())
    assert error.kind == "garbage"


async def test_verify_hash_checks_the_node_network_once(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    for tx in (HASH, TRX_HASH, "cd" * 32):
        await _verify(grid, session, tx, USDT_PAYEE, rate=Decimal("0.25"))
    paths = [path for path, _, _ in grid.seen]
    assert paths[0] == BLOCK_PATH and paths.count(BLOCK_PATH) == 1
    assert len(grid.lookups()) == 5  # two lookups for each known hash, one for the unknown


async def test_verify_hash_refuses_a_node_of_another_network_before_any_lookup(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    grid.genesis = NILE_GENESIS
    error = await _error(_verify(grid, session, HASH, USDT_PAYEE))
    assert error.kind == "wrong_network"
    message = str(error)
    assert "serves nile, not mainnet" in message
    assert "SPONSORBOT_TRONGRID_URL_MAINNET" in message and grid.base_url not in message
    assert grid.lookups() == []
    # A refusal is not kept: the node put right is believed on the next try.
    grid.genesis = MAINNET_GENESIS
    line = await _verify(grid, session, HASH, USDT_PAYEE)
    assert line["verdict"] == "credit"
    assert [path for path, _, _ in grid.seen].count(BLOCK_PATH) == 2


async def test_a_node_checked_for_one_network_is_checked_again_for_another(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    assert (await _verify(grid, session, HASH, USDT_PAYEE))["verdict"] == "credit"
    # A shop on Nile sent to the same (mainnet) node: refused, not judged as a Nile payment.
    error = await _error(_verify(grid, session, TRX_HASH, TRX_PAYEE, network=TronNetwork.NILE))
    assert error.kind == "wrong_network" and "serves mainnet, not nile" in str(error)
    assert "SPONSORBOT_TRONGRID_URL_NILE" in str(error)
    assert grid.lookups().count("/wallet/gettransactionbyid") == 1


async def test_a_node_of_an_unknown_chain_is_refused(
    grid: FakeGrid, session: aiohttp.ClientSession
) -> None:
    grid.genesis = "00" * 8 + "ab" * 24  # a private network's block 0
    error = await _error(_verify(grid, session, HASH, USDT_PAYEE))
    assert error.kind == "wrong_network"
    assert f"an unknown chain (block 0 {grid.genesis})" in str(error)
