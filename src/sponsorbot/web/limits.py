"""A cap on request bodies, before all but the webhook intake (docs/adr/0012-body-limits.md).

FastAPI reads and parses a whole body before any dependency runs, so the API's bearer check
and the panel's session check come too late to protect memory and disk. This pure ASGI
middleware refuses a body on its declared Content-Length and counts the bytes of a streamed
one, before the application reads any of it:

- 64 KiB for anyone without credentials (sign-in, setup, invitations: small forms);
- 1 MiB for the owner API with a bearer token, and for panel forms with a session cookie;
- the upload limit plus the multipart overhead on the routes that take a file, and only with
  credentials; those routes check them before they read the body.

A request over its cap is answered 413 (JSON under /api, plain text elsewhere). Proxies in
front should cap bodies too (nginx's client_max_body_size), at the upload limit plus 1 MiB.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sponsorbot.features.content.service import MAX_UPLOAD_BYTES
from sponsorbot.web.panel.web import SESSION_COOKIE
from sponsorbot.web.uploads import FORM_OVERHEAD

KIB = 1024
MIB = 1024 * KIB
ANONYMOUS_LIMIT = 64 * KIB
SIGNED_IN_LIMIT = 1 * MIB

# The routes that take a file: the owner API's content and broadcast media uploads, the
# panel's content upload and its broadcast form (which may carry the post's photo or video).
API_UPLOADS = (
    re.compile(r"^/api/v1/bots/[^/]+/contents$"),
    re.compile(r"^/api/v1/bots/[^/]+/broadcasts/media$"),
)
PANEL_UPLOADS = (
    re.compile(r"^/bots/[^/]+/content/upload$"),
    re.compile(r"^/broadcasts$"),
    re.compile(r"^/broadcasts/[^/]+/[^/]+/edit$"),
)


@dataclass(frozen=True, slots=True)
class Limits:
    """The caps; `panel_upload` is read per request (the panel's setting may change)."""

    panel_upload: Callable[[], int]
    api_upload: int = MAX_UPLOAD_BYTES
    anonymous: int = ANONYMOUS_LIMIT
    signed_in: int = SIGNED_IN_LIMIT

    def of(self, scope: Scope, headers: Headers) -> int:
        """The most bytes this request's body may hold."""
        path: str = scope.get("path", "")
        post = scope.get("method") == "POST"
        if path.startswith("/api/"):
            if not headers.get("authorization", "").lower().startswith("bearer "):
                return self.anonymous
            if post and any(p.match(path) for p in API_UPLOADS):
                return self.api_upload + FORM_OVERHEAD
            return self.signed_in
        if not _has_session(headers):
            return self.anonymous
        if post and any(p.match(path) for p in PANEL_UPLOADS):
            return self.panel_upload() + FORM_OVERHEAD
        return self.signed_in


def _has_session(headers: Headers) -> bool:
    """Whether the request carries a panel session cookie (checked for real by the route)."""
    cookies = headers.get("cookie", "")
    return any(
        part.strip().split("=", 1)[0].endswith(SESSION_COOKIE) for part in cookies.split(";")
    )


def too_large(path: str, limit: int) -> Response:
    """The 413 answer: JSON for the API, plain text for the panel."""
    message = f"the request body is larger than {limit} bytes"
    if path.startswith("/api/"):
        return JSONResponse(
            {"error": message, "code": "body_too_large", "limit": limit}, status_code=413
        )
    return PlainTextResponse(f"413: {message}\n", status_code=413)


class BodyLimit:
    """Refuse bodies over their cap before the application reads them (see the module)."""

    def __init__(self, app: ASGIApp, limits: Limits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        limit = self.limits.of(scope, headers)
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdecimal() or int(declared) > limit):
            await too_large(scope.get("path", ""), limit)(scope, receive, send)
            return
        await _Counted(self.app, scope, receive, send, limit).run()


class _Counted:
    """One request whose streamed body is counted: past the cap the application sees the
    client gone and, unless it has begun to answer, the client gets a 413 and nothing else."""

    def __init__(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send, limit: int):
        self.app, self.scope, self._receive, self._send = app, scope, receive, send
        self.limit = limit
        self.received = 0
        self.started = False  # the application began its answer
        self.cut = False  # the body went over the cap
        self.answered = False  # the 413 went out in the application's place

    async def run(self) -> None:
        await self.app(self.scope, self.receive, self.send)

    async def receive(self) -> Message:
        if self.cut:
            return {"type": "http.disconnect"}
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.limit:
                self.cut = True
                if not self.started:
                    self.answered = True
                    path = self.scope.get("path", "")
                    await too_large(path, self.limit)(self.scope, self._receive, self._send)
                return {"type": "http.disconnect"}
        return message

    async def send(self, message: Message) -> None:
        if self.answered:
            return  # the client has its 413 already
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)
