"""Webhook delivery as Telegram does it.

One chat's updates go one after another; different chats go in parallel, up to the bot's
``max_connections``. A failed delivery (non-2xx or no answer) is retried with growing delay
and shows up in getWebhookInfo's ``last_error_date``/``last_error_message``. A bot may answer
a delivery with a method call (JSON, form or multipart, with a ``method`` field): it is handed
to ``on_answer`` to be run on its own, as the server hands it to the bot's client as a new
query (the chat's next update does not wait for it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import orjson

from sponsorbot.simulator.errors import ApiError
from sponsorbot.simulator.params import Params, Upload, json_params, urlencoded_params
from sponsorbot.simulator.updates import Update
from sponsorbot.simulator.world import Bot

AnswerHook = Callable[[Bot, Params], Awaitable[None]]

_MAX_BACKOFF = 60.0
log = logging.getLogger(__name__)


class Webhooks:
    """Delivery tasks of every bot that has a webhook."""

    def __init__(self, retry_base: float, timeout: float) -> None:
        self.retry_base = retry_base
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None
        self._runners: dict[int, asyncio.Task[None]] = {}
        self._answers: set[asyncio.Task[None]] = set()
        # Runs a method a bot put in its answer to a delivery (the server sets it).
        self.on_answer: AnswerHook | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                connector=aiohttp.TCPConnector(limit=0),
            )
        return self._session

    def start(self, bot: Bot, url: str) -> None:
        """Deliver this bot's updates to ``url`` (its webhook URL as parse_url normalises it;
        again, if it changed)."""
        self.stop(bot)
        self._runners[bot.id] = asyncio.create_task(self._run(bot, url))

    def stop(self, bot: Bot) -> None:
        """Stop delivering; undelivered updates stay in the queue for the next consumer."""
        runner = self._runners.pop(bot.id, None)
        if runner is not None:
            runner.cancel()

    async def stop_all(self) -> None:
        """Stop every delivery task, and the methods of answers still running, and wait."""
        runners = [*self._runners.values(), *self._answers]
        self._runners.clear()
        self._answers.clear()
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
                error, answer = await self._post(url, body, headers)
                if error is None:
                    bot.queue.remove(update.update_id)
                    if answer is not None:
                        task = asyncio.create_task(self._run_answer(bot, answer))
                        self._answers.add(task)
                        task.add_done_callback(self._answers.discard)
                    break
                bot.last_error_date = int(time.time())
                bot.last_error_message = error
                await asyncio.sleep(min(_MAX_BACKOFF, self.retry_base * 2**attempt))
                attempt += 1
        finally:
            # Free the chat before waking the runner, so the chat's next update goes out.
            in_flight.pop(update.chat_key, None)
            bot.queue.notify()

    async def _run_answer(self, bot: Bot, answer: Params) -> None:
        """Hand the method in an answer to ``on_answer``; whatever goes wrong there is logged
        and goes no further (the update was delivered: it must not come again)."""
        if self.on_answer is None:
            return
        try:
            await self.on_answer(bot, answer)
        except Exception:
            log.exception("bot %s: running the method in a webhook answer failed", bot.id)

    async def _post(
        self, url: str, body: bytes, headers: dict[str, str]
    ) -> tuple[str | None, Params | None]:
        """POST one update: (None, the method call the bot answered with, if any) on success,
        else (the error as getWebhookInfo words it, None)."""
        try:
            async with self._client().post(url, data=body, headers=headers) as response:
                if 200 <= response.status < 300:
                    return None, await _answer(response)
                await response.read()
                return f"Wrong response from the webhook: {response.status} {response.reason}", None
        except TimeoutError:
            return "Connection timed out", None
        except aiohttp.ClientConnectorError:
            return "Connection refused", None
        except aiohttp.ClientError as exc:
            return f"Connection error: {exc.__class__.__name__}", None


async def _answer(response: aiohttp.ClientResponse) -> Params | None:
    """The parameters of the answer to a delivery when they name a ``method``, else None.
    An answer that cannot be read (a multipart body without a boundary, an unknown charset,
    text that is not UTF-8) names no method: the delivery succeeded all the same."""
    try:
        return await _read_answer(response)
    except (ApiError, ValueError, LookupError):  # UnicodeDecodeError is a ValueError
        return None


async def _read_answer(response: aiohttp.ClientResponse) -> Params | None:
    data: dict[str, Any] = {}
    uploads: dict[str, Upload] = {}
    ctype = response.content_type
    if ctype == "multipart/form-data":
        reader = aiohttp.MultipartReader.from_response(response)
        while (part := await reader.next()) is not None:
            if not isinstance(part, aiohttp.BodyPartReader) or not part.name:
                continue
            content = bytes(await part.read())
            if part.filename:
                kind = part.headers.get("Content-Type")
                uploads[part.name] = Upload(part.filename, len(content), content, kind)
            else:
                data[part.name] = content.decode()  # UTF-8, whatever the part's charset
    else:
        raw = await response.read()
        if ctype == "application/json":
            data = json_params(raw)
        elif ctype == "application/x-www-form-urlencoded":
            data = urlencoded_params(raw)
    answer = Params(data, uploads)
    return answer if answer.opt_str("method") else None
