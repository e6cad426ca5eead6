"""The request body cap (web/limits.py), driven as a bare ASGI application."""

from __future__ import annotations

import json
from typing import Any

from starlette.datastructures import Headers
from starlette.types import Message, Receive, Scope, Send

from sponsorbot.web.limits import ANONYMOUS_LIMIT, SIGNED_IN_LIMIT, BodyLimit, Limits
from sponsorbot.web.uploads import FORM_OVERHEAD

LIMITS = Limits(panel_upload=lambda: 1000, api_upload=5000)


class Echo:
    """An application that reads the whole body and answers how much it got."""

    def __init__(self) -> None:
        self.called = False
        self.disconnected = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.called = True
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                break
            size += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(size).encode()})


def scope_of(
    path: str, headers: dict[str, str], method: str = "POST", length: int | None = None
) -> Scope:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    if length is not None:
        raw.append((b"content-length", str(length).encode()))
    return {"type": "http", "method": method, "path": path, "headers": raw}


async def call(scope: Scope, chunks: list[bytes]) -> tuple[Echo, list[Message]]:
    """Send the body in these chunks; what the application saw and what went out."""
    app = Echo()
    queue: list[Message] = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    sent: list[Message] = []

    async def receive() -> Message:
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await BodyLimit(app, LIMITS)(scope, receive, send)
    return app, sent


def status(sent: list[Message]) -> int:
    return int(next(m["status"] for m in sent if m["type"] == "http.response.start"))


def body(sent: list[Message]) -> bytes:
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


BEARER = {"Authorization": "Bearer sbt_x"}


def test_limits_depend_on_credentials_and_route() -> None:
    """M1: anonymous bodies get 64 KiB; credentials 1 MiB; the upload routes their limit."""

    def limit(path: str, headers: dict[str, str], method: str = "POST") -> int:
        scope = scope_of(path, headers, method)
        return LIMITS.of(scope, Headers(scope=scope))

    assert limit("/api/v1/bots", {}) == ANONYMOUS_LIMIT
    assert limit("/api/v1/bots", BEARER) == SIGNED_IN_LIMIT
    assert limit("/api/v1/bots/5/contents", BEARER) == 5000 + FORM_OVERHEAD
    assert limit("/api/v1/bots/5/broadcasts/media", BEARER) == 5000 + FORM_OVERHEAD
    assert limit("/api/v1/bots/5/contents", {}) == ANONYMOUS_LIMIT
    assert limit("/api/v1/bots/5/contents", BEARER, "PUT") == SIGNED_IN_LIMIT
    assert limit("/signin", {}) == ANONYMOUS_LIMIT
    session = {"Cookie": "sb_lang=en; __Host-sb_session=abc"}
    assert limit("/bots/5/content/upload", session) == 1000 + FORM_OVERHEAD
    assert limit("/broadcasts", session) == 1000 + FORM_OVERHEAD
    assert limit("/broadcasts/1/2/edit", session) == 1000 + FORM_OVERHEAD
    assert limit("/bots/5/content/upload", {"Cookie": "sb_lang=en"}) == ANONYMOUS_LIMIT
    assert limit("/settings", session) == SIGNED_IN_LIMIT


async def test_a_declared_length_over_the_cap_is_refused_unread() -> None:
    """M1: an anonymous API request declaring 2 MB gets a JSON 413; the app never runs."""
    app, sent = await call(scope_of("/api/v1/bots", {}, length=2_000_000), [b"x"])
    assert not app.called and status(sent) == 413
    answer: dict[str, Any] = json.loads(body(sent))
    assert answer["code"] == "body_too_large" and answer["limit"] == ANONYMOUS_LIMIT
    app, sent = await call(scope_of("/signin", {}, length=ANONYMOUS_LIMIT + 1), [b"x"])
    assert not app.called and status(sent) == 413 and body(sent).startswith(b"413")
    app, sent = await call(scope_of("/signin", {}), [b"x"])
    assert app.called and status(sent) == 200
    bogus = scope_of("/api/v1/bots", {"Content-Length": "１２"})
    app, sent = await call(bogus, [b"x"])
    assert not app.called and status(sent) == 413


async def test_a_streamed_body_is_counted_and_cut_at_the_cap() -> None:
    """M1: without Content-Length (chunked), the bytes are counted: the app sees the client
    gone, the client gets a 413 and nothing the app answers after that."""
    chunks = [b"x" * 30_000] * 4  # 120 000 bytes, over 64 KiB
    app, sent = await call(scope_of("/api/v1/bots", {}), chunks)
    assert app.called and app.disconnected
    assert status(sent) == 413
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    app, sent = await call(scope_of("/api/v1/bots", BEARER), chunks)
    assert status(sent) == 200 and body(sent) == b"120000"


async def test_other_scopes_pass_untouched() -> None:
    """Lifespan and websocket scopes are not HTTP requests: the cap does not apply."""
    seen: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope["type"])

    async def receive() -> Message:
        return {"type": "lifespan.startup"}

    async def send(message: Message) -> None:
        return None

    await BodyLimit(app, LIMITS)({"type": "lifespan"}, receive, send)
    assert seen == ["lifespan"]
