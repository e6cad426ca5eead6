"""The lean HTTP/1.1 pool against real loopback servers, most of them written byte by byte."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import itertools
import ssl
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsorbot.telegram import http
from sponsorbot.telegram.http import (
    HttpPool,
    HttpResponseError,
    InvalidBaseUrl,
    InvalidRequest,
    ResponseTooLarge,
)
from tests.examples import examples
from tests.loopback import served

SECRET = "AAHfakeSecretForTests_0123456789-xy"
TOKEN = f"1234567890:{SECRET}"
PATH = f"/bot{TOKEN}/sendMessage".encode()
JSON = b"application/json"
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

Handler = Callable[["RawServer", asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class RawServer:
    """What a raw loopback server saw."""

    url: str = ""
    connections: int = 0
    open_now: int = 0
    max_open: int = 0
    heads: list[bytes] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    closed: int = 0  # connections the client ended (EOF seen by the server)


async def read_request(state: RawServer, reader: asyncio.StreamReader) -> bytes | None:
    """One request's head (the body is read and kept too); None at EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        state.closed += 1
        return None
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = await reader.readexactly(length)
    state.heads.append(head)
    state.bodies.append(body)
    return head


def answering(*responses: bytes) -> Handler:
    """Answer each request of a connection with the next response (the last one repeats)."""

    async def handle(state: RawServer, reader: asyncio.StreamReader, writer: Any) -> None:
        i = 0
        while await read_request(state, reader) is not None:
            writer.write(responses[min(i, len(responses) - 1)])
            await writer.drain()
            i += 1

    return handle


@contextlib.asynccontextmanager
async def raw_server(
    handler: Handler, ssl_context: ssl.SSLContext | None = None
) -> AsyncIterator[RawServer]:
    """A TCP server on 127.0.0.1 running `handler` for each connection."""
    state = RawServer()
    writers: list[asyncio.StreamWriter] = []

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        state.connections += 1
        state.open_now += 1
        state.max_open = max(state.max_open, state.open_now)
        try:
            await handler(state, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            state.open_now -= 1
            writer.close()

    server = await asyncio.start_server(on_connection, "127.0.0.1", 0, ssl=ssl_context)
    host, port = server.sockets[0].getsockname()[:2]
    state.url = f"{'https' if ssl_context else 'http'}://{host}:{port}"
    try:
        yield state
    finally:
        server.close()
        for writer in writers:
            writer.transport.abort()
        await server.wait_closed()


@contextlib.asynccontextmanager
async def pool_for(url: str, **kwargs: Any) -> AsyncIterator[HttpPool]:
    pool = HttpPool(url, **kwargs)
    try:
        yield pool
    finally:
        await pool.close()


async def eventually(check: Callable[[], bool], seconds: float = 2.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


def assert_no_path(exc: BaseException) -> None:
    texts = [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
    for text in texts:
        assert SECRET not in text
        assert TOKEN not in text
        assert "sendMessage" not in text


# --- Framing --------------------------------------------------------------------------------


async def test_content_length_body_and_the_request_sent() -> None:
    async with raw_server(answering(OK)) as server, pool_for(server.url + "/pre/fix/") as pool:
        assert await pool.post(PATH, b'{"a":1}', JSON, 5.0) == (200, None, b"ok")
    head = server.heads[0].decode()
    lines = head.split("\r\n")
    assert lines[0] == f"POST /pre/fix/bot{TOKEN}/sendMessage HTTP/1.1"
    headers = {k.lower(): v for k, _, v in (line.partition(": ") for line in lines[1:] if line)}
    assert headers["host"] == server.url.removeprefix("http://")
    assert headers["content-type"] == "application/json"
    assert headers["content-length"] == "7"
    assert server.bodies == [b'{"a":1}']


async def test_chunked_body() -> None:
    chunked = (
        b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    async with raw_server(answering(chunked)) as server, pool_for(server.url) as pool:
        assert await pool.post(b"/x", b"", JSON, 5.0) == (201, None, b"hello world")
        assert await pool.post(b"/x", b"", JSON, 5.0) == (201, None, b"hello world")
    assert server.connections == 1


async def test_body_read_until_close() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it"

    async def handle(state: RawServer, reader: asyncio.StreamReader, writer: Any) -> None:
        await read_request(state, reader)
        writer.write(answer)
        await writer.drain()
        writer.close()

    async with raw_server(handle) as server, pool_for(server.url) as pool:
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"all of it")
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"all of it")
        assert pool.idle_connections == 0
    assert server.connections == 2


async def test_interim_100_continue_is_skipped() -> None:
    answer = b"HTTP/1.1 100 Continue\r\n\r\n" + OK
    async with raw_server(answering(answer)) as server, pool_for(server.url) as pool:
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
    assert server.connections == 1


async def test_retry_after_header_and_case_insensitive_names() -> None:
    answer = b"HTTP/1.1 429 Too Many Requests\r\nrETRY-aFTER:  7 \r\nCONTENT-LENGTH: 2\r\n\r\n{}"
    async with raw_server(answering(answer)) as server, pool_for(server.url) as pool:
        assert await pool.post(b"/x", b"", JSON, 5.0) == (429, "7", b"{}")
        assert await pool.post(b"/x", b"", JSON, 5.0) == (429, "7", b"{}")
    assert server.connections == 1


async def test_gzip_answer_is_decoded() -> None:
    import gzip

    packed = gzip.compress(b'{"ok":true}')
    answer = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (
        len(packed),
        packed,
    )
    async with raw_server(answering(answer)) as server, pool_for(server.url) as pool:
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b'{"ok":true}')
    assert b"accept-encoding: identity" in server.heads[0].lower()


# --- Keep-alive -----------------------------------------------------------------------------


async def test_sequential_calls_share_one_connection() -> None:
    async with raw_server(answering(OK)) as server, pool_for(server.url) as pool:
        for i in range(20):
            assert await pool.post(b"/x", b"%d" % i, JSON, 5.0) == (200, None, b"ok")
        assert (pool.open_connections, pool.idle_connections) == (1, 1)
    assert server.connections == 1
    assert server.bodies == [b"%d" % i for i in range(20)]


async def test_keep_alive_against_aiohttp_server() -> None:
    peers: set[Any] = set()

    async def echo(request: web.Request) -> web.Response:
        assert request.transport is not None
        peers.add(request.transport.get_extra_info("peername"))
        return web.json_response(
            {"path": request.path, "body": (await request.read()).decode()},
            headers={"Retry-After": "3"},
        )

    app = web.Application()
    app.router.add_post("/{tail:.*}", echo)
    async with served(app) as url, pool_for(url + "/api") as pool:
        for _ in range(10):
            status, retry_after, body = await pool.post(PATH, b"[1]", JSON, 5.0)
            assert (status, retry_after) == (200, "3")
            assert body == f'{{"path": "/api/bot{TOKEN}/sendMessage", "body": "[1]"}}'.encode()
        big = b"x" * 300_000  # bigger than a socket buffer both ways
        status, _, body = await pool.post(b"/big", big, JSON, 5.0)
        assert status == 200 and len(body) > 300_000
    assert len(peers) == 1


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ],
    ids=["connection-close", "http-1.0"],
)
async def test_answers_that_end_the_connection_are_not_reused(answer: bytes) -> None:
    async with raw_server(answering(answer)) as server, pool_for(server.url) as pool:
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
        assert (pool.open_connections, pool.idle_connections) == (0, 0)
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
    assert server.connections == 2


async def test_http_1_0_keep_alive_is_reused() -> None:
    answer = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok"
    async with raw_server(answering(answer)) as server, pool_for(server.url) as pool:
        for _ in range(3):
            assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
    assert server.connections == 1


async def test_idle_connection_closed_by_the_server_is_dropped_before_use() -> None:
    async def handle(state: RawServer, reader: asyncio.StreamReader, writer: Any) -> None:
        await read_request(state, reader)
        writer.write(OK)  # keep-alive by the protocol, then closed at once
        await writer.drain()
        writer.close()

    async with raw_server(handle) as server, pool_for(server.url) as pool:
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
        await eventually(lambda: pool.open_connections == 0)
        assert pool.idle_connections == 0
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
    assert server.connections == 2 and len(server.heads) == 2


@pytest.mark.parametrize("how", ["close", "reset"])
async def test_stale_connection_is_retried_once_on_a_fresh_one(how: str) -> None:
    # The first connection answers once, then ends at the next request without a byte: what a
    # server whose keep-alive timer fired just as the request left looks like.
    async def handle(state: RawServer, reader: asyncio.StreamReader, writer: Any) -> None:
        first = state.connections == 1
        await read_request(state, reader)
        writer.write(OK)
        await writer.drain()
        if first:
            await read_request(state, reader)
            if how == "reset":
                writer.transport.abort()
            return
        await answering(OK)(state, reader, writer)

    async with raw_server(handle) as server, pool_for(server.url) as pool:
        assert await pool.post(b"/x", b"1", JSON, 5.0) == (200, None, b"ok")
        assert await pool.post(b"/x", b"2", JSON, 5.0) == (200, None, b"ok")
        assert await pool.post(b"/x", b"3", JSON, 5.0) == (200, None, b"ok")
    assert server.connections == 2
    assert server.bodies == [b"1", b"2", b"2", b"3"]


async def test_reset_on_a_fresh_connection_is_an_error_without_retry() -> None:
    async def handle(state: RawServer, reader: asyncio.StreamReader, writer: Any) -> None:
        await read_request(state, reader)
        writer.transport.abort()

    async with raw_server(handle) as server, pool_for(server.url) as pool:
        with pytest.raises(ConnectionError) as info:
            await pool.post(PATH, b"", JSON, 5.0)
        assert pool.open_connections == 0
    assert_no_path(info.value)
    assert server.connections == 1 and len(server.heads) == 1


async def test_partial_answer_is_an_error_and_closes() -> None:
    async def handle(state: RawServer, reader: asyncio.StreamReader, writer: Any) -> None:
        await read_request(state, reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
        await writer.drain()
        writer.close()

    async with raw_server(handle) as server, pool_for(server.url) as pool:
        with pytest.raises(ConnectionError) as info:
            await pool.post(PATH, b"", JSON, 5.0)
        assert pool.open_connections == 0
    assert_no_path(info.value)
    assert server.connections == 1


async def test_idle_connections_expire_after_keepalive() -> None:
    async with raw_server(answering(OK)) as server, pool_for(server.url, keepalive_s=0.1) as pool:
        await asyncio.gather(*(pool.post(b"/x", b"", JSON, 5.0) for _ in range(3)))
        assert pool.idle_connections == 3
        await eventually(lambda: pool.open_connections == 0)
        assert pool.idle_connections == 0
        await eventually(lambda: server.closed == 3)
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")


# --- Limits, timeouts, cancellation ---------------------------------------------------------


def _slow_unless_hang(delay: float) -> Handler:
    """Answer after `delay`; never answer a request to /hang."""

    async def handle(state: RawServer, reader: asyncio.StreamReader, writer: Any) -> None:
        while (head := await read_request(state, reader)) is not None:
            if head.startswith(b"POST /hang "):
                await reader.read()  # until the client gives up
                state.closed += 1
                return
            await asyncio.sleep(delay)
            writer.write(OK)
            await writer.drain()

    return handle


async def test_pool_limit_caps_open_connections() -> None:
    async with (
        raw_server(_slow_unless_hang(0.05)) as server,
        pool_for(server.url, limit=3) as pool,
    ):
        seen: list[int] = []

        async def call() -> Any:
            result = await pool.post(b"/x", b"", JSON, 5.0)
            seen.append(pool.open_connections)
            return result

        results = await asyncio.gather(*(call() for _ in range(10)))
        assert results == [(200, None, b"ok")] * 10
        assert max(seen) <= 3
    assert server.max_open == 3
    assert server.connections == 3


async def test_timeout_closes_the_connection_and_frees_the_slot() -> None:
    async with raw_server(_slow_unless_hang(0)) as server, pool_for(server.url, limit=1) as pool:
        began = time.monotonic()
        with pytest.raises(TimeoutError) as info:
            await pool.post(b"/hang", b"", JSON, 0.2)
        assert 0.15 < time.monotonic() - began < 2.0
        assert_no_path(info.value)
        assert pool.open_connections == 0
        await eventually(lambda: server.closed == 1)
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
    assert server.connections == 2


async def test_waiting_for_a_slot_counts_against_the_timeout() -> None:
    async with raw_server(_slow_unless_hang(0)) as server, pool_for(server.url, limit=1) as pool:
        hung = asyncio.create_task(pool.post(b"/hang", b"", JSON, 5.0))
        await eventually(lambda: len(server.heads) == 1)
        with pytest.raises(TimeoutError):
            await pool.post(b"/x", b"", JSON, 0.1)
        assert not hung.done()
        hung.cancel()
        with pytest.raises(asyncio.CancelledError):
            await hung
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
    assert server.connections == 2


async def test_cancellation_frees_the_slot_for_waiters() -> None:
    async with raw_server(_slow_unless_hang(0)) as server, pool_for(server.url, limit=1) as pool:
        hung = asyncio.create_task(pool.post(b"/hang", b"", JSON, 30.0))
        await eventually(lambda: len(server.heads) == 1)
        waiting = asyncio.create_task(pool.post(b"/x", b"", JSON, 30.0))
        gone = asyncio.create_task(pool.post(b"/x", b"", JSON, 30.0))
        await asyncio.sleep(0.02)
        gone.cancel()  # cancelled while waiting for the slot: nothing to free, nothing leaked
        hung.cancel()
        with pytest.raises(asyncio.CancelledError):
            await hung
        assert await waiting == (200, None, b"ok")
        with pytest.raises(asyncio.CancelledError):
            await gone
        await eventually(lambda: server.closed == 1)
        assert (pool.open_connections, pool.idle_connections) == (1, 1)
    assert server.connections == 2


async def test_close_fails_calls_in_flight_and_later_calls() -> None:
    async with raw_server(_slow_unless_hang(0)) as server:
        pool = HttpPool(server.url, limit=1)
        hung = asyncio.create_task(pool.post(b"/hang", b"", JSON, 30.0))
        await eventually(lambda: len(server.heads) == 1)
        waiting = asyncio.create_task(pool.post(b"/x", b"", JSON, 30.0))
        await asyncio.sleep(0.01)
        await pool.close()
        for task in (hung, waiting):
            with pytest.raises(ConnectionError):
                await task
        with pytest.raises(ConnectionError):
            await pool.post(b"/x", b"", JSON, 1.0)
        assert pool.open_connections == 0


# --- Bad answers and errors -----------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"SMTP ready\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\nok",
    ],
    ids=["status", "not-http", "two-lengths", "bad-chunk", "unknown-encoding"],
)
async def test_malformed_answer_is_a_value_error(answer: bytes) -> None:
    async def handle(state: RawServer, reader: asyncio.StreamReader, writer: Any) -> None:
        await answering(answer if state.connections == 1 else OK)(state, reader, writer)

    async with raw_server(handle) as server, pool_for(server.url) as pool:
        with pytest.raises(HttpResponseError) as info:
            await pool.post(PATH, b"", JSON, 5.0)
        assert isinstance(info.value, ValueError)
        assert_no_path(info.value)
        assert pool.open_connections == 0
        assert await pool.post(PATH, b"", JSON, 5.0) == (200, None, b"ok")
    assert server.connections == 2


async def test_unasked_bytes_on_an_idle_connection_drop_it() -> None:
    async def handle(state: RawServer, reader: asyncio.StreamReader, writer: Any) -> None:
        while await read_request(state, reader) is not None:
            writer.write(OK + b"HTTP/1.1 200 OK\r\n")
            await writer.drain()

    async with raw_server(handle) as server, pool_for(server.url) as pool:
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
        await eventually(lambda: pool.open_connections == 0)
        assert await pool.post(b"/x", b"", JSON, 5.0) == (200, None, b"ok")
    assert server.connections == 2


async def test_declared_oversized_body_is_refused_without_reading_it() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (64 * 1024 * 1024 + 1)
    async with raw_server(answering(answer)) as server, pool_for(server.url) as pool:
        with pytest.raises(ResponseTooLarge):
            await pool.post(b"/x", b"", JSON, 5.0)
        assert pool.open_connections == 0


async def test_streamed_oversized_body_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "MAX_BODY", 1000)
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"64\r\n%s\r\n" % (b"x" * 100) * 11
        + b"0\r\n\r\n"
    )
    async with raw_server(answering(chunked)) as server, pool_for(server.url) as pool:
        with pytest.raises(ResponseTooLarge):
            await pool.post(b"/x", b"", JSON, 5.0)
        assert pool.open_connections == 0


async def test_refused_connection_is_an_os_error() -> None:
    async with raw_server(answering(OK)) as server:
        url = server.url
    async with pool_for(url) as pool:
        with pytest.raises(OSError) as info:
            await pool.post(PATH, b"", JSON, 5.0)
        assert pool.open_connections == 0
    assert_no_path(info.value)


def test_bad_base_urls_and_paths() -> None:
    for url in ("ftp://x", "http://", "http://exa mple:notaport", "http://u:p@h", "http://h?q"):
        with pytest.raises(InvalidBaseUrl) as info:
            HttpPool(url)
        assert "exa" not in str(info.value)
    assert "prefix" not in repr(HttpPool("http://h:81/prefix"))
    assert repr(HttpPool("https://h/prefix")).startswith("HttpPool('https://h'")


async def test_bad_request_path_is_refused() -> None:
    pool = HttpPool("http://127.0.0.1:9")
    for path in (b"/a b", b"/a\r\nX-Evil: 1", "/ü".encode(), "/ü", "/€"):
        with pytest.raises(InvalidRequest) as info:
            await pool.post(path, b"", JSON, 1.0)
        assert "/" not in str(info.value)
    await pool.close()


# --- TLS ------------------------------------------------------------------------------------


def _self_signed(tmp: Path) -> tuple[Path, Path, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    cert_file, key_file = tmp / "cert.pem", tmp / "key.pem"
    cert_file.write_bytes(pem)
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file, pem


async def test_https_with_a_self_signed_certificate(tmp_path: Path) -> None:
    cert_file, key_file, pem = _self_signed(tmp_path)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert_file, key_file)
    trusting = ssl.create_default_context(cadata=pem.decode())
    async with raw_server(answering(OK), ssl_context=server_ctx) as server:
        async with pool_for(server.url, ssl_context=trusting) as pool:
            for _ in range(5):
                assert await pool.post(PATH, b"{}", JSON, 5.0) == (200, None, b"ok")
        assert server.connections == 1
        # The default context does not trust the certificate: the handshake fails.
        async with pool_for(server.url) as pool:
            with pytest.raises(ssl.SSLError) as info:
                await pool.post(PATH, b"{}", JSON, 5.0)
            assert isinstance(info.value, OSError)
            assert pool.open_connections == 0
        assert_no_path(info.value)


# --- Framing as a property: any split of the bytes parses the same ----------------------------


class _Wire(asyncio.Transport):
    """A transport that keeps what is written: the parser sees exactly the segments we cut."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[bytes] = []
        self.closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.sent.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = True


def _parse_in_segments(answer: bytes, cuts: list[int]) -> tuple[Any, bool]:
    async def run() -> tuple[Any, bool]:
        pool = HttpPool("http://127.0.0.1:9")
        conn = http._Conn(pool)
        wire = _Wire()
        conn.connection_made(wire)
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(conn.request(b"POST / HTTP/1.1\r\n\r\n", loop.time() + 5))
        await asyncio.sleep(0)
        edges = [0, *sorted(set(cuts)), len(answer)]
        for start, end in itertools.pairwise(edges):
            if end > start:
                conn.data_received(answer[start:end])
        result = await task
        return result, pool.idle_connections == 1

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(run())
    finally:
        loop.close()


@settings(max_examples=examples(150), deadline=None)
@given(
    body=st.binary(max_size=300),
    sizes=st.lists(st.integers(min_value=1, max_value=40), max_size=20),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=12),
    chunked=st.booleans(),
)
def test_any_split_of_a_valid_answer_parses_to_the_same_body(
    body: bytes, sizes: list[int], cuts: list[int], chunked: bool
) -> None:
    if chunked:
        parts, rest = [], body
        for size in sizes:
            if not rest:
                break
            parts.append(rest[:size])
            rest = rest[size:]
        if rest:
            parts.append(rest)
        framed = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
        answer = b"HTTP/1.1 200 OK\r\nRetry-After: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + framed
    else:
        answer = b"HTTP/1.1 200 OK\r\nRetry-After: 5\r\nContent-Length: %d\r\n\r\n" % len(body)
        answer += body
    result, kept = _parse_in_segments(answer, [c % (len(answer) + 1) for c in cuts])
    assert result == (200, "5", body)
    assert kept
