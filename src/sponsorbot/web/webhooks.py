"""Webhook intake: store the update, answer 200 only after the insert committed.

A plain ASGI middleware in front of the application: the hottest request of the api role skips
routing, dependency solving and response classes (measured with py-spy at 150 updates a second:
that machinery was a third of the api role's busy samples).
"""

from __future__ import annotations

import hmac
import time
from typing import Any

import asyncpg
import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from sponsorbot.engine.bots import WEBHOOK_TARGET, secret_hash
from sponsorbot.engine.inbox import store_update
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.updates import MalformedUpdate

PREFIX = "/tg/"
CACHE_S = 5.0
SECRET_HEADER = b"x-telegram-bot-api-secret-token"
MAX_BODY = 1024 * 1024  # Telegram's updates are far smaller; anything bigger is not one
_JSON = [(b"content-type", b"application/json")]


class _Targets:
    """Webhook path → (bot id, secret hash), cached for a few seconds."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._cache: dict[str, tuple[float, tuple[int, bytes] | None]] = {}

    async def get(self, path: str, fresh: bool = False) -> tuple[int, bytes] | None:
        hit = self._cache.get(path)
        if hit is not None and not fresh and hit[0] > time.monotonic():
            return hit[1]
        row = await self.pool.fetchrow(WEBHOOK_TARGET, path)
        if len(self._cache) > 10_000:
            self._cache.clear()
        found = None if row is None else (int(row["id"]), bytes(row["webhook_secret_hash"]))
        self._cache[path] = (time.monotonic() + CACHE_S, found)
        return found


class WebhookIntake:
    """Handles `POST /tg/{path}`; passes every other request to the application."""

    def __init__(self, app: ASGIApp, pool: asyncpg.Pool, notifier: Notifier) -> None:
        self.app = app
        self.pool = pool
        self.notifier = notifier
        self.targets = _Targets(pool)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(PREFIX) or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        status, body = await self._receive(scope, receive, path[len(PREFIX) :])
        await send({"type": "http.response.start", "status": status, "headers": _JSON})
        await send({"type": "http.response.body", "body": body})

    async def _receive(self, scope: Scope, receive: Receive, path: str) -> tuple[int, bytes]:
        given = b""
        for name, value in scope["headers"]:
            if name == SECRET_HEADER:
                given = value
        digest = secret_hash(given.decode("latin-1"))
        target = await self.targets.get(path)
        if target is not None and not hmac.compare_digest(digest, target[1]):
            # The secret may have just been rotated (resume, mode change): look once more.
            target = await self.targets.get(path, fresh=True)
        if target is None:
            return _error(404, "no bot has this webhook address")
        bot_id, expected = target
        if not hmac.compare_digest(digest, expected):
            return _error(401, "wrong or missing secret token")
        raw = await _read_body(receive)
        if raw is None:
            return _error(413, "the body is too large for an update")
        try:
            update: Any = orjson.loads(raw)
            await store_update(self.pool, bot_id, update)
        except orjson.JSONDecodeError:
            return _error(400, "the body is not JSON")
        except MalformedUpdate as exc:
            return _error(400, str(exc))
        except asyncpg.DataError:
            return _error(400, "the update holds text PostgreSQL cannot store")
        self.notifier.wake("inbox")
        return 200, b'{"ok":true}'


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _error(status: int, message: str) -> tuple[int, bytes]:
    return status, orjson.dumps({"ok": False, "error": message})
