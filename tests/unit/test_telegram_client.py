"""Bot API client tests over real HTTP against a small local stand-in for Telegram."""

from __future__ import annotations

import asyncio
import logging
import pickle
import socket
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from sponsorbot.telegram import (
    BadRequest,
    Bot,
    BotApi,
    Conflict,
    Forbidden,
    NetworkError,
    NotFound,
    RetryAfter,
    ServerError,
    TelegramError,
    Unauthorized,
    is_blocked,
    is_not_modified,
    scrub,
)
from sponsorbot.telegram.errors import error_from_answer
from tests.loopback import served

SECRET = "AAHfakeSecretForTests_0123456789-xy"
TOKEN = f"1234567890:{SECRET}"
assert len(SECRET) == 35  # the shape real tokens have, so the pattern scrubber applies too


def _fail(status: int, description: str, **extra: Any) -> web.Response:
    body = {"ok": False, "error_code": status, "description": description, **extra}
    return web.json_response(body, status=status)


@dataclass
class FakeTelegram:
    base_url: str = ""
    peers: set[tuple[str, int]] = field(default_factory=set)
    requests: int = 0


async def _echo(request: web.Request) -> web.Response:
    """Answer with what arrived: JSON params, or multipart fields and files."""
    if request.content_type == "multipart/form-data":
        form = await request.post()
        fields: dict[str, Any] = {}
        files: dict[str, Any] = {}
        for name, value in form.items():
            if isinstance(value, web.FileField):
                files[name] = {
                    "filename": value.filename,
                    "content_type": value.content_type,
                    "hex": value.file.read().hex(),
                }
            else:
                fields[name] = value
        result: dict[str, Any] = {"fields": fields, "files": files}
    else:
        result = {"json": await request.json(), "content_type": request.content_type}
    result["method"] = request.match_info["method"]
    return web.json_response({"ok": True, "result": result})


def _handlers() -> dict[str, Callable[[web.Request], Awaitable[web.Response]]]:
    async def get_me(request: web.Request) -> web.Response:
        return web.json_response({"ok": True, "result": {"id": 1234567890, "is_bot": True}})

    async def not_modified(request: web.Request) -> web.Response:
        return _fail(400, "Bad Request: message is not modified: specified new message content")

    async def migrated(request: web.Request) -> web.Response:
        return _fail(
            400,
            "Bad Request: group chat was upgraded to a supergroup chat",
            parameters={"migrate_to_chat_id": -1001234567890},
        )

    async def unauthorized(request: web.Request) -> web.Response:
        return _fail(401, "Unauthorized")

    async def blocked(request: web.Request) -> web.Response:
        return _fail(403, "Forbidden: bot was blocked by the user")

    async def not_found(request: web.Request) -> web.Response:
        return _fail(404, "Not Found")

    async def conflict(request: web.Request) -> web.Response:
        return _fail(409, "Conflict: terminated by other getUpdates request")

    async def flood(request: web.Request) -> web.Response:
        response = _fail(429, "Too Many Requests: retry after 7", parameters={"retry_after": 7})
        response.headers["Retry-After"] = "9"
        return response

    async def flood_header(request: web.Request) -> web.Response:
        response = _fail(429, "Too Many Requests")
        response.headers["Retry-After"] = "11"
        return response

    async def flood_text(request: web.Request) -> web.Response:
        return _fail(429, "Too Many Requests: retry after 13")

    async def internal(request: web.Request) -> web.Response:
        return _fail(500, "Internal Server Error")

    async def bad_gateway(request: web.Request) -> web.Response:
        return web.Response(
            status=502, text="<html>502 Bad Gateway</html>", content_type="text/html"
        )

    async def leaky(request: web.Request) -> web.Response:
        # A misbehaving server (or proxy) quoting the request path back in the description.
        return _fail(400, f"Bad Request: no such path {request.path}")

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(0.4)
        return web.json_response({"ok": True, "result": []})

    async def drop(request: web.Request) -> web.Response:
        assert request.transport is not None
        request.transport.abort()
        raise asyncio.CancelledError  # nothing more to send; the client sees the reset

    return {
        "getMe": get_me,
        "notModified": not_modified,
        "migrated": migrated,
        "unauthorized": unauthorized,
        "blocked": blocked,
        "notFound": not_found,
        "conflict": conflict,
        "flood": flood,
        "floodHeader": flood_header,
        "floodText": flood_text,
        "internal": internal,
        "badGateway": bad_gateway,
        "leaky": leaky,
        "slow": slow,
        "getUpdates": slow,
        "drop": drop,
    }


@pytest.fixture
async def server() -> AsyncIterator[FakeTelegram]:
    state = FakeTelegram()
    handlers = _handlers()

    async def dispatch(request: web.Request) -> web.Response:
        assert request.transport is not None
        state.peers.add(request.transport.get_extra_info("peername"))
        state.requests += 1
        if request.match_info["token"] != TOKEN:
            return _fail(401, "Unauthorized")
        handler = handlers.get(request.match_info["method"], _echo)
        return await handler(request)

    app = web.Application()
    app.router.add_post("/bot{token}/{method}", dispatch)
    async with served(app) as state.base_url:
        yield state


@pytest.fixture
async def api(server: FakeTelegram) -> AsyncIterator[BotApi]:
    client = BotApi(server.base_url + "/", timeout_s=5.0)
    yield client
    await client.close()


@pytest.fixture
def bot(api: BotApi) -> Bot:
    return api.bot(TOKEN)


def _assert_no_token(exc: BaseException) -> None:
    texts = [
        str(exc),
        repr(exc),
        repr(exc.args),
        "".join(traceback.format_exception(exc)),
        repr(vars(exc)),
    ]
    for text in texts:
        assert TOKEN not in text
        assert SECRET not in text
        assert TOKEN.replace(":", "%3A") not in text
    # Nothing from the HTTP layer hangs off the error either.
    assert exc.__cause__ is None
    assert exc.__context__ is None


async def _error(call: Awaitable[Any]) -> TelegramError:
    with pytest.raises(TelegramError) as info:
        await call
    _assert_no_token(info.value)
    return info.value


# --- Results --------------------------------------------------------------------------------


async def test_ok_result_is_returned(bot: Bot) -> None:
    assert await bot.get_me() == {"id": 1234567890, "is_bot": True}


async def test_json_body_drops_none_and_keeps_nested_values(bot: Bot) -> None:
    markup = {"inline_keyboard": [[{"text": "Join ✓", "url": "https://t.me/x"}]]}
    params = {
        "chat_id": -100123,
        "text": "<b>hi</b>",
        "parse_mode": "HTML",
        "reply_markup": markup,
        "protect_content": None,
        "link_preview_options": {"is_disabled": True},
    }
    result = await bot.call("sendMessage", params)
    assert result["method"] == "sendMessage"
    assert result["content_type"] == "application/json"
    assert result["json"] == {
        "chat_id": -100123,
        "text": "<b>hi</b>",
        "parse_mode": "HTML",
        "reply_markup": markup,
        "link_preview_options": {"is_disabled": True},
    }


async def test_convenience_methods_send_bot_api_names_and_params(bot: Bot) -> None:
    async def sent(call: Awaitable[Any]) -> tuple[str, dict[str, Any]]:
        result = await call
        return result["method"], result["json"]

    assert await sent(bot.create_chat_invite_link(-1001, name="n", creates_join_request=True)) == (
        "createChatInviteLink",
        {"chat_id": -1001, "name": "n", "creates_join_request": True},
    )
    assert await sent(bot.get_chat_member(-1001, 42)) == (
        "getChatMember",
        {"chat_id": -1001, "user_id": 42},
    )
    assert await sent(bot.get_chat("@chan")) == ("getChat", {"chat_id": "@chan"})
    assert await sent(bot.get_webhook_info()) == ("getWebhookInfo", {})
    # Methods answering True in the real API: the echo dict is truthy.
    assert await bot.delete_webhook() is True
    assert await bot.set_webhook("https://example.org/hook", secret_token="s") is True
    assert await bot.approve_chat_join_request(-1001, 42) is True
    assert await bot.decline_chat_join_request(-1001, 42) is True


async def test_get_updates_allows_for_the_long_poll(server: FakeTelegram) -> None:
    # The client's default timeout is shorter than the server's answer; a poll adds headroom.
    api = BotApi(server.base_url, timeout_s=0.2)
    try:
        assert await api.bot(TOKEN).get_updates(offset=5, timeout=0) == []
    finally:
        await api.close()


async def test_multipart_upload_sends_bytes_and_fields(bot: Bot) -> None:
    content = bytes(range(256)) * 4
    result = await bot.call(
        "sendDocument",
        {
            "chat_id": 42,
            "caption": "ünïcode",
            "reply_markup": {"inline_keyboard": []},
            "protect_content": True,
            "skipped": None,
        },
        files={"document": ("report.bin", content, "application/octet-stream")},
    )
    assert result["fields"] == {
        "chat_id": "42",
        "caption": "ünïcode",
        "reply_markup": '{"inline_keyboard":[]}',
        "protect_content": "true",
    }
    assert result["files"] == {
        "document": {
            "filename": "report.bin",
            "content_type": "application/octet-stream",
            "hex": content.hex(),
        }
    }


async def test_one_connection_is_reused_for_sequential_calls(
    server: FakeTelegram, bot: Bot
) -> None:
    for _ in range(25):
        await bot.get_me()
    await bot.call("anything", {"x": 1})
    assert server.requests == 26
    assert len(server.peers) == 1


async def test_bots_share_the_session(server: FakeTelegram, api: BotApi) -> None:
    other = api.bot("999999:other")
    await api.bot(TOKEN).get_me()
    with pytest.raises(Unauthorized):
        await other.get_me()
    assert len(server.peers) == 1


# --- Errors ---------------------------------------------------------------------------------


async def test_bad_request_not_modified(bot: Bot) -> None:
    e = await _error(bot.call("notModified"))
    assert type(e) is BadRequest
    assert (e.method, e.error_code) == ("notModified", 400)
    assert e.description.startswith("Bad Request: message is not modified")
    assert is_not_modified(e) and not is_blocked(e) and not e.is_transient
    assert str(e) == f"notModified: 400 {e.description}"


async def test_migrate_to_chat_id(bot: Bot) -> None:
    e = await _error(bot.call("migrated"))
    assert type(e) is BadRequest
    assert e.migrate_to_chat_id == -1001234567890
    assert not is_not_modified(e)


@pytest.mark.parametrize(
    ("method", "cls", "code"),
    [
        ("unauthorized", Unauthorized, 401),
        ("notFound", NotFound, 404),
        ("conflict", Conflict, 409),
        ("internal", ServerError, 500),
    ],
)
async def test_error_classes(bot: Bot, method: str, cls: type[TelegramError], code: int) -> None:
    e = await _error(bot.call(method))
    assert type(e) is cls
    assert e.error_code == code
    assert e.is_transient == (code >= 500)
    assert e.retry_after is None


async def test_blocked_user(bot: Bot) -> None:
    e = await _error(bot.call("blocked"))
    assert type(e) is Forbidden
    assert is_blocked(e) and not e.is_transient


@pytest.mark.parametrize(
    ("method", "retry_after"), [("flood", 7.0), ("floodHeader", 11.0), ("floodText", 13.0)]
)
async def test_retry_after_sources(bot: Bot, method: str, retry_after: float) -> None:
    e = await _error(bot.call(method))
    assert type(e) is RetryAfter
    assert e.error_code == 429
    assert e.retry_after == retry_after
    assert e.is_transient


async def test_non_json_answer_is_server_error(bot: Bot) -> None:
    e = await _error(bot.call("badGateway"))
    assert type(e) is ServerError
    assert e.error_code == 502
    assert e.is_transient
    assert "<html>" not in str(e)


async def test_description_quoting_the_token_is_scrubbed(bot: Bot) -> None:
    e = await _error(bot.call("leaky"))
    assert type(e) is BadRequest
    assert "<token>" in e.description


async def test_unusual_token_shape_is_scrubbed_too(server: FakeTelegram) -> None:
    api = BotApi(server.base_url)
    try:
        with pytest.raises(BadRequest) as info:
            await api.call(TOKEN, "leaky")
        with pytest.raises(Unauthorized):
            await api.call("short:tok3n-value", "leaky")
    finally:
        await api.close()
    assert "<token>" in str(info.value)


async def test_timeout_is_a_network_error(server: FakeTelegram, bot: Bot) -> None:
    e = await _error(bot.call("slow", timeout_s=0.1))
    assert type(e) is NetworkError
    assert (e.method, e.error_code) == ("slow", 0)
    assert e.is_transient
    assert "Timeout" in str(e) or "timed out" in str(e)


async def test_connection_drop_is_a_network_error(bot: Bot) -> None:
    e = await _error(bot.call("drop"))
    assert type(e) is NetworkError
    assert e.error_code == 0 and e.is_transient


async def test_after_a_drop_the_client_recovers(bot: Bot) -> None:
    await _error(bot.call("drop"))
    assert (await bot.get_me())["is_bot"] is True


async def test_connection_refused_is_a_network_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    api = BotApi(f"http://127.0.0.1:{port}")
    try:
        e = await _error(api.call(TOKEN, "getMe"))
    finally:
        await api.close()
    assert type(e) is NetworkError and e.is_transient


async def test_invalid_url_error_does_not_leak_the_token() -> None:
    # aiohttp's InvalidURL message is the whole URL, token included.
    api = BotApi("http://exa mple:notaport")
    try:
        e = await _error(api.call(TOKEN, "getMe"))
    finally:
        await api.close()
    assert type(e) is NetworkError


async def test_nothing_logged_contains_the_token(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        await bot.get_me()
        for method in ("unauthorized", "flood", "badGateway", "drop", "leaky"):
            with pytest.raises(TelegramError):
                await bot.call(method)
        with pytest.raises(NetworkError):
            await bot.call("slow", timeout_s=0.05)
    assert "getMe" in caplog.text
    assert TOKEN not in caplog.text and SECRET not in caplog.text


async def test_closed_client_refuses_calls(server: FakeTelegram) -> None:
    api = BotApi(server.base_url)
    await api.bot(TOKEN).get_me()
    await api.close()
    await api.close()
    with pytest.raises(RuntimeError):
        await api.call(TOKEN, "getMe")


# --- Pure helpers ---------------------------------------------------------------------------


def test_bot_repr_and_tail_hide_the_token(api: BotApi) -> None:
    b = api.bot(TOKEN)
    assert b.token_tail == TOKEN[-4:]
    assert TOKEN not in repr(b) and SECRET not in repr(b)
    assert b.token_tail in repr(b)


def test_scrub_patterns() -> None:
    text = f"GET http://x/bot{TOKEN}/getMe and bot{TOKEN.replace(':', '%3a')}/x"
    assert scrub(text) == "GET http://x/bot<token>/getMe and bot<token>/x"
    assert scrub("sim token abc:def12345 here", "abc:def12345") == "sim token <token> here"
    assert scrub("just def12345", "abc:def12345") == "just <token>"


def test_errors_scrub_whatever_they_are_given() -> None:
    e = RetryAfter(f"sendMessage {TOKEN}", 429, f"bot{TOKEN}", retry_after=3.0)
    _assert_no_token(e)


def test_errors_pickle_with_their_fields() -> None:
    e = BadRequest("m", 400, "d", migrate_to_chat_id=-100, retry_after=None)
    copy = pickle.loads(pickle.dumps(e))  # noqa: S301 (our own bytes)
    assert type(copy) is BadRequest
    assert (copy.method, copy.error_code, copy.description) == ("m", 400, "d")
    assert copy.migrate_to_chat_id == -100
    assert str(copy) == str(e)


@pytest.mark.parametrize(
    ("code", "description", "blocked"),
    [
        (403, "Forbidden: bot was blocked by the user", True),
        (403, "Forbidden: user is deactivated", True),
        (403, "Forbidden: bot can't initiate conversation with a user", True),
        (403, "Forbidden: bot is not a member of the channel chat", False),
        (400, "Bad Request: chat not found", False),
    ],
)
def test_is_blocked(code: int, description: str, blocked: bool) -> None:
    assert is_blocked(TelegramError("sendMessage", code, description)) is blocked


def test_helpers_ignore_other_exceptions() -> None:
    assert not is_blocked(ValueError("bot was blocked by the user"))
    assert not is_not_modified(ValueError("message is not modified"))


def test_unknown_codes_and_odd_answers() -> None:
    e = error_from_answer("m", 420, {"ok": False, "error_code": 420, "description": "Flood"})
    assert type(e) is TelegramError and not e.is_transient
    e = error_from_answer("m", 503, {"ok": False, "error_code": True, "parameters": [1]})
    assert type(e) is ServerError and e.error_code == 503 and e.is_transient
    e = error_from_answer("m", 429, {"ok": False}, retry_after_header="soon")
    assert type(e) is RetryAfter and e.retry_after is None
