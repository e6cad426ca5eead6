"""The simulated TronGrid's HTTP routes: java-tron's ``/wallet*`` API and the v1 events.

It answers as TronGrid in front of java-tron does, down to the odd parts a client must live
with: an unknown hash is ``{}`` with status 200; a value that is not hex is an ``{"Error"}``
body with status 200 (the servlet catches every exception and prints it); the solidity node
shows a transaction only once it is solid. Faults queued through the control API come first,
then the ``TRON-PRO-API-KEY`` check when the simulator was told to require a key.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from sponsorbot.simulator import tronshapes
from sponsorbot.simulator.botapi import SIMULATOR_KEY
from sponsorbot.simulator.tron import Chain, Tx

Handler = Callable[[web.Request], Awaitable[web.Response]]

RATE_LIMITED = "The key exceeds the frequency limit(15), and the query server is suspended for 30s"
NO_KEY = "ApiKey not exists"
SERVER_ERROR_PAGE = (
    "<html>\r\n<head><title>500 Internal Server Error</title></head>\r\n<body>\r\n"
    "<center><h1>500 Internal Server Error</h1></center>\r\n</body>\r\n</html>\r\n"
)
# A body cut off mid-way: what a client sees when a proxy drops the connection.
GARBAGE = b'{"ret":[{"contractRet":"SUCC'
_HEX = re.compile(r"[0-9a-fA-F]*")
_TX_ID = re.compile(r"[0-9a-fA-F]{64}")
_NUMBER = re.compile(r"-?[0-9]{1,18}")
_PARSE_ERROR = "org.tron.core.services.http.JsonFormat$ParseException"
_JSON = "application/json"


class NodeError(Exception):
    """An exception the java-tron servlet would print as ``{"Error": "class X : message"}``."""

    def __init__(self, java_class: str, message: str) -> None:
        super().__init__(f"class {java_class} : {message}")


def _node(data: Any, status: int = 200) -> web.Response:
    # The servlets println() their JSON: the body ends with a newline.
    return web.Response(
        body=orjson.dumps(data) + b"\n", status=status, content_type=_JSON, charset="utf-8"
    )


def v1_answer(data: Any, status: int = 200) -> web.Response:
    """A v1 API answer (no trailing newline, unlike the node's)."""
    return web.Response(body=orjson.dumps(data), status=status, content_type=_JSON, charset="utf-8")


def v1_error(message: str, status: int = 400) -> web.Response:
    """A v1 API refusal, as TronGrid words one."""
    return v1_answer({"success": False, "error": message, "statusCode": status}, status)


def chain_of(request: web.Request) -> Chain:
    """The simulated chain behind ``request``."""
    return request.app[SIMULATOR_KEY].tron


async def refusal(request: web.Request, v1: bool) -> web.Response | None:
    """A queued fault or a missing/wrong API key, or None to answer normally (after the
    chain's delay, if one is set)."""
    chain = chain_of(request)
    if chain.delay_s:
        await asyncio.sleep(chain.delay_s)
    fault = chain.take_fault()
    if fault == "429":
        if v1:
            return v1_error(RATE_LIMITED, 429)
        return _node({"Error": RATE_LIMITED}, 429)
    if fault == "500":
        return web.Response(text=SERVER_ERROR_PAGE, status=500, content_type="text/html")
    if fault == "garbage":
        return web.Response(body=GARBAGE, content_type=_JSON)
    if chain.api_key is not None and request.headers.get("TRON-PRO-API-KEY") != chain.api_key:
        # TronGrid answers a bad key this way on both its node API and its v1 API.
        return _node({"Error": NO_KEY}, 401)
    return None


def _hex(value: str, java_class: str, message: str) -> str:
    """java-tron's ByteArray.fromHexString: drops 0x, pads an odd length with a 0."""
    digits = value.removeprefix("0x")
    if not _HEX.fullmatch(digits):
        raise NodeError(java_class, message)
    return ("0" + digits if len(digits) % 2 else digits).lower()


async def _query(request: web.Request) -> tuple[str, bool]:
    """The hash (lower-case hex, any length) and ``visible`` of a GET or POST call."""
    if request.method == "GET":
        visible = request.query.get("visible", "").lower() == "true"
        return (
            _hex(
                request.query.get("value", ""),
                "org.bouncycastle.util.encoders.DecoderException",
                "exception decoding Hex string: invalid characters encountered in Hex string",
            ),
            visible,
        )
    text = await request.text()
    if not text.strip():
        return "", False
    body = _object(text)
    visible = _visible(body.get("visible", ""))
    value = body.get("value", "")
    column = text.find('"value"') + 1
    if not isinstance(value, str):
        raise NodeError(_PARSE_ERROR, f"1:{column}: Expected string.")
    return _hex(value, _PARSE_ERROR, f"1:{column}: invalidate hex String"), visible


async def _block_number(request: web.Request) -> tuple[int, bool]:
    """The ``num`` and ``visible`` of a getblockbynum call; a POST without ``num`` asks for 0."""
    if request.method == "GET":
        # Long.parseLong of the parameter: a missing one is an error, not block 0.
        raw: Any = request.query.get("num")
        visible = _visible(request.query.get("visible", ""))
        text = ""
    else:
        text = await request.text()
        body = _object(text) if text.strip() else {}
        raw, visible = body.get("num", 0), _visible(body.get("visible", ""))
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw, visible
    if isinstance(raw, str) and _NUMBER.fullmatch(raw):
        return int(raw), visible
    if request.method == "GET":
        shown = "Cannot parse null string: null" if raw is None else f'For input string: "{raw}"'
        raise NodeError("java.lang.NumberFormatException", shown)
    column = text.find('"num"') + 1
    raise NodeError(_PARSE_ERROR, f"1:{column}: Expected integer.")


def _object(text: str) -> dict[str, Any]:
    """A POST body as the servlets read it: a JSON object, else fastjson's error."""
    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise NodeError("com.alibaba.fastjson.JSONException", f"syntax error, {exc}") from exc
    if not isinstance(body, dict):
        raise NodeError("com.alibaba.fastjson.JSONException", "can not cast to JSONObject.")
    return body


def _visible(value: Any) -> bool:
    # Boolean.parseBoolean of the value's text: only "true", in any case, is true.
    return str(value).lower() == "true"


def _lookup(request: web.Request, tx_hash: str, solidity: bool) -> Tx | None:
    chain = chain_of(request)
    tx = chain.find(tx_hash) if len(tx_hash) == 64 else None
    if tx is None or (solidity and not tx.solid(chain.now_ms())):
        return None
    return tx


def _servlet(answer: Callable[[web.Request], Awaitable[Any]]) -> Handler:
    """A ``/wallet*`` call: a refusal first, then ``answer``'s JSON, or the ``{"Error"}`` body of
    the NodeError it raised."""

    async def handle(request: web.Request) -> web.Response:
        refused = await refusal(request, v1=False)
        if refused is not None:
            return refused
        try:
            return _node(await answer(request))
        except NodeError as exc:
            return _node({"Error": str(exc)})

    return handle


def _by_id(render: Callable[[Tx, bool], dict[str, Any]], solidity: bool) -> Handler:
    async def answer(request: web.Request) -> dict[str, Any]:
        tx_hash, visible = await _query(request)
        tx = _lookup(request, tx_hash, solidity)
        return {} if tx is None else render(tx, visible)

    return _servlet(answer)


def _now_block(solidity: bool) -> Handler:
    async def answer(request: web.Request) -> dict[str, Any]:
        _, visible = await _query(request)
        return tronshapes.block(chain_of(request), solidity, visible)

    return _servlet(answer)


def _block_by_number(solidity: bool) -> Handler:
    async def answer(request: web.Request) -> dict[str, Any]:
        number, visible = await _block_number(request)
        return tronshapes.block_by_number(chain_of(request), number, solidity, visible)

    return _servlet(answer)


def flag(request: web.Request, snake: str, camel: str) -> bool:
    """A v1 query option that is on ("true"): TronGrid takes them in snake_case or camelCase."""
    return (request.query.get(snake) or request.query.get(camel) or "").lower() == "true"


async def transaction_events(request: web.Request) -> web.Response:
    """GET /v1/transactions/{id}/events: the transaction's decoded events."""
    refused = await refusal(request, v1=True)
    if refused is not None:
        return refused
    tx_id = request.match_info["id"]
    if not _TX_ID.fullmatch(tx_id):
        return v1_error("Invalid transaction id provided")
    confirmed = flag(request, "only_confirmed", "onlyConfirmed")
    unconfirmed = flag(request, "only_unconfirmed", "onlyUnconfirmed")
    if confirmed and unconfirmed:
        error = "Cannot use only_confirmed and only_unconfirmed at the same time"
        return v1_error(error)
    chain = chain_of(request)
    tx = chain.find(tx_id)
    data: list[dict[str, Any]] = []
    if tx is not None:
        solid = tx.solid(chain.now_ms())
        if not (confirmed and not solid) and not (unconfirmed and solid):
            data = tronshapes.events(tx, solid)
    meta = {"at": chain.now_ms(), "page_size": len(data)}
    return v1_answer({"data": data, "success": True, "meta": meta})


def setup(app: web.Application) -> None:
    """Add TronGrid's routes (full node, solidity node and v1 events) to ``app``."""
    for prefix, solidity in (("wallet", False), ("walletsolidity", True)):
        routes = {
            "gettransactionbyid": _by_id(tronshapes.transaction, solidity),
            "gettransactioninfobyid": _by_id(tronshapes.info, solidity),
            "getnowblock": _now_block(solidity),
            "getblockbynum": _block_by_number(solidity),
        }
        for name, handler in routes.items():
            app.router.add_get(f"/{prefix}/{name}", handler)
            app.router.add_post(f"/{prefix}/{name}", handler)
    app.router.add_get("/v1/transactions/{id}/events", transaction_events)
