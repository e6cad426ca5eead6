"""Webhook intake: find the bot by its webhook path, check the secret, store the update.

The web layer only frames HTTP (web/webhooks.py); what an incoming update means is decided
here, beside the inbox it goes into. The 200 is given only after the insert committed.
"""

from __future__ import annotations

import hmac
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
import orjson

from sponsorbot.db.pool import on_citus
from sponsorbot.engine.bots import WEBHOOK_TARGET, secret_hash
from sponsorbot.engine.gathered import GATHER_S, GatheredInserts
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.updates import MalformedUpdate, classify
from sponsorbot.engine.worker import INBOX

CACHE_S = 5.0
# A wrong secret on a known path looks the path up again at most this often (a secret rotated
# by resume or a mode change is seen within it; a stranger guessing costs no more).
REFRESH_EVERY_S = 1.0
MAX_CACHED = 10_000
MAX_BODY = 1024 * 1024  # Telegram's updates are far smaller; anything bigger is not one
OK = 200, b'{"ok":true}'
# What BotService.add makes: secrets.token_urlsafe(24). Anything else is no bot's path.
PATH_SHAPE = re.compile(r"[A-Za-z0-9_-]{32}")


@dataclass(frozen=True, slots=True)
class Target:
    """The bot a webhook path belongs to."""

    bot_id: int
    active: bool
    secret_hash: bytes


class _Targets:
    """Webhook path → Target, or None for no bot (the negative cache), for a few seconds.

    Bounded: the oldest entry goes when full, so paths a stranger makes up cannot push out
    the real ones all at once.
    """

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._cache: OrderedDict[str, tuple[float, Target | None]] = OrderedDict()
        self._refreshed: dict[str, float] = {}

    async def get(self, path: str, fresh: bool = False) -> Target | None:
        """The path's target; `fresh` looks again unless that was done a moment ago."""
        now = time.monotonic()
        hit = self._cache.get(path)
        if fresh:
            if now - self._refreshed.get(path, -REFRESH_EVERY_S) < REFRESH_EVERY_S:
                return None if hit is None else hit[1]
            if len(self._refreshed) >= MAX_CACHED:
                self._refreshed.clear()
            self._refreshed[path] = now
        elif hit is not None and hit[0] > now:
            return hit[1]
        row = await self.pool.fetchrow(WEBHOOK_TARGET, path)
        found = (
            None
            if row is None
            else Target(
                int(row["id"]), row["status"] == "active", bytes(row["webhook_secret_hash"])
            )
        )
        self._cache.pop(path, None)
        if len(self._cache) >= MAX_CACHED:
            self._cache.popitem(last=False)
        self._cache[path] = (now + CACHE_S, found)
        return found


class Intake:
    """Stores webhook updates; answers (HTTP status, JSON body)."""

    def __init__(self, pool: asyncpg.Pool, notifier: Notifier, gather_s: float = GATHER_S) -> None:
        self.pool = pool
        self.notifier = notifier
        self.targets = _Targets(pool)
        self.gathered = GatheredInserts(pool, notifier.payload(INBOX), gather_s=gather_s)
        # Whether the database is a Citus coordinator: asked once, before the first store.
        self._asked = False

    async def accept(
        self, path: str, secret: bytes, read_body: Callable[[int], Awaitable[bytes | None]]
    ) -> tuple[int, bytes]:
        """One webhook request: `read_body(limit)` gives the body, None when over `limit`.

        The body is read only once the path and the secret are right.
        """
        if PATH_SHAPE.fullmatch(path) is None:
            return NO_BOT
        digest = secret_hash(secret.decode("latin-1"))
        target = await self.targets.get(path)
        if target is not None and not hmac.compare_digest(digest, target.secret_hash):
            # The secret may have just been rotated (resume, mode change): look once more.
            target = await self.targets.get(path, fresh=True)
        if target is None:
            return NO_BOT
        if not hmac.compare_digest(digest, target.secret_hash):
            return _error(401, "wrong or missing secret token")
        bot_id = target.bot_id
        if not target.active:
            # Paused or refused: Telegram is told it arrived (or it would retry for a day), and
            # nothing is stored for a bot that is not served.
            return OK
        raw = await read_body(MAX_BODY)
        if raw is None:
            return _error(413, "the body is too large for an update")
        try:
            update: Any = orjson.loads(raw)
            if not self._asked:
                self.gathered.citus = await on_citus(self.pool)
                self._asked = True
            # orjson read it, so it is UTF-8: the text goes to PostgreSQL as it came.
            await self.gathered.store(bot_id, classify(update), raw.decode())
        except orjson.JSONDecodeError:
            return _error(400, "the body is not JSON")
        except MalformedUpdate as exc:
            return _error(400, str(exc))
        except asyncpg.DataError:
            return _error(400, "the update holds text PostgreSQL cannot store")
        # Other processes were woken by the batch's own statement; this one's waiters now.
        self.notifier.wake(INBOX, local_only=True)
        return OK

    async def close(self) -> None:
        """Store the updates gathered so far."""
        await self.gathered.close()


def _error(status: int, message: str) -> tuple[int, bytes]:
    return status, orjson.dumps({"ok": False, "error": message})


NO_BOT = _error(404, "no bot has this webhook address")
