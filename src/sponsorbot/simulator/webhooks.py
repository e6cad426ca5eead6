"""Webhook delivery as Telegram does it.

One chat's updates go one after another; different chats go in parallel, up to the bot's
``max_connections``. A failed delivery (non-2xx or no answer) is retried with growing delay
and shows up in getWebhookInfo's ``last_error_date``/``last_error_message``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import aiohttp
import orjson

from sponsorbot.simulator.updates import Update
from sponsorbot.simulator.world import Bot

_MAX_BACKOFF = 60.0


class Webhooks:
    """Delivery tasks of every bot that has a webhook."""

    def __init__(self, retry_base: float, timeout: float) -> None:
        self.retry_base = retry_base
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None
        self._runners: dict[int, asyncio.Task[None]] = {}

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                connector=aiohttp.TCPConnector(limit=0),
            )
        return self._session

    def start(self, bot: Bot) -> None:
        """Deliver this bot's updates to its webhook URL (again, if it changed)."""
        self.stop(bot)
        self._runners[bot.id] = asyncio.create_task(self._run(bot, bot.webhook_url))

    def stop(self, bot: Bot) -> None:
        """Stop delivering; undelivered updates stay in the queue for the next consumer."""
        runner = self._runners.pop(bot.id, None)
        if runner is not None:
            runner.cancel()

    async def stop_all(self) -> None:
        """Stop every delivery task and wait for them."""
        runners = list(self._runners.values())
        self._runners.clear()
        for runner in runners:
            runner.cancel()
        for runner in runners:
            with contextlib.suppress(asyncio.CancelledError):
                await runner

    async def close(self) -> None:
        """Stop everything and close the HTTP session."""
        await self.stop_all()
        if self._session is not None:
            await self._session.close()

    async def _run(self, bot: Bot, url: str) -> None:
        in_flight: dict[int, asyncio.Task[None]] = {}
        try:
            while True:
                changed = bot.queue.changed()
                self._schedule(bot, url, in_flight)
                await changed.wait()
        finally:
            for task in in_flight.values():
                task.cancel()

    def _schedule(self, bot: Bot, url: str, in_flight: dict[int, asyncio.Task[None]]) -> None:
        seen: set[int] = set()
        for update in list(bot.queue.pending.values()):
            if len(in_flight) >= bot.max_connections:
                return
            if update.chat_key in seen:
                continue  # an earlier update of this chat goes first
            seen.add(update.chat_key)
            if update.chat_key not in in_flight:
                task = asyncio.create_task(self._deliver(bot, url, update, in_flight))
                in_flight[update.chat_key] = task

    async def _deliver(
        self, bot: Bot, url: str, update: Update, in_flight: dict[int, asyncio.Task[None]]
    ) -> None:
        body = orjson.dumps(update.body)
        headers = {"Content-Type": "application/json"}
        if bot.secret_token:
            headers["X-Telegram-Bot-Api-Secret-Token"] = bot.secret_token
        attempt = 0
        try:
            while True:
                error = await self._post(url, body, headers)
                if error is None:
                    bot.queue.remove(update.update_id)
                    break
                bot.last_error_date = int(time.time())
                bot.last_error_message = error
                await asyncio.sleep(min(_MAX_BACKOFF, self.retry_base * 2**attempt))
                attempt += 1
        finally:
            # Free the chat before waking the runner, so the chat's next update goes out.
            in_flight.pop(update.chat_key, None)
            bot.queue.notify()

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> str | None:
        """POST one update; None on success, else the error as getWebhookInfo words it."""
        try:
            async with self._client().post(url, data=body, headers=headers) as response:
                await response.read()
                if 200 <= response.status < 300:
                    return None
                return f"Wrong response from the webhook: {response.status} {response.reason}"
        except TimeoutError:
            return "Connection timed out"
        except aiohttp.ClientConnectorError:
            return "Connection refused"
        except aiohttp.ClientError as exc:
            return f"Connection error: {exc.__class__.__name__}"
