"""Whatever a client sends, the simulator answers as the Bot API does, and never with a 500.

Hostile values go into every integer and chat parameter of a few methods, as JSON and as a
form; bodies that cannot be read at all get the 400 tdlib's HttpReader gives. Values that are
not strings are the JSON text the client wrote (HttpReader::parse_json_parameters). And each
check the real server makes comes in its order: a text too long for a chat that does not
exist is ``chat not found``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import orjson
import pytest

from tests.simulator.conftest import Scene, Sim

HUGE = "1" * 5000  # past Python's int() limit of 4300 digits
# Values no parameter should turn into a 500: text no integer reader may choke on (digits
# that are not ASCII, thousands of digits, two minus signs) and JSON of every type.
HOSTILE: list[Any] = [
    "²",
    "٣",
    "--5",
    "-",
    " 5",
    "1e5",
    HUGE,
    "-" + HUGE,
    "@",
    "@" + "a" * 300,
    "\u202e",
    "",
    True,
    None,
    [],
    {},
    1.5,
    1 << 64,
    -(1 << 70),
]
# For each method, the parameters that take an integer or a chat, and what else it needs.
CALLS: list[tuple[str, list[str], dict[str, Any]]] = [
    ("sendMessage", ["chat_id", "reply_to_message_id", "message_thread_id"], {"text": "x"}),
    ("getChatMember", ["chat_id", "user_id"], {}),
    ("getUpdates", ["offset", "limit"], {"timeout": 0}),  # a timeout would be a long poll
    ("copyMessage", ["chat_id", "from_chat_id", "message_id"], {}),
    ("editMessageText", ["chat_id", "message_id"], {"text": "x"}),
    ("deleteMessage", ["chat_id", "message_id"], {}),
    ("createChatInviteLink", ["chat_id", "expire_date", "member_limit"], {}),
    ("answerCallbackQuery", ["callback_query_id", "cache_time"], {}),
    ("setWebhook", ["max_connections"], {"url": ""}),
]
# Numbers inside the JSON objects a parameter carries, and inside formatted text.
NESTED: list[dict[str, Any]] = [
    {"reply_parameters": {"message_id": HUGE}},
    {"reply_parameters": {"message_id": 1, "chat_id": "²"}},
    {"reply_parameters": {"message_id": 1, "chat_id": "--5"}},
    {"reply_parameters": {"message_id": 1, "chat_id": HUGE}},
    {"entities": [{"type": "bold", "offset": HUGE, "length": 1}]},
    {"entities": [{"type": "bold", "offset": 0, "length": "²"}]},
    {"entities": [{"type": "text_mention", "offset": 0, "length": 1, "user": {"id": HUGE}}]},
    {"entities": [{"type": "custom_emoji", "offset": 0, "length": 1, "custom_emoji_id": HUGE}]},
    {"entities": [{"type": "text_link", "offset": 0, "length": 1, "url": "tg://user?id=" + HUGE}]},
    {"entities": [{"type": "text_link", "offset": 0, "length": 1, "url": "http://a.b:" + HUGE}]},
    {"text": f'<a href="tg://user?id={HUGE}">x</a>', "parse_mode": "HTML"},
    {"text": f'<tg-emoji emoji-id="{HUGE}">x</tg-emoji>', "parse_mode": "HTML"},
    {"text": f'<tg-time unix="{HUGE}">x</tg-time>', "parse_mode": "HTML"},
    {"text": f"&#{HUGE};", "parse_mode": "HTML"},
    {"text": f"[x](tg://emoji?id={HUGE})", "parse_mode": "MarkdownV2"},
    {"text": f"![x](tg://time?unix={HUGE})", "parse_mode": "MarkdownV2"},
    {"reply_markup": {"inline_keyboard": [[{"text": "a", "url": "tg://user?id=" + HUGE}]]}},
    {"reply_markup": {"inline_keyboard": [[{"text": "a", "url": "http://a.b:" + HUGE}]]}},
    {
        "reply_markup": {
            "inline_keyboard": [[{"text": "a", "pay": True, "icon_custom_emoji_id": HUGE}]]
        }
    },
    {"reply_markup": {"keyboard": [[{"text": "a", "icon_custom_emoji_id": "²"}]]}},
]


def _form(params: dict[str, Any]) -> dict[str, str]:
    """Parameters as a form sends them: strings as they are, anything else as JSON."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}


async def _post(sim: Sim, token: str, method: str, params: dict[str, Any], form: bool) -> int:
    """The status of one call, made sure to be a Bot API answer."""
    url = f"{sim.url}/bot{token}/{method}"
    if form:
        request = sim.http.post(url, data=_form(params))
    else:
        # The standard library writes numbers past 64 bits, which orjson will not.
        body = json.dumps(params).encode()
        request = sim.http.post(url, data=body, headers={"Content-Type": "application/json"})
    async with request as response:
        body = orjson.loads(await response.read())
    assert body["ok"] is (response.status == 200), body
    return response.status


@pytest.mark.parametrize(("method", "names", "base"), CALLS, ids=[c[0] for c in CALLS])
async def test_no_integer_or_chat_value_makes_a_server_error(
    sim: Sim,
    scene: Scene,
    caplog: pytest.LogCaptureFixture,
    method: str,
    names: list[str],
    base: dict[str, Any],
) -> None:
    caplog.set_level(logging.ERROR)
    failures = []
    for name in names:
        for value in HOSTILE:
            params = {"chat_id": scene.user["id"], **base, name: value}
            for form in (False, True):
                status = await _post(sim, scene.token, method, params, form)
                if status >= 500:
                    failures.append((name, str(value)[:20], form, status))
    assert failures == []
    assert not caplog.records, [r.getMessage() for r in caplog.records]


async def test_no_number_inside_an_object_or_a_text_makes_a_server_error(
    sim: Sim, scene: Scene, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    failures = []
    for extra in NESTED:
        params = {"chat_id": scene.user["id"], "text": "x", **extra}
        for form in (False, True):
            status = await _post(sim, scene.token, "sendMessage", params, form)
            if status >= 500:
                failures.append((str(extra)[:60], form, status))
    assert failures == []
    assert not caplog.records, [r.getMessage() for r in caplog.records]


BODIES = [
    (
        "HttpReader: multipart without a boundary",
        "multipart/form-data",
        b'--x\r\nContent-Disposition: form-data; name="text"\r\n\r\nhi\r\n--x--\r\n',
        "boundary not found",
    ),
    (
        "HttpReader: multipart cut short",
        "multipart/form-data; boundary=x",
        b'--x\r\nContent-Disposition: form-data; name="text"\r\n\r\nhi',
        "unexpected end of request content",
    ),
    (
        "HttpReader: a part without a name",
        "multipart/form-data; boundary=x",
        b"--x\r\n\r\nhi\r\n--x--\r\n",
        "can't parse form data headers",
    ),
    (
        "tdlib: a part that is not UTF-8",
        "multipart/form-data; boundary=x",
        b'--x\r\nContent-Disposition: form-data; name="text"\r\n\r\n\xff\r\n--x--\r\n',
        "Strings must be encoded in UTF-8",
    ),
    (
        "tdlib: a form that is not UTF-8",
        "application/x-www-form-urlencoded",
        b"text=\xff",
        "Strings must be encoded in UTF-8",
    ),
    ("HttpReader: a JSON array", "application/json", b"[1]", "JSON object expected"),
    ("HttpReader: not JSON", "application/json", b"{chat_id", "can't parse JSON body"),
    ("HttpReader: NaN is not JSON", "application/json", b'{"text": NaN}', "can't parse JSON body"),
]


@pytest.mark.parametrize(
    ("case", "ctype", "body", "description"), BODIES, ids=[b[0] for b in BODIES]
)
async def test_a_body_that_cannot_be_read_is_a_400(
    sim: Sim, scene: Scene, case: str, ctype: str, body: bytes, description: str
) -> None:
    url = f"{sim.url}/bot{scene.token}/sendMessage"
    async with sim.http.post(url, data=body, headers={"Content-Type": ctype}) as response:
        answer = orjson.loads(await response.read())
    assert (response.status, answer["description"]) == (400, f"Bad Request: {description}")


async def test_a_form_is_read_as_utf8_whatever_its_charset(sim: Sim, scene: Scene) -> None:
    # tdlib reads every body as bytes: a charset it does not know changes nothing.
    url = f"{sim.url}/bot{scene.token}/sendMessage"
    body = f"chat_id={scene.user['id']}&text=caf%C3%A9".encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded; charset=nope"}
    async with sim.http.post(url, data=body, headers=headers) as response:
        answer = orjson.loads(await response.read())
    assert answer["result"]["text"] == "café"


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"true", "true"),
        (b"false", "false"),
        (b"null", "null"),
        (b"1.50", "1.50"),
        (b"1e400", "1e400"),
        (b"123456789012345678901234567890", "123456789012345678901234567890"),
        (b"-0.0", "-0.0"),
    ],
)
async def test_json_values_that_are_not_strings_are_their_json_text(
    sim: Sim, scene: Scene, raw: bytes, text: str
) -> None:
    # HttpReader::parse_json_parameters keeps a value that is not a string as its JSON text.
    url = f"{sim.url}/bot{scene.token}/sendMessage"
    body = b'{"chat_id": %d, "text": %s}' % (scene.user["id"], raw)
    async with sim.http.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
        answer = orjson.loads(await r.read())
    assert answer["result"]["text"] == text


async def test_numbers_in_json_are_read_from_their_text(sim: Sim, scene: Scene) -> None:
    # chat_id 1e400 is "1e400": to_integer reads 1, a chat nobody has.
    url = f"{sim.url}/bot{scene.token}/sendMessage"
    body = b'{"chat_id": 1e400, "text": "x"}'
    async with sim.http.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
        answer = orjson.loads(await r.read())
    assert answer["description"] == "Bad Request: chat not found"
    # A flag given as JSON true is the text "true".
    sent = await sim.ok(
        scene.token, "sendMessage", chat_id=scene.user["id"], text="x", protect_content=True
    )
    assert sent["has_protected_content"] is True


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("sendMessage", {}, "text"),
        ("sendMessage", {"parse_mode": "HTML"}, "text"),
        ("sendDocument", {"document": "https://example.com/a.pdf"}, "caption"),
    ],
)
async def test_the_chat_is_checked_before_the_length(
    sim: Sim, scene: Scene, method: str, params: dict[str, Any], field: str
) -> None:
    # tdlib checks the length once the chat is known (MessageContent.cpp).
    long = "x" * (5000 if field == "text" else 1100)
    for chat_id, description in [
        (12345, "chat not found"),
        ("@nowhere", "chat not found"),
        (
            scene.user["id"],
            "message caption is too long" if field == "caption" else "message is too long",
        ),
    ]:
        got = await sim.error(scene.token, method, chat_id=chat_id, **params, **{field: long})
        assert got == (400, f"Bad Request: {description}")


async def test_an_edit_too_long_is_refused_once_the_message_is_found(
    sim: Sim, scene: Scene
) -> None:
    uid = scene.user["id"]
    sent = await sim.ok(scene.token, "sendMessage", chat_id=uid, text="short")
    long = "x" * 4097
    assert await sim.error(
        scene.token, "editMessageText", chat_id=uid, message_id=999, text=long
    ) == (
        400,
        "Bad Request: message to edit not found",
    )
    assert await sim.error(
        scene.token, "editMessageText", chat_id=uid, message_id=sent["message_id"], text=long
    ) == (400, "Bad Request: message is too long")


async def test_a_copy_with_a_caption_too_long_is_refused_after_the_chat(
    sim: Sim, scene: Scene
) -> None:
    uid = scene.user["id"]
    sent = await sim.ok(
        scene.token, "sendDocument", chat_id=uid, document="https://example.com/a.pdf"
    )
    params = {"from_chat_id": uid, "message_id": sent["message_id"], "caption": "x" * 1025}
    assert await sim.error(scene.token, "copyMessage", chat_id="@nowhere", **params) == (
        400,
        "Bad Request: chat not found",
    )
    assert await sim.error(scene.token, "copyMessage", chat_id=uid, **params) == (
        400,
        "Bad Request: message caption is too long",
    )
