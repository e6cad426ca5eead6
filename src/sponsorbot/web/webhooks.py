"""Webhook intake: store the update, answer 200 only after the insert committed."""

from __future__ import annotations

import hmac
import time

import asyncpg
import orjson
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from sponsorbot.engine.bots import WEBHOOK_TARGET, secret_hash
from sponsorbot.engine.inbox import store_update
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.updates import MalformedUpdate

CACHE_S = 5.0
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
_OK = Response(b'{"ok":true}', media_type="application/json")


class _Targets:
    """Webhook path → (bot id, secret hash), cached for a few seconds."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._cache: dict[str, tuple[float, int, bytes] | tuple[float, None, None]] = {}

    async def get(self, path: str, fresh: bool = False) -> tuple[int, bytes] | None:
        hit = self._cache.get(path)
        if hit is not None and not fresh and hit[0] > time.monotonic():
            return (hit[1], hit[2]) if hit[1] is not None and hit[2] is not None else None
        row = await self.pool.fetchrow(WEBHOOK_TARGET, path)
        if len(self._cache) > 10_000:
            self._cache.clear()
        if row is None:
            self._cache[path] = (time.monotonic() + CACHE_S, None, None)
            return None
        found = (row["id"], bytes(row["webhook_secret_hash"]))
        self._cache[path] = (time.monotonic() + CACHE_S, *found)
        return found


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"ok": False, "error": message}, status_code=status)


def webhook_router(pool: asyncpg.Pool, notifier: Notifier) -> APIRouter:
    """The `/tg/{path}` endpoint Telegram posts updates to."""
    router = APIRouter()
    targets = _Targets(pool)

    @router.post("/tg/{path}", include_in_schema=False)
    async def receive(path: str, request: Request) -> Response:
        given = secret_hash(request.headers.get(SECRET_HEADER, ""))
        target = await targets.get(path)
        if target is not None and not hmac.compare_digest(given, target[1]):
            # The secret may have just been rotated (resume, mode change): look once more.
            target = await targets.get(path, fresh=True)
        if target is None:
            return _error(404, "no bot has this webhook address")
        bot_id, expected = target
        if not hmac.compare_digest(given, expected):
            return _error(401, "wrong or missing secret token")
        try:
            update = orjson.loads(await request.body())
            await store_update(pool, bot_id, update)
        except orjson.JSONDecodeError:
            return _error(400, "the body is not JSON")
        except MalformedUpdate as exc:
            return _error(400, str(exc))
        except asyncpg.DataError:
            return _error(400, "the update holds text PostgreSQL cannot store")
        notifier.wake("inbox")
        return _OK

    return router
