"""Webhook intake's HTTP framing: `POST /tg/{path}` goes to the intake, nothing else does.

Answered before the application sees the request (web/app.py's `App`): the hottest request of
the api role skips routing, dependency solving and response classes (measured with py-spy at
150 updates a second: that machinery was a third of the api role's busy samples), and FastAPI's
own outer middleware (error pages, telemetry, body limit) too, which an ASGI middleware added
to the application still passed through: 7% of the api role's samples at 200 a second. What
the request means is the intake's business (`engine/intake.py`, reached through the bots feature).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from starlette.types import Receive, Scope, Send

PREFIX = "/tg/"
SECRET_HEADER = b"x-telegram-bot-api-secret-token"
_JSON = [(b"content-type", b"application/json")]


class Accepts(Protocol):
    """What stores a webhook update (engine.intake.Intake)."""

    async def accept(
        self, path: str, secret: bytes, read_body: Callable[[int], Awaitable[bytes | None]]
    ) -> tuple[int, bytes]: ...


class WebhookIntake:
    """Answers `POST /tg/{path}`; the application calls it before anything of its own."""

    def __init__(self, intake: Accepts) -> None:
        self.intake = intake

    @staticmethod
    def takes(scope: Scope) -> bool:
        """Whether this request is a webhook's."""
        path: str = scope.get("path", "")
        return scope["type"] == "http" and scope["method"] == "POST" and path.startswith(PREFIX)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        secret = b""
        for name, value in scope["headers"]:
            if name == SECRET_HEADER:
                secret = value

        async def read_body(limit: int) -> bytes | None:
            return await _read_body(receive, limit)

        status, body = await self.intake.accept(path[len(PREFIX) :], secret, read_body)
        await send({"type": "http.response.start", "status": status, "headers": _JSON})
        await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)
