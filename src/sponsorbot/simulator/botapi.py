"""The Bot API endpoint ``/bot<token>/<method>``: envelope, latency, faults, the call log,
and the methods about the bot itself, its updates, its webhook and callback queries."""

from __future__ import annotations

import asyncio
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
from sponsorbot.simulator.state import Described, Handler, Simulator
from sponsorbot.simulator.world import Bot

SIMULATOR_KEY = web.AppKey("simulator", Simulator)


async def get_me(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getMe: the bot's User with the bot-only flags."""
    out = bot.account.json()
    out.update(
        can_join_groups=True,
        can_read_all_group_messages=False,
        supports_inline_queries=False,
        can_connect_to_business=False,
        has_main_web_app=False,
    )
    return out


def _allowed_updates(bot: Bot, p: Params) -> None:
    allowed = p.json("allowed_updates")
    if allowed is not None:
        if not isinstance(allowed, list) or not all(isinstance(k, str) for k in allowed):
            raise bad_request("can't parse allowed updates")
        bot.allowed_updates = allowed


async def get_updates(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getUpdates: confirm below ``offset``, then answer at once or wait up to ``timeout``."""
    if bot.webhook_url:
        raise webhook_conflict()
    offset = p.opt_int("offset", 0) or 0
    limit = min(100, max(1, p.opt_int("limit", 100) or 100))
    timeout = min(sim.options.poll_timeout_cap, max(0, p.opt_int("timeout", 0) or 0))
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


async def set_webhook(sim: Simulator, bot: Bot, p: Params) -> Any:
    """setWebhook: start delivering (pending updates too, unless dropped)."""
    url = p.opt_str("url", "") or ""
    if url and not url.startswith(("http://", "https://")):
        raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
    _allowed_updates(bot, p)
    max_connections = p.opt_int("max_connections", 40) or 40
    if not 1 <= max_connections <= 100:
        raise bad_request("bad webhook: max_connections must be between 1 and 100")
    if p.flag("drop_pending_updates"):
        bot.queue.clear()
    secret = p.opt_str("secret_token")
    if secret is not None and (
        len(secret) > 256 or not all(c.isalnum() or c in "_-" for c in secret)
    ):
        raise bad_request("bad webhook: secret token contains unallowed characters")
    if not url:
        return await delete_webhook(sim, bot, p)
    unchanged = (url, secret, max_connections) == (
        bot.webhook_url,
        bot.secret_token,
        bot.max_connections,
    )
    bot.webhook_url, bot.secret_token, bot.max_connections = url, secret, max_connections
    bot.last_error_date = bot.last_error_message = None
    sim.webhooks.start(bot)
    bot.queue.notify()  # ends a long poll still waiting, with 409
    return Described(True, "Webhook is already set" if unchanged else "Webhook was set")


async def delete_webhook(sim: Simulator, bot: Bot, p: Params) -> Any:
    """deleteWebhook: back to getUpdates, pending updates kept unless dropped."""
    if p.flag("drop_pending_updates"):
        bot.queue.clear()
    if not bot.webhook_url:
        return Described(True, "Webhook is already deleted")
    sim.webhooks.stop(bot)
    bot.webhook_url, bot.secret_token = "", None
    bot.last_error_date = bot.last_error_message = None
    return Described(True, "Webhook was deleted")


async def get_webhook_info(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getWebhookInfo."""
    out: dict[str, Any] = {
        "url": bot.webhook_url,
        "has_custom_certificate": False,
        "pending_update_count": len(bot.queue.pending),
    }
    if bot.webhook_url:
        out["ip_address"] = "127.0.0.1"
        if bot.last_error_date is not None:
            out["last_error_date"] = bot.last_error_date
            out["last_error_message"] = bot.last_error_message
        out["max_connections"] = bot.max_connections
        if bot.allowed_updates:
            out["allowed_updates"] = bot.allowed_updates
    return out


async def answer_callback_query(sim: Simulator, bot: Bot, p: Params) -> Any:
    """answerCallbackQuery: once per query, within the callback timeout."""
    query = bot.callbacks.pop(p.req_str("callback_query_id"), None)
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
    method = name.lower()
    delay = sim.latency.seconds()
    if delay > 0:
        await asyncio.sleep(delay)
    bot = sim.world.bots_by_token.get(request.match_info["token"])
    bot_id = bot.id if bot is not None else None
    chat_id: Any = None
    try:
        if bot is None:
            raise unauthorized()
        handler = METHODS.get(method)
        if handler is None:
            raise method_not_found()
        params = await read_params(request)
        chat_id = params.data.get("chat_id")
        if isinstance(chat_id, str) and chat_id.lstrip("-").isdigit():
            chat_id = int(chat_id)  # forms send text; the log keeps ids comparable
        verdict = sim.faults.decide(method)
        if verdict is not None:
            if verdict.kind == "429":
                raise too_many_requests(int(verdict.seconds))
            if verdict.kind == "timeout":
                await asyncio.sleep(verdict.seconds)
            raise ApiError(verdict.status, STATUS_TEXT.get(verdict.status, "Server Error"))
        result = await handler(sim, bot, params)
    except ApiError as error:
        sim.calls.append(sim.world.clock(), name, bot_id, chat_id, False, error.error_code, None)
        return _error_response(error)
    envelope: dict[str, Any] = {"ok": True}
    if isinstance(result, Described):
        envelope["result"] = result.result
        envelope["description"] = result.description
    else:
        envelope["result"] = result
    message_id = result.get("message_id") if isinstance(result, dict) else None
    sim.calls.append(sim.world.clock(), name, bot_id, chat_id, True, None, message_id)
    return web.Response(body=orjson.dumps(envelope), content_type="application/json")
