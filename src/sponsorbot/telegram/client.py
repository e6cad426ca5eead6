"""Bot API client: one shared set of HTTP connections per process, a thin wrapper per token.

JSON calls (the hot path) go through the lean keep-alive pool of :mod:`.http`; uploads with
files go through aiohttp, whose session is also shared with other APIs (TronGrid, prices).

The request URL contains the bot token, so this module never logs URLs and never lets an HTTP
exception (whose text may include the URL) escape or hang off ours as a cause or context.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import quote

import aiohttp
import orjson
from yarl import URL

from sponsorbot.telegram.errors import (
    NetworkError,
    ServerError,
    TelegramError,
    error_from_answer,
    scrub,
)
from sponsorbot.telegram.http import HttpPool

__all__ = ["Bot", "BotApi", "FileUpload", "JsonDict"]

log = logging.getLogger("sponsorbot.telegram")

JsonDict = dict[str, Any]
# (file name, content, content type)
FileUpload = tuple[str, bytes, str]

# getUpdates holds the request open for `timeout` seconds; the HTTP timeout needs headroom on top.
_POLL_MARGIN_S = 10.0
_MAX_REASON_CHARS = 200
_MAX_CACHED_PATHS = 10_000
_JSON = b"application/json"
# Characters a path segment may hold as they are (RFC 3986 pchar); the rest is %-encoded.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


class BotApi:
    """Bot API client shared by every bot of the process.

    Calls go to ``{base_url}/bot{token}/{method}``. The lean pool (JSON calls) and the aiohttp
    session (uploads, other APIs) are each created on first use, inside the running event loop;
    each keeps up to ``connect_limit`` keep-alive connections.
    """

    def __init__(
        self,
        base_url: str,
        *,
        connect_limit: int = 256,
        keepalive_s: float = 900.0,
        timeout_s: float = 35.0,
    ) -> None:
        """Configure the client; nothing is opened until the first call."""
        self.base_url = base_url.rstrip("/")
        self.connect_limit = connect_limit
        self.keepalive_s = keepalive_s
        self.timeout_s = timeout_s
        self._session: aiohttp.ClientSession | None = None
        self._pool: HttpPool | None = None
        self._closed = False
        # Built once per bot and method: building a URL from text is a visible share of a
        # call's cost at hundreds of calls a second. (Uploads are rare: theirs is built each time.)
        self._paths: dict[tuple[str, str], bytes] = {}

    def __repr__(self) -> str:
        return f"BotApi({self.base_url!r})"

    def bot(self, token: str) -> Bot:
        """A :class:`Bot` calling through this client with ``token``."""
        return Bot(self, token)

    def session(self) -> aiohttp.ClientSession:
        """The process's HTTP session, for other APIs (TronGrid, price sources) to share."""
        return self._get_session()

    def _get_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise RuntimeError("BotApi is closed")
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self.connect_limit, keepalive_timeout=self.keepalive_s
            )
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    def _get_pool(self) -> HttpPool:
        pool = self._pool
        if pool is None:
            # May raise ValueError (a bad base URL): the caller maps it to a NetworkError.
            pool = self._pool = HttpPool(
                self.base_url, limit=self.connect_limit, keepalive_s=self.keepalive_s
            )
        return pool

    async def close(self) -> None:
        """Close the connections; later calls raise RuntimeError."""
        self._closed = True
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def call(
        self,
        token: str,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
        files: Mapping[str, FileUpload] | None = None,
    ) -> Any:
        """Call ``method`` and return its ``result``; raise a :class:`TelegramError` otherwise.

        Parameters whose value is None are left out. Without ``files`` the parameters go as a
        JSON body; with ``files`` everything goes as multipart form data, non-string values
        (reply_markup, numbers, booleans) JSON-encoded.
        """
        if self._closed:
            raise RuntimeError("BotApi is closed")
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        timeout = self.timeout_s if timeout_s is None else timeout_s
        log.debug("calling %s", method)
        if files:
            outcome = await self._post_form(token, method, clean, files, timeout)
        else:
            outcome = await self._post(token, method, clean, timeout)
        # Raised here, outside any except block, so the HTTP exception is not even kept as
        # __context__ (which error reporters walk even when `from None` hides it).
        if isinstance(outcome, TelegramError):
            raise outcome
        status, retry_after_header, body = outcome
        return self._result(token, method, status, retry_after_header, body)

    async def _post(
        self, token: str, method: str, params: Mapping[str, Any], timeout_s: float
    ) -> tuple[int, str | None, bytes] | TelegramError:
        """A JSON call through the lean pool: the hot path."""
        body = _dumps(params)
        try:
            path = self._paths.get((token, method))
            if path is None:
                if len(self._paths) > _MAX_CACHED_PATHS:
                    self._paths.clear()
                # %-encoded like yarl would, so an odd token cannot break the request line.
                path = quote(f"/bot{token}/{method}", safe=_PATH_SAFE).encode("ascii")
                self._paths[token, method] = path
            return await self._get_pool().post(path, body, _JSON, timeout_s)
        except (TimeoutError, OSError, ValueError) as exc:
            return _network_error(method, exc, token)

    async def _post_form(
        self,
        token: str,
        method: str,
        params: Mapping[str, Any],
        files: Mapping[str, FileUpload],
        timeout_s: float,
    ) -> tuple[int, str | None, bytes] | TelegramError:
        """A multipart upload through aiohttp."""
        session = self._get_session()
        form = aiohttp.FormData()
        for name, value in params.items():
            form.add_field(name, value if isinstance(value, str) else _dumps(value).decode())
        for name, (filename, content, content_type) in files.items():
            form.add_field(name, content, filename=filename, content_type=content_type)
        try:
            url = URL(f"{self.base_url}/bot{token}/{method}")
            timeout = aiohttp.ClientTimeout(total=timeout_s)
            async with session.post(url, data=form, timeout=timeout) as resp:
                body = await resp.read()
                return resp.status, resp.headers.get("Retry-After"), body
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
            return _network_error(method, exc, token)

    @staticmethod
    def _result(
        token: str, method: str, status: int, retry_after_header: str | None, body: bytes
    ) -> Any:
        try:
            answer = orjson.loads(body)
        except ValueError:
            answer = None
        if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
            raise ServerError(method, status, f"not a Bot API answer (HTTP {status})")
        if answer["ok"]:
            return answer.get("result")
        raise error_from_answer(method, status, answer, retry_after_header, token)


def _network_error(method: str, exc: BaseException, token: str) -> NetworkError:
    # Only the class name and a scrubbed, shortened reason: aiohttp messages may hold the URL.
    # The lean pool's errors go the same way, so callers see one NetworkError shape.
    kind = type(exc).__name__
    reason = scrub(str(exc), token)[:_MAX_REASON_CHARS]
    if isinstance(exc, TimeoutError):
        reason = reason or "timed out"
    return NetworkError(method, 0, f"{kind}: {reason}" if reason else kind)


def _typed_dict(value: Any) -> JsonDict:
    return cast(JsonDict, value)


class Bot:
    """One bot's view of :class:`BotApi`: typed helpers returning the JSON as plain dicts."""

    def __init__(self, api: BotApi, token: str) -> None:
        """Bind ``token`` to ``api``; the token is never shown by repr."""
        self.api = api
        self._token = token

    def __repr__(self) -> str:
        return f"Bot(…{self.token_tail})"

    @property
    def token_tail(self) -> str:
        """The last 4 characters of the token, enough to tell bots apart in logs."""
        return self._token[-4:]

    async def call(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
        files: Mapping[str, FileUpload] | None = None,
    ) -> Any:
        """Call any Bot API method with this bot's token (see :meth:`BotApi.call`)."""
        return await self.api.call(self._token, method, params, timeout_s=timeout_s, files=files)

    async def get_me(self) -> JsonDict:
        """getMe: the bot's own User."""
        return _typed_dict(await self.call("getMe"))

    async def get_updates(
        self,
        offset: int | None = None,
        # Bot API's own name: seconds Telegram holds the poll open, not a client-side timeout.
        timeout: int = 0,  # noqa: ASYNC109
        allowed_updates: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[JsonDict]:
        """getUpdates (long polling for ``timeout`` seconds): a list of Update objects."""
        params = {
            "offset": offset,
            "timeout": timeout,
            "allowed_updates": allowed_updates,
            "limit": limit,
        }
        result = await self.call("getUpdates", params, timeout_s=timeout + _POLL_MARGIN_S)
        return cast(list[JsonDict], result)

    async def set_webhook(
        self,
        url: str,
        secret_token: str | None = None,
        allowed_updates: Sequence[str] | None = None,
        max_connections: int | None = None,
        drop_pending_updates: bool | None = None,
    ) -> bool:
        """setWebhook."""
        params = {
            "url": url,
            "secret_token": secret_token,
            "allowed_updates": allowed_updates,
            "max_connections": max_connections,
            "drop_pending_updates": drop_pending_updates,
        }
        return bool(await self.call("setWebhook", params))

    async def delete_webhook(self, drop_pending_updates: bool = False) -> bool:
        """deleteWebhook."""
        return bool(
            await self.call("deleteWebhook", {"drop_pending_updates": drop_pending_updates})
        )

    async def get_webhook_info(self) -> JsonDict:
        """getWebhookInfo: a WebhookInfo object."""
        return _typed_dict(await self.call("getWebhookInfo"))

    async def get_chat(self, chat_id: int | str) -> JsonDict:
        """getChat: a ChatFullInfo object."""
        return _typed_dict(await self.call("getChat", {"chat_id": chat_id}))

    async def get_chat_member(self, chat_id: int | str, user_id: int) -> JsonDict:
        """getChatMember: a ChatMember object (read its ``status``)."""
        return _typed_dict(
            await self.call("getChatMember", {"chat_id": chat_id, "user_id": user_id})
        )

    async def create_chat_invite_link(
        self,
        chat_id: int | str,
        name: str | None = None,
        creates_join_request: bool | None = None,
        expire_date: int | None = None,
        member_limit: int | None = None,
    ) -> JsonDict:
        """createChatInviteLink: a ChatInviteLink object."""
        params = {
            "chat_id": chat_id,
            "name": name,
            "creates_join_request": creates_join_request,
            "expire_date": expire_date,
            "member_limit": member_limit,
        }
        return _typed_dict(await self.call("createChatInviteLink", params))

    async def revoke_chat_invite_link(self, chat_id: int | str, invite_link: str) -> JsonDict:
        """revokeChatInviteLink: the revoked ChatInviteLink object."""
        params = {"chat_id": chat_id, "invite_link": invite_link}
        return _typed_dict(await self.call("revokeChatInviteLink", params))

    async def approve_chat_join_request(self, chat_id: int | str, user_id: int) -> bool:
        """approveChatJoinRequest."""
        return bool(
            await self.call("approveChatJoinRequest", {"chat_id": chat_id, "user_id": user_id})
        )

    async def decline_chat_join_request(self, chat_id: int | str, user_id: int) -> bool:
        """declineChatJoinRequest."""
        return bool(
            await self.call("declineChatJoinRequest", {"chat_id": chat_id, "user_id": user_id})
        )
