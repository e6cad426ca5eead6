"""Webhook intake: find the bot by its webhook path, check the secret, store the update.

The web layer only frames HTTP (web/webhooks.py); what an incoming update means is decided
here, beside the inbox it goes into. The 200 is given only after the insert committed.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import orjson

from sponsorbot.engine.bots import WEBHOOK_TARGET, secret_hash
from sponsorbot.engine.inbox import store_update
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.updates import MalformedUpdate

CACHE_S = 5.0
MAX_BODY = 1024 * 1024  # Telegram's updates are far smaller; anything bigger is not one
OK = 200, b'{"ok":true}'


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


class Intake:
    """Stores webhook updates; answers (HTTP status, JSON body)."""

    def __init__(self, pool: asyncpg.Pool, notifier: Notifier) -> None:
        self.pool = pool
        self.notifier = notifier
        self.targets = _Targets(pool)

    async def accept(
        self, path: str, secret: bytes, read_body: Callable[[int], Awaitable[bytes | None]]
    ) -> tuple[int, bytes]:
        """One webhook request: `read_body(limit)` gives the body, None when over `limit`.

        The body is read only once the path and the secret are right.
        """
        digest = secret_hash(secret.decode("latin-1"))
        target = await self.targets.get(path)
        if target is not None and not hmac.compare_digest(digest, target[1]):
            # The secret may have just been rotated (resume, mode change): look once more.
            target = await self.targets.get(path, fresh=True)
        if target is None:
            return _error(404, "no bot has this webhook address")
        bot_id, expected = target
        if not hmac.compare_digest(digest, expected):
            return _error(401, "wrong or missing secret token")
        raw = await read_body(MAX_BODY)
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
        return OK


def _error(status: int, message: str) -> tuple[int, bytes]:
    return status, orjson.dumps({"ok": False, "error": message})
