"""TronGrid client: the lookups the verifier needs, over the process's shared HTTP session.

The API key travels in the ``TRON-PRO-API-KEY`` header and nowhere else: not in a log line, an
exception message or a repr. Errors are :class:`TronGridError` with a ``kind``; for the caller
every kind means "try again later" (a payment is never judged on a failed lookup).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

import aiohttp
import orjson
from pydantic import SecretStr

__all__ = ["ErrorKind", "JsonDict", "TronGrid", "TronGridError"]

log = logging.getLogger("sponsorbot.tron")

JsonDict = dict[str, Any]
ErrorKind = Literal["unauthorized", "rate_limited", "unavailable", "garbage", "wrong_network"]

API_KEY_HEADER: Final = "TRON-PRO-API-KEY"
TRANSACTION_PATH: Final = "/wallet/gettransactionbyid"
# The solidity node answers only once a transaction is confirmed (solidified); until then {}.
INFO_PATH: Final = "/walletsolidity/gettransactioninfobyid"
BLOCK_PATH: Final = "/wallet/getblockbynum"
_MAX_REASON_CHARS: Final = 160
_NOT_JSON: Final = object()
_HASH_RE: Final = re.compile(r"[0-9a-f]{64}")
# Rate limits are told in the body too: java-tron's own limiter answers {"Error": "request
# rate exceeded the allowed_rps(10), and the query server is suspended for 5 s"} (sometimes with
# HTTP 200), TronGrid's "The key exceeds the frequency limit(15), and the query server is
# suspended for 30s" (with 429).
_RATE_WORDS_RE: Final = re.compile(
    r"rate exceeded|frequency limit|too many requests|rate limit", re.IGNORECASE
)
_SUSPENDED_RE: Final = re.compile(r"suspended for (\d+(?:\.\d+)?) ?s", re.IGNORECASE)


class TronGridError(Exception):
    """A TronGrid lookup that gave no usable answer; ``kind`` says why, the message in a line.

    ``unauthorized``: the API key was refused (401/403). ``rate_limited``: too many requests
    (``retry_after`` seconds if TronGrid said). ``unavailable``: 5xx, no connection, a timeout.
    ``garbage``: an answer that is not the JSON object we asked for. ``wrong_network``: the
    node serves another chain than the one asked about (its block 0 is another network's).
    """

    def __init__(self, kind: ErrorKind, message: str, *, retry_after: float | None = None):
        """Build the error; ``message`` must already be free of the API key."""
        self.kind: ErrorKind = kind
        self.retry_after = retry_after
        super().__init__(message)


class TronGrid:
    """The lookups of one TronGrid (or compatible node, or the simulator) by base URL."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        base_url: str,
        api_key: SecretStr | str | None = None,
        *,
        timeout_s: float = 5.0,
    ) -> None:
        """Use ``session`` (shared, owned by the caller) to reach ``base_url``."""
        self._session = session
        self.base_url = base_url.rstrip("/")
        secret = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self._api_key = secret or None
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)

    def __repr__(self) -> str:
        keyed = "with key" if self._api_key else "no key"
        return f"TronGrid({self.base_url!r}, {keyed})"

    async def transaction(self, tx_hash: str) -> JsonDict | None:
        """The transaction as the full node knows it; None if it does not know the hash."""
        answer = await self._post(TRANSACTION_PATH, tx_hash)
        if answer is not None and not isinstance(answer.get("raw_data"), Mapping):
            raise TronGridError("garbage", f"TronGrid {TRANSACTION_PATH}: no raw_data in answer")
        return answer

    async def transaction_info(self, tx_hash: str) -> JsonDict | None:
        """The solidified execution result (block time, receipt, logs); None until confirmed."""
        answer = await self._post(INFO_PATH, tx_hash)
        if answer is not None and type(answer.get("blockTimeStamp")) is not int:
            raise TronGridError("garbage", f"TronGrid {INFO_PATH}: no blockTimeStamp in answer")
        return answer

    async def genesis_block_id(self) -> str:
        """The id of block 0 as the node tells it (lower-case hex): which chain it serves."""
        answer = await self._request(BLOCK_PATH, {"num": 0})
        block_id = answer.get("blockID") if answer else None
        if not isinstance(block_id, str) or not _HASH_RE.fullmatch(block_id.lower()):
            raise TronGridError("garbage", f"TronGrid {BLOCK_PATH}: no blockID of block 0")
        return block_id.lower()

    async def _post(self, path: str, tx_hash: str) -> JsonDict | None:
        if not _HASH_RE.fullmatch(tx_hash):
            raise ValueError("a transaction hash is 64 lower-case hex characters")
        return await self._request(path, {"value": tx_hash, "visible": False})

    async def _request(self, path: str, query: JsonDict) -> JsonDict | None:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers[API_KEY_HEADER] = self._api_key
        log.debug("trongrid %s %s", path, query)
        outcome = await self._send(path, headers, body=orjson.dumps(query))
        # Raised here, outside any except block, so no aiohttp exception rides along as
        # __context__ (error reporters print it, and it may quote the request).
        if isinstance(outcome, TronGridError):
            raise outcome
        status, retry_after, payload = outcome
        return self._answer(path, status, retry_after, payload)

    async def listing(self, path: str, params: Mapping[str, str]) -> list[JsonDict]:
        """The rows of a v1 listing (``GET``, e.g. an account's transactions), checked as every
        answer is; a listing that does not say ``success`` is garbage."""
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers[API_KEY_HEADER] = self._api_key
        outcome = await self._send(path, headers, params=params)
        if isinstance(outcome, TronGridError):
            raise outcome
        answer = self._answer(path, *outcome)
        data = answer.get("data") if answer and answer.get("success") is True else None
        if not isinstance(data, list):
            raise TronGridError("garbage", f"TronGrid {path}: not a successful listing")
        return [row for row in data if isinstance(row, dict)]

    async def _send(
        self,
        path: str,
        headers: Mapping[str, str],
        *,
        body: bytes | None = None,
        params: Mapping[str, str] | None = None,
    ) -> tuple[int, str | None, bytes] | TronGridError:
        """POST `body` (the node's API), or GET with `params` (the v1 listings)."""
        method = "GET" if body is None else "POST"
        try:
            async with self._session.request(
                method,
                self.base_url + path,
                data=body,
                params=params,
                headers=headers,
                timeout=self._timeout,
            ) as resp:
                return resp.status, resp.headers.get("Retry-After"), await resp.read()
        except TimeoutError:
            return TronGridError("unavailable", f"TronGrid {path}: timed out")
        except (aiohttp.ClientError, OSError) as exc:
            reason = self._scrub(str(exc))[:_MAX_REASON_CHARS]
            detail = f"{type(exc).__name__}: {reason}" if reason else type(exc).__name__
            return TronGridError("unavailable", f"TronGrid {path}: {detail}")

    def _answer(
        self, path: str, status: int, retry_after: str | None, payload: bytes
    ) -> JsonDict | None:
        where = f"TronGrid {path}"
        if status in (401, 403):
            raise TronGridError("unauthorized", f"{where}: HTTP {status}, the API key was refused")
        if status == 429:
            seconds = _seconds(retry_after)
            if seconds is None:
                seconds = _suspended_for(payload.decode("utf-8", "replace"))
            raise TronGridError(
                "rate_limited", f"{where}: HTTP 429, rate limited", retry_after=seconds
            )
        if status != 200:
            raise TronGridError("unavailable", f"{where}: HTTP {status}")
        try:
            answer = orjson.loads(payload)
        except orjson.JSONDecodeError:
            # Raised below, not here: the decode error quotes the body and would ride along.
            answer = _NOT_JSON
        if answer is _NOT_JSON:
            raise TronGridError("garbage", f"{where}: the answer is not JSON")
        if not isinstance(answer, dict):
            raise TronGridError("garbage", f"{where}: the answer is not a JSON object")
        if "Error" in answer:
            # java-tron reports failures as {"Error": "..."}, often with HTTP 200.
            reason = self._scrub(str(answer["Error"]))[:_MAX_REASON_CHARS]
            if _RATE_WORDS_RE.search(reason):
                raise TronGridError(
                    "rate_limited", f"{where}: {reason}", retry_after=_suspended_for(reason)
                )
            raise TronGridError("garbage", f"{where}: the node answered an error: {reason}")
        return answer or None

    def _scrub(self, text: str) -> str:
        # No text from outside reaches a message without this: a proxy may echo headers back.
        text = " ".join(text.split())
        return text.replace(self._api_key, "<key>") if self._api_key else text


def _seconds(header: str | None) -> float | None:
    if header is None:
        return None
    try:
        seconds = float(header)
    except ValueError:
        return None  # an HTTP date; a retry a few seconds later is as good
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _suspended_for(text: str) -> float | None:
    """The wait a rate-limit message names ("... suspended for 30s"), if it names one."""
    match = _SUSPENDED_RE.search(text)
    return float(match.group(1)) if match else None
