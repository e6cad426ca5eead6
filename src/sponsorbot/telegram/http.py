"""A lean HTTP/1.1 keep-alive client for the Bot API's hot path: small POSTs, nothing more.

aiohttp's client spends most of a Bot API call's CPU in Python bookkeeping (context managers,
stream writers, payload lookup, timeout objects, URL building). This module does only what the
hot path needs: one pre-joined request write, one future and one timer per call, and parsing
with httptools (llhttp, in C) straight from an :class:`asyncio.Protocol`.

The request path carries a bot token, so nothing here logs, and no exception text or repr
ever includes the path or the full URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
import sys
import zlib
from collections import deque
from typing import Final, cast
from urllib.parse import urlsplit

import httptools

__all__ = [
    "MAX_BODY",
    "HttpPool",
    "HttpResponseError",
    "InvalidBaseUrl",
    "InvalidRequest",
    "ResponseTooLarge",
]

MAX_BODY: Final = 64 * 1024 * 1024

# (status, Retry-After header or None, body)
Result = tuple[int, str | None, bytes]

# Anything outside visible ASCII would break the request line (or smuggle a header).
_BAD_TARGET: Final = re.compile(rb"[^\x21-\x7e]")
_CONTENT_LENGTH: Final = b"\r\nContent-Length: "
_END_OF_HEAD: Final = b"\r\n\r\n"


class HttpResponseError(ValueError):
    """The server's answer is not a well-formed HTTP/1.1 response."""


class ResponseTooLarge(HttpResponseError):
    """The response body is larger than :data:`MAX_BODY`."""


class InvalidBaseUrl(ValueError):
    """The base URL is not ``http(s)://host[:port][/prefix]``."""


class InvalidRequest(ValueError):
    """The request path or content type holds bytes HTTP does not allow there."""


class _Stale(ConnectionResetError):
    """A reused connection ended before any byte of the answer: the server had closed it."""


class _StopParsing(Exception):
    """Raised from a parser callback to stop llhttp; the reason is kept on the connection."""


def _closed_without_answer() -> ConnectionResetError:
    return ConnectionResetError("server closed the connection without answering")


class _Conn(asyncio.Protocol):
    """One keep-alive connection; at most one request in flight (no pipelining)."""

    __slots__ = (
        "_done",
        "_encoding",
        "_error",
        "_framed",
        "_fut",
        "_got_bytes",
        "_headers_done",
        "_keep",
        "_parser",
        "_parts",
        "_pool",
        "_retry_after",
        "_size",
        "dead",
        "idle_since",
        "in_idle",
        "owns_slot",
        "reused",
        "transport",
    )

    def __init__(self, pool: HttpPool) -> None:
        self._pool = pool
        self.transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._fut: asyncio.Future[Result] | None = None
        self._retry_after: str | None = None
        self._encoding: bytes | None = None
        self._parts: list[bytes] = []
        self._error: Exception | None = None
        self._reset()
        self.dead = False
        self.reused = False
        self.owns_slot = False
        self.in_idle = False
        self.idle_since = 0.0

    # --- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._fut is None:
            # Bytes nobody asked for: this connection's framing can no longer be trusted.
            self.abort()
            return
        self._got_bytes = True
        try:
            self._parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade):
            if self._done:
                # Junk after a complete answer: the answer stands, the connection does not.
                self._keep = False
                return
            error = self._error or HttpResponseError("malformed HTTP response")
            self._error = error
            self._fail(error)

    def eof_received(self) -> bool | None:
        return None  # let the transport close; connection_lost decides what EOF meant

    def connection_lost(self, exc: Exception | None) -> None:
        self._die()
        fut = self._fut
        if fut is None or fut.done():
            return
        if self._headers_done and not self._framed and exc is None and self._error is None:
            # Neither Content-Length nor chunked: the body runs until the server closes.
            self._complete(self._parser.get_status_code())
        elif not self._got_bytes:
            fut.set_exception(_Stale() if self.reused else _closed_without_answer())
        else:
            fut.set_exception(ConnectionResetError("connection closed in the middle of the answer"))

    # --- httptools callbacks -----------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self._done:
            raise _StopParsing  # a second answer to one request

    def on_header(self, name: bytes, value: bytes) -> None:
        # Lengths first: most headers are skipped without lowering their name.
        n = len(name)
        if n == 11:
            if self._retry_after is None and name.lower() == b"retry-after":
                self._retry_after = value.decode("latin-1").strip()
        elif n == 14:
            if name.lower() == b"content-length":
                self._framed = True
                if int(value) > MAX_BODY:
                    self._error = ResponseTooLarge("response body too large")
                    raise _StopParsing
        elif n == 16:
            if name.lower() == b"content-encoding":
                self._encoding = value.strip().lower()
        elif n == 17 and name.lower() == b"transfer-encoding" and b"chunked" in value.lower():
            self._framed = True

    def on_headers_complete(self) -> None:
        self._headers_done = True

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size > MAX_BODY:
            self._error = ResponseTooLarge("response body too large")
            raise _StopParsing
        self._parts.append(body)

    def on_message_complete(self) -> None:
        status = self._parser.get_status_code()
        if status < 200:
            # An interim 1xx answer: the real one follows on the same connection.
            self._reset()
            self._got_bytes = True
            return
        self._keep = self._parser.should_keep_alive()
        self._complete(status)

    # --- the request -------------------------------------------------------------------------

    async def request(self, data: bytes, deadline: float) -> Result:
        """Send ``data`` and wait for the answer until ``deadline`` (loop time)."""
        transport = self.transport
        if self.dead or transport is None or transport.is_closing():
            # Died after it was handed over to us.
            self.abort()
            raise _Stale() if self.reused else _closed_without_answer()
        loop = self._pool.loop
        fut: asyncio.Future[Result] = loop.create_future()
        self._fut = fut
        self._reset()
        timer = loop.call_at(deadline, self._timed_out)
        try:
            transport.write(data)
            result = await fut
        except BaseException:
            # Timed out, cancelled, reset or malformed: whatever the state, never reuse it.
            self.abort()
            raise
        finally:
            timer.cancel()
            self._fut = None
        self.reused = True
        if self._keep and not self.dead:
            self._pool.release(self)
        else:
            self.close()
        return result

    def close(self) -> None:
        """Close the connection (after flushing any unsent bytes) and free the pool slot."""
        if self.transport is not None:
            self.transport.close()
        self._die()

    def abort(self) -> None:
        """Drop the connection at once and free the pool slot."""
        if self.transport is not None:
            self.transport.abort()
        self._die()

    # --- internals ---------------------------------------------------------------------------

    def _reset(self) -> None:
        self._retry_after = None
        self._encoding = None
        self._parts = []
        self._size = 0
        self._framed = False
        self._got_bytes = False
        self._headers_done = False
        self._done = False
        self._keep = False
        self._error = None

    def _complete(self, status: int) -> None:
        self._done = True
        fut = self._fut
        if fut is None or fut.done():
            return
        parts = self._parts
        body = parts[0] if len(parts) == 1 else b"".join(parts)
        if self._encoding is not None and self._encoding != b"identity":
            try:
                body = _decode(body, self._encoding)
            except HttpResponseError as exc:
                self._keep = False
                fut.set_exception(exc)
                return
        fut.set_result((status, self._retry_after, body))

    def _fail(self, error: BaseException) -> None:
        fut = self._fut
        if fut is not None and not fut.done():
            fut.set_exception(error)
        self.abort()

    def _timed_out(self) -> None:
        self._fail(TimeoutError("request timed out"))

    def _die(self) -> None:
        if self.dead:
            return
        self.dead = True
        self._pool.forget(self)


def _decode(body: bytes, encoding: bytes) -> bytes:
    # We ask for identity; this is only for a server that compresses anyway.
    if encoding == b"gzip" or encoding == b"x-gzip":
        wbits = 16 + zlib.MAX_WBITS
    elif encoding == b"deflate":
        wbits = zlib.MAX_WBITS if body[:1] == b"\x78" else -zlib.MAX_WBITS
    else:
        raise HttpResponseError("unsupported content encoding")
    decoder = zlib.decompressobj(wbits)
    try:
        out = decoder.decompress(body, MAX_BODY + 1)
    except zlib.error:
        raise HttpResponseError("corrupt compressed body") from None
    if len(out) > MAX_BODY:
        raise ResponseTooLarge("response body too large")
    return out


class HttpPool:
    """Keep-alive HTTP/1.1 connections to one server, for POSTs of small bodies.

    Idle connections are reused last-in first-out, so a quiet pool keeps using its few warm
    connections and lets the others expire after ``keepalive_s``. At most ``limit``
    connections are open (0: no limit); further calls wait their turn, within their own
    timeout. Use it from one event loop: the one of its first call.
    """

    def __init__(
        self,
        base_url: str,
        *,
        limit: int = 256,
        keepalive_s: float = 900.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        """Parse ``base_url`` (``http(s)://host[:port][/prefix]``); nothing is opened yet."""
        try:
            parts = urlsplit(base_url)
            scheme = parts.scheme.lower()
            host = parts.hostname or ""
            port = parts.port
            prefix = parts.path.rstrip("/").encode("ascii")
            host_bytes = host.encode("ascii")
        except ValueError:  # UnicodeEncodeError too
            raise InvalidBaseUrl("invalid base URL") from None
        if (
            scheme not in ("http", "https")
            or not host
            or _BAD_TARGET.search(host_bytes)
            or (prefix and _BAD_TARGET.search(prefix))
            or parts.username is not None
            or parts.query
            or parts.fragment
        ):
            raise InvalidBaseUrl("invalid base URL")
        tls = scheme == "https"
        default_port = 443 if tls else 80
        self._host = host
        self._port = port or default_port
        self._ssl: ssl.SSLContext | None = None
        if tls:
            self._ssl = ssl_context if ssl_context is not None else ssl.create_default_context()
        # As with aiohttp's connector, 0 (or less) means no limit.
        self._limit = limit if limit > 0 else sys.maxsize
        self._keepalive_s = keepalive_s
        host_header = f"[{host}]" if ":" in host else host
        if port is not None and port != default_port:
            host_header += f":{port}"
        self._origin = f"{scheme}://{host_header}"
        # The constant parts of every request, encoded once.
        self._head = b"POST " + prefix
        self._mid = (
            b" HTTP/1.1\r\nHost: "
            + host_header.encode("ascii")
            + b"\r\nAccept-Encoding: identity\r\nContent-Type: "
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._idle: deque[_Conn] = deque()
        self._conns: set[_Conn] = set()
        self._waiters: deque[asyncio.Future[_Conn | None]] = deque()
        self._open = 0  # slots taken: live connections plus connections being opened
        self._sweeper: asyncio.TimerHandle | None = None
        self._closed = False

    def __repr__(self) -> str:
        # Origin only: a prefix could be anything, and paths carry tokens.
        return f"HttpPool({self._origin!r}, open={self._open}, idle={len(self._idle)})"

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the pool's connections live on (bound on first use)."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    @property
    def open_connections(self) -> int:
        """Connections open or being opened."""
        return self._open

    @property
    def idle_connections(self) -> int:
        """Open connections waiting for a request."""
        return len(self._idle)

    async def post(
        self, path: bytes | str, body: bytes, content_type: bytes, timeout_s: float
    ) -> Result:
        """POST ``body`` to ``{prefix}{path}``; return (status, Retry-After or None, body).

        ``timeout_s`` bounds the whole call: waiting for a slot, connecting, sending and the
        answer. Raises OSError subclasses (connection problems), TimeoutError, or a ValueError
        subclass (:class:`HttpResponseError` for a malformed answer, :class:`InvalidRequest`).
        A reused connection the server had closed while idle is retried once, fresh.
        """
        if self._closed:
            raise ConnectionError("HTTP pool is closed")
        if isinstance(path, str):
            # Non-ASCII is never valid in a request line; checked first, so that no
            # UnicodeEncodeError (which holds the whole path) is ever made.
            path = path.encode("ascii") if path.isascii() else b"\x80"
        if _BAD_TARGET.search(path) or _BAD_TARGET.search(content_type):
            raise InvalidRequest("request path or content type not allowed by HTTP")
        loop = self._loop
        if loop is None:
            loop = self.loop
        deadline = loop.time() + timeout_s
        request = b"".join(
            (
                self._head,
                path,
                self._mid,
                content_type,
                _CONTENT_LENGTH,
                b"%d" % len(body),
                _END_OF_HEAD,
                body,
            )
        )
        conn = self._pop_idle()
        if conn is None:
            conn = await self._acquire(deadline, reuse=True)
        try:
            return await conn.request(request, deadline)
        except _Stale:
            pass
        # Outside the except block, so the retry's own errors carry no stale context.
        conn = await self._acquire(deadline, reuse=False)
        try:
            return await conn.request(request, deadline)
        except _Stale:
            pass
        raise _closed_without_answer()

    async def close(self) -> None:
        """Close every connection; calls in flight and later calls raise ConnectionError."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(ConnectionError("HTTP pool is closed"))
        for conn in list(self._conns):
            conn.abort()
        self._idle.clear()
        await asyncio.sleep(0)  # let the transports run connection_lost

    # --- slots and idle connections ----------------------------------------------------------

    def _pop_idle(self) -> _Conn | None:
        idle = self._idle
        while idle:
            conn = idle.pop()
            conn.in_idle = False
            transport = conn.transport
            if not conn.dead and transport is not None and not transport.is_closing():
                return conn
            conn.abort()
        return None

    async def _acquire(self, deadline: float, *, reuse: bool) -> _Conn:
        if self._closed:
            raise ConnectionError("HTTP pool is closed")
        if not reuse and self._open >= self._limit and self._idle:
            # Room for a fresh connection: the oldest idle one is the least likely to be warm.
            self._idle[0].close()
        if self._open < self._limit:
            self._open += 1
            return await self._connect(deadline)
        waiter: asyncio.Future[_Conn | None] = self.loop.create_future()
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout_at(deadline):
                got = await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                # Handed a slot or a connection just as we gave up: pass it on.
                handed = waiter.result()
                if handed is None:
                    self._free_slot()
                else:
                    self.release(handed)
            else:
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise
        if got is None:
            return await self._connect(deadline)  # a slot was reserved for us
        return got

    async def _connect(self, deadline: float) -> _Conn:
        # The caller has reserved a slot; it passes to the connection once it is up.
        try:
            async with asyncio.timeout_at(deadline):
                _, conn = await self.loop.create_connection(
                    lambda: _Conn(self),
                    self._host,
                    self._port,
                    ssl=self._ssl,
                    server_hostname=self._host if self._ssl is not None else None,
                )
        except BaseException:
            self._free_slot()
            raise
        if conn.dead or self._closed:
            conn.abort()
            self._free_slot()
            raise _closed_without_answer()
        conn.owns_slot = True
        self._conns.add(conn)
        return conn

    def release(self, conn: _Conn) -> None:
        """Take back a healthy connection after a complete answer: to a waiter, or idle."""
        if conn.dead:
            return  # its slot is already free
        if self._closed:
            conn.abort()
            return
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return
        conn.idle_since = self.loop.time()
        conn.in_idle = True
        self._idle.append(conn)
        if self._sweeper is None:
            self._arm_sweeper()

    def forget(self, conn: _Conn) -> None:
        """A connection has closed: drop it and free its slot."""
        self._conns.discard(conn)
        if conn.in_idle:
            conn.in_idle = False
            with contextlib.suppress(ValueError):
                self._idle.remove(conn)
        if conn.owns_slot:
            conn.owns_slot = False
            self._free_slot()

    def _free_slot(self) -> None:
        self._open -= 1
        if self._closed:
            return
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                self._open += 1
                waiter.set_result(None)
                return

    def _arm_sweeper(self) -> None:
        if self._idle:
            when = self._idle[0].idle_since + self._keepalive_s
            self._sweeper = self.loop.call_at(when, self._sweep)

    def _sweep(self) -> None:
        # Idle connections are in release order: the oldest are at the left.
        self._sweeper = None
        expired = self.loop.time() - self._keepalive_s
        idle = self._idle
        while idle and idle[0].idle_since <= expired:
            idle[0].close()
        self._arm_sweeper()
