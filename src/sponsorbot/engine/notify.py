"""Wake-ups: new inbox and outbox rows wake whoever waits for them.

Waiters in this process are woken at once. Other processes hear a `pg_notify`, gathered over a
few milliseconds and sent in one statement outside the hot transactions (a NOTIFY inside them
would serialise their commits). Everyone also polls every 1-2 s, so a lost notification costs
only latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
from collections.abc import Callable

import asyncpg

from sponsorbot.db.errors import DB_ERRORS

log = logging.getLogger(__name__)

CHANNEL = "sponsorbot"
GATHER_S = 0.005
LISTEN_BACKOFF_S = 1.0
MAX_LISTEN_BACKOFF_S = 30.0
# Each payload is "<sender>/<key>": a process hears its own notifications too, and skips them
# (its own waiters were woken directly; a second wake-up is a wasted outbox read or claim).
NOTIFY_MANY = "SELECT pg_notify($1, $2 || '/' || k) FROM unnest($3::text[]) k"


async def wait_at_most(event: asyncio.Event, seconds: float) -> bool:
    """Wait until `event` is set, `seconds` at most: whether it was (the loops' pause that a
    stop or a wake-up cuts short)."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True


class Notifier:
    """Keyed wake-up events for this process, and gathered notifications for the others."""

    def __init__(self, pool: asyncpg.Pool | None = None, dsn: str | None = None) -> None:
        self._pool = pool
        self._dsn = dsn
        self._events: dict[str, asyncio.Event] = {}
        self._me = secrets.token_hex(6)
        self._outgoing: set[str] = set()
        self._flush_task: asyncio.Task[None] | None = None
        self._listen_conn: asyncpg.Connection | None = None
        self._subscribers: list[tuple[str, Callable[[str], None]]] = []

    def _event(self, key: str) -> asyncio.Event:
        event = self._events.get(key)
        if event is None:
            event = self._events[key] = asyncio.Event()
        return event

    def wake(self, key: str, *, local_only: bool = False) -> None:
        """Wake waiters on `key` here and, soon, in every other process."""
        self._wake_local(key)
        if local_only or self._pool is None:
            return
        self._outgoing.add(key)
        if self._flush_task is None or self._flush_task.done():
            self._flush_task = asyncio.create_task(self._flush())

    def payload(self, key: str) -> str:
        """The notification payload that wakes `key` in the other processes (for a statement
        that sends it itself, `pg_notify(CHANNEL, payload)`)."""
        return f"{self._me}/{key}"

    def subscribe(self, prefix: str, fn: Callable[[str], None]) -> None:
        """Call `fn(rest)` when another process wakes a key `prefix + rest` (a cache to drop)."""
        self._subscribers.append((prefix, fn))

    def _wake_local(self, key: str) -> None:
        event = self._events.get(key)
        if event is not None:
            event.set()

    async def wait(self, key: str, seconds: float) -> bool:
        """Wait for a wake-up on `key` (True) or the timeout (False); clears the event."""
        event = self._event(key)
        try:
            return await wait_at_most(event, seconds)
        finally:
            event.clear()

    @staticmethod
    def poll_interval() -> float:
        """1-2 s, jittered so processes do not poll in step."""
        return 1.0 + random.random()

    async def _flush(self) -> None:
        await asyncio.sleep(GATHER_S)
        keys = sorted(self._outgoing)
        self._outgoing.clear()
        if not keys or self._pool is None:
            return
        try:
            await self._pool.execute(NOTIFY_MANY, CHANNEL, self._me, keys)
        except DB_ERRORS as exc:
            log.debug("notify failed (polling covers it): %s", exc)

    async def listen(self) -> None:
        """Hear other processes' notifications (until closed).

        Supervised: any error (connecting, add_listener, the connection dropping) is logged
        and the listener starts again after a growing pause, so wake-ups never end silently.
        """
        if self._dsn is None:
            return
        backoff = LISTEN_BACKOFF_S
        while True:
            try:
                heard = await self._listen_once()
            except asyncio.CancelledError:
                raise
            except DB_ERRORS as exc:
                log.warning("cannot listen for wake-ups (polling only): %s", exc)
                heard = False
            except Exception:
                log.exception("listening for wake-ups failed (polling only)")
                heard = False
            # A connection that worked for a while starts the pauses small again.
            backoff = LISTEN_BACKOFF_S if heard else min(MAX_LISTEN_BACKOFF_S, backoff * 2)
            await asyncio.sleep(random.uniform(backoff / 2, backoff))

    async def _listen_once(self) -> bool:
        """One LISTEN connection, until it closes; True when it got as far as listening."""
        assert self._dsn is not None
        conn = await asyncpg.connect(
            self._dsn, server_settings={"application_name": "sponsorbot-listen"}
        )
        try:
            closed = asyncio.Event()
            conn.add_termination_listener(lambda _c, ev=closed: ev.set())
            await conn.add_listener(CHANNEL, self._on_notify)
            self._listen_conn = conn
            await closed.wait()
            return True
        finally:
            self._listen_conn = None
            with contextlib.suppress(Exception):
                await conn.close()

    def _on_notify(self, _conn: object, _pid: int, _channel: str, payload: object) -> None:
        sender, _, key = str(payload).partition("/")
        if sender == self._me:
            return
        self._wake_local(key)
        for prefix, fn in self._subscribers:
            if key.startswith(prefix):
                try:
                    fn(key[len(prefix) :])
                except Exception:
                    log.exception("wake-up subscriber for %s failed", prefix)

    async def close(self) -> None:
        """Send what is gathered and stop listening."""
        if self._flush_task is not None:
            with contextlib.suppress(Exception):
                await self._flush_task
        if self._listen_conn is not None:
            with contextlib.suppress(Exception):
                await self._listen_conn.close()
