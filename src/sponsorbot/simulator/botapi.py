"""The Bot API endpoint ``/bot<token>/<method>``: envelope, latency, faults, the call log,
and the methods about the bot itself, its updates, its webhook and callback queries."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import orjson
from aiohttp import web

from sponsorbot.simulator import chats, sending
from sponsorbot.simulator.errors import (
    QUERY_TOO_OLD,
    ApiError,
    bad_request,
    method_not_found,
    polling_conflict,
    too_many_requests,
    unauthorized,
    webhook_conflict,
)
from sponsorbot.simulator.limits import STATUS_TEXT
from sponsorbot.simulator.params import Params, read_params
from sponsorbot.simulator.readers import to_integer_safe, wrap
from sponsorbot.simulator.state import Described, Handler, Simulator
from sponsorbot.simulator.textlinks import LinkError, parse_url
from sponsorbot.simulator.types import shape
from sponsorbot.simulator.updates import read_allowed_updates
from sponsorbot.simulator.world import Bot

SIMULATOR_KEY = web.AppKey("simulator", Simulator)


async def get_me(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getMe: the bot's User with every bot-only flag."""
    return shape(
        "User",
        **bot.account.json(),
        can_join_groups=True,
        can_read_all_group_messages=False,
        supports_inline_queries=False,
        supports_guest_queries=False,
        can_connect_to_business=False,
        has_main_web_app=False,
        has_topics_enabled=False,
        allows_users_to_create_topics=False,
        can_manage_bots=False,
    )


def _allowed_updates(bot: Bot, p: Params) -> None:
    """Take ``allowed_updates`` if given; the server ignores one it cannot read."""
    allowed = read_allowed_updates(p.data.get("allowed_updates"))
    if allowed is not None:
        bot.allowed_updates = allowed


async def get_updates(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getUpdates: confirm below ``offset``, then answer at once or wait up to ``timeout``."""
    if bot.webhook_url:
        raise webhook_conflict()
    # The server clamps these and refuses none of them.
    offset = p.integer("offset")
    limit = min(100, max(1, p.integer("limit", 100)))
    timeout = min(sim.options.poll_timeout_cap, max(0, p.integer("timeout")))
    _allowed_updates(bot, p)
    queue = bot.queue
    # A newer poll ends the older one with 409, as Telegram does.
    bot.poll_generation += 1
    generation = bot.poll_generation
    queue.notify()
    queue.drop_expired(sim.world.clock())
    updates = queue.take(offset, limit)
    if not updates and timeout > 0:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not updates:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            changed = queue.changed()
            try:
                async with asyncio.timeout(remaining):
                    await changed.wait()
            except TimeoutError:
                break
            if bot.poll_generation != generation:
                raise polling_conflict()
            if bot.webhook_url:
                raise webhook_conflict()
            updates = queue.take(0, limit)
    return [u.body for u in updates]


def _webhook_target(url: str) -> str:
    """Where updates go: the URL as tdlib's parse_url normalises it, HTTPS unless another
    protocol is written (the simulator also delivers over plain HTTP)."""
    try:
        return parse_url(url, default_https=True).get_url()
    except LinkError:
        raise bad_request("invalid webhook URL specified") from None


async def set_webhook(sim: Simulator, bot: Bot, p: Params, url: str | None = None) -> Any:
    """setWebhook (and deleteWebhook, with no URL): start delivering, pending updates too
    unless dropped. The server clamps max_connections to 1..100 rather than refuse it."""
    url = p.opt_str("url", "") if url is None else url
    max_connections = min(100, max(1, p.integer("max_connections", 40))) if url else 0
    secret = (p.opt_str("secret_token") or "") if url else ""
    drop = p.flag("drop_pending_updates")
    current = (bot.webhook_url, bot.max_connections, bot.secret_token or "")
    if (url, max_connections, secret) == current and not drop:
        _allowed_updates(bot, p)
        return Described(True, "Webhook is already set" if url else "Webhook is already deleted")
    if drop:
        bot.queue.clear()
    if not url:
        had_webhook = bool(bot.webhook_url)
        sim.webhooks.stop(bot)
        bot.webhook_url, bot.secret_token, bot.max_connections = "", None, 0
        bot.last_error_date = bot.last_error_message = None
        return Described(
            True, "Webhook was deleted" if had_webhook else "Webhook is already deleted"
        )
    target = _webhook_target(url)
    if len(secret) > 256:
        raise bad_request("secret token is too long")
    if not all(c.isascii() and (c.isalnum() or c in "_-") for c in secret):
        raise bad_request("secret token contains unallowed characters")
    bot.webhook_url, bot.secret_token, bot.max_connections = url, secret or None, max_connections
    bot.last_error_date = bot.last_error_message = None
    _allowed_updates(bot, p)
    sim.webhooks.start(bot, target)
    bot.queue.notify()  # ends a long poll still waiting, with 409
    return Described(True, "Webhook was set")


async def delete_webhook(sim: Simulator, bot: Bot, p: Params) -> Any:
    """deleteWebhook: back to getUpdates, pending updates kept unless dropped."""
    return await set_webhook(sim, bot, p, url="")


async def get_webhook_info(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getWebhookInfo: the fields the server fills, when it fills them."""
    return shape(
        "WebhookInfo",
        url=bot.webhook_url,
        has_custom_certificate=False,
        pending_update_count=len(bot.queue.pending),
        last_error_date=bot.last_error_date,
        last_error_message=bot.last_error_message if bot.last_error_date else None,
        max_connections=bot.max_connections or None,
        ip_address="127.0.0.1" if bot.webhook_url else None,
        allowed_updates=bot.allowed_updates,
    )


async def answer_callback_query(sim: Simulator, bot: Bot, p: Params) -> Any:
    """answerCallbackQuery: once per query, within the callback timeout."""
    query = bot.callbacks.pop(str(p.integer("callback_query_id", bits=64)), None)
    if query is None or sim.world.clock() - query.created > sim.options.callback_timeout:
        raise bad_request(QUERY_TOO_OLD)
    answer: dict[str, Any] = {"callback_query_id": query.id, "user_id": query.account_id}
    for key in ("text", "url"):
        if p.has(key):
            answer[key] = p.opt_str(key)
    answer["show_alert"] = p.flag("show_alert")
    bot.answers.append(answer)
    return True


METHODS: dict[str, Handler] = {
    "getme": get_me,
    "getupdates": get_updates,
    "setwebhook": set_webhook,
    "deletewebhook": delete_webhook,
    "getwebhookinfo": get_webhook_info,
    "answercallbackquery": answer_callback_query,
    **sending.METHODS,
    **chats.METHODS,
}


# Methods the server will not run from an answer to a webhook delivery (nor any "get...").
_NOT_IN_ANSWERS = frozenset({"setwebhook", "deletewebhook", "close", "logout"})


def _logged_chat(params: Params) -> Any:
    """The chat a call names, as the call log keeps it: a number when it is one (forms send
    text; the log keeps ids comparable), else what was sent."""
    chat_id = params.data.get("chat_id")
    if type(chat_id) is int:
        return wrap(chat_id)
    if isinstance(chat_id, str):
        number = to_integer_safe(chat_id)
        return chat_id if number is None else number
    return chat_id


async def _latency(sim: Simulator) -> None:
    delay = sim.latency.seconds()
    if delay > 0:
        await asyncio.sleep(delay)


async def _perform(sim: Simulator, bot: Bot, name: str, handler: Handler, params: Params) -> Any:
    """Run a method as the server runs it, whether a bot called it or answered a webhook
    delivery with it: injected faults first, then the method; either way into the call log.
    Raises the call's :class:`ApiError`."""
    chat_id = _logged_chat(params)
    try:
        verdict = sim.faults.decide(name.lower())
        if verdict is not None:
            if verdict.kind == "429":
                raise too_many_requests(int(verdict.seconds))
            if verdict.kind == "timeout":
                await asyncio.sleep(verdict.seconds)
            raise ApiError(verdict.status, STATUS_TEXT.get(verdict.status, "Server Error"))
        result = await handler(sim, bot, params)
    except ApiError as error:
        sim.calls.append(sim.world.clock(), name, bot.id, chat_id, False, error.error_code, None)
        raise
    message_id = result.get("message_id") if isinstance(result, dict) else None
    sim.calls.append(sim.world.clock(), name, bot.id, chat_id, True, None, message_id)
    return result


async def run_answer(sim: Simulator, bot: Bot, params: Params) -> None:
    """Run the method a bot answered a webhook delivery with (WebhookActor hands a 2xx answer
    naming a ``method`` to the client as a new query): the endpoint's latency, faults and
    call log apply; the result, or the error, goes nowhere but the call log."""
    name = params.opt_str("method") or ""
    method = name.lower()
    handler = METHODS.get(method)
    if handler is None or method in _NOT_IN_ANSWERS or method.startswith("get"):
        return
    await _latency(sim)
    with contextlib.suppress(ApiError):
        await _perform(sim, bot, name, handler, params)


def _error_response(error: ApiError) -> web.Response:
    body: dict[str, Any] = {
        "ok": False,
        "error_code": error.error_code,
        "description": error.description,
    }
    headers = None
    if error.parameters:
        body["parameters"] = error.parameters
        if "retry_after" in error.parameters:
            headers = {"Retry-After": str(error.parameters["retry_after"])}
    return web.Response(
        body=orjson.dumps(body),
        status=error.error_code,
        content_type="application/json",
        headers=headers,
    )


async def handle(request: web.Request) -> web.Response:
    """Answer one Bot API call."""
    sim = request.app[SIMULATOR_KEY]
    name = request.match_info["method"]
    await _latency(sim)
    bot = sim.world.bots_by_token.get(request.match_info["token"])
    try:
        if bot is None:
            raise unauthorized()
        handler = METHODS.get(name.lower())
        if handler is None:
            raise method_not_found()
        params = await read_params(request)
    except ApiError as error:
        bot_id = bot.id if bot is not None else None
        sim.calls.append(sim.world.clock(), name, bot_id, None, False, error.error_code, None)
        return _error_response(error)
    try:
        result = await _perform(sim, bot, name, handler, params)
    except ApiError as error:
        return _error_response(error)
    envelope: dict[str, Any] = {"ok": True}
    if isinstance(result, Described):
        envelope["result"] = result.result
        envelope["description"] = result.description
    else:
        envelope["result"] = result
    return web.Response(body=orjson.dumps(envelope), content_type="application/json")
