"""reply_markup as the Bot API server reads it and as tdlib and Telegram check it against the
chat (pure logic: each case names the real behaviour, read in telegram-bot-api's Client.cpp
``get_reply_markup`` / ``get_inline_keyboard_button`` and tdlib's ReplyMarkup.cpp)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from sponsorbot.simulator.errors import ApiError
from sponsorbot.simulator.markup import markup_for, parse_reply_markup
from sponsorbot.simulator.params import Params

CANT_PARSE = "Bad Request: can't parse inline keyboard button: "


def parse(markup: Any, as_text: bool = True) -> Any:
    raw = markup if isinstance(markup, str) or not as_text else orjson.dumps(markup).decode()
    return parse_reply_markup(Params({"reply_markup": raw}, {}))


def inline(*rows: list[Any]) -> dict[str, Any]:
    return {"inline_keyboard": list(rows)}


def fails(call: Any) -> str:
    with pytest.raises(ApiError) as caught:
        call()
    assert caught.value.error_code == 400
    return caught.value.description


@pytest.mark.parametrize(
    ("markup", "description"),
    [
        # json_decode fails: the server's own words for reply_markup.
        ("{not json", "Bad Request: can't parse reply keyboard markup JSON object"),
        ("5", "Bad Request: object expected as reply markup"),
        ("[]", "Bad Request: object expected as reply markup"),
        ({"inline_keyboard": 5}, 'Bad Request: field "inline_keyboard" must be of type Array'),
        (
            {"inline_keyboard": [5]},
            'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup must be an '
            "Array of Arrays",
        ),
        (inline([5]), CANT_PARSE + "InlineKeyboardButton must be an Object"),
        (inline([{"callback_data": "x"}]), CANT_PARSE + 'Can\'t find field "text"'),
        (
            inline([{"text": True, "url": "a.b"}]),
            CANT_PARSE + 'Field "text" must be of type String',
        ),
        # A button with a text and nothing else is a reply-keyboard button.
        (inline([{"text": "t"}]), CANT_PARSE + "Text buttons are unallowed in the inline keyboard"),
        (
            inline([{"text": "t", "url": ""}]),
            CANT_PARSE + "Text buttons are unallowed in the inline keyboard",
        ),
        (inline([{"text": "t", "url": None}]), CANT_PARSE + 'Field "url" must be of type String'),
        (
            inline([{"text": "t", "callback_data": "x", "style": "loud"}]),
            CANT_PARSE + "invalid button style specified",
        ),
        (
            inline([{"text": "t", "callback_data": "x", "icon_custom_emoji_id": "x1"}]),
            CANT_PARSE + 'Field "icon_custom_emoji_id" must be a valid Number',
        ),
        (
            inline([{"text": "t", "web_app": "x"}]),
            CANT_PARSE + 'Field "web_app" must be of type Object',
        ),
        (inline([{"text": "t", "web_app": {}}]), CANT_PARSE + 'Can\'t find field "url"'),
        (inline([{"text": "t", "copy_text": {}}]), CANT_PARSE + 'Can\'t find field "text"'),
        (
            inline([{"text": "t", "login_url": {"url": "https://a.b", "bot_username": "@"}}]),
            CANT_PARSE + "LoginUrl bot username is invalid",
        ),
        (
            inline([{"text": "t", "switch_inline_query_chosen_chat": []}]),
            CANT_PARSE + 'Field "switch_inline_query_chosen_chat" must be of type Object',
        ),
        ({"keyboard": "x"}, 'Bad Request: field "keyboard" must be of type Array'),
        (
            {"keyboard": [["a", 5]]},
            "Bad Request: can't parse keyboard button: "
            "KeyboardButton must be a String or an Object",
        ),
        (
            {"remove_keyboard": "yes"},
            'Bad Request: field "remove_keyboard" must be of type Boolean',
        ),
    ],
)
def test_the_server_refuses_unreadable_markup(markup: Any, description: str) -> None:
    assert fails(lambda: parse(markup)) == description


def test_markup_inline_in_a_json_body_reads_the_same() -> None:
    markup = inline([{"text": "t"}])
    assert fails(lambda: parse(markup, as_text=False)) == fails(lambda: parse(markup))


@pytest.mark.parametrize(
    ("button", "shown"),
    [
        # tdlib keeps URLs normalised: a scheme, a lower-case host, a path.
        ({"url": "Example.COM"}, {"url": "http://example.com/"}),
        ({"url": "tg://resolve?domain=x"}, {"url": "tg://resolve?domain=x"}),
        # A link to a user becomes a user button, shown as its tg:// link.
        ({"url": "tg://user?id=42"}, {"url": "tg://user?id=42"}),
        ({"url": "", "callback_data": "x"}, {"callback_data": "x"}),
        ({"callback_data": 12}, {"callback_data": "12"}),
        ({"copy_text": {"text": "code"}}, {"copy_text": {"text": "code"}}),
        ({"web_app": {"url": "https://a.io/app"}}, {"web_app": {"url": "https://a.io/app"}}),
        # A login button shows on the message as a plain URL button.
        ({"login_url": {"url": "https://a.io/login"}}, {"url": "https://a.io/login"}),
        ({"switch_inline_query": "q"}, {"switch_inline_query": "q"}),
        ({"switch_inline_query_current_chat": ""}, {"switch_inline_query_current_chat": ""}),
        (
            {"switch_inline_query_chosen_chat": {"query": "q", "allow_bot_chats": True}},
            {
                "switch_inline_query_chosen_chat": {
                    "query": "q",
                    "allow_user_chats": False,
                    "allow_bot_chats": True,
                    "allow_group_chats": False,
                    "allow_channel_chats": False,
                }
            },
        ),
        # Every kind of chat allowed is an ordinary switch_inline_query button.
        (
            {
                "switch_inline_query_chosen_chat": dict.fromkeys(
                    [
                        "allow_user_chats",
                        "allow_bot_chats",
                        "allow_group_chats",
                        "allow_channel_chats",
                    ],
                    True,
                )
            },
            {"switch_inline_query": ""},
        ),
        ({"pay": False}, {"pay": True}),
        ({"callback_game": None}, {"callback_game": {}}),
        ({"callback_data": "x", "style": "Primary"}, {"callback_data": "x", "style": "primary"}),
        (
            {"callback_data": "x", "icon_custom_emoji_id": 5},
            {"callback_data": "x", "icon_custom_emoji_id": "5"},
        ),
    ],
)
def test_buttons_are_accepted_and_shown_as_telegram_stores_them(
    button: dict[str, Any], shown: dict[str, Any]
) -> None:
    markup = markup_for(parse(inline([{"text": "t", **button}])), "private", channel_post=False)
    assert markup == inline([{"text": "t", **shown}])


@pytest.mark.parametrize(
    ("button", "chat", "description"),
    [
        (
            {"url": "not a url"},
            "private",
            "Bad Request: inline keyboard button URL 'not a url' is invalid: "
            "Disallowed character in URL host",
        ),
        (
            {"url": "http://localhost/x"},
            "private",
            "Bad Request: inline keyboard button URL 'http://localhost/x' is invalid: "
            "Wrong HTTP URL",
        ),
        (
            {"url": "ftp://a.b"},
            "private",
            "Bad Request: inline keyboard button URL 'ftp://a.b' is invalid: "
            "Unsupported URL protocol",
        ),
        # Web App and login URLs must be HTTPS.
        (
            {"web_app": {"url": "http://a.io"}},
            "private",
            "Bad Request: inline keyboard button Web App URL 'http://a.io' is invalid: "
            "Only HTTPS links are allowed",
        ),
        (
            {"login_url": {"url": "http://a.io"}},
            "private",
            "Bad Request: inline keyboard button login URL 'http://a.io' is invalid: "
            "Only HTTPS links are allowed",
        ),
        (
            {"web_app": {"url": "tg://user?id=1"}},
            "private",
            "Bad Request: link to a user can't be used in Web App URL buttons",
        ),
        # Telegram's own refusals, after tdlib's checks.
        ({"callback_data": "x" * 65}, "private", "Bad Request: BUTTON_DATA_INVALID"),
        ({"web_app": {"url": "https://a.io"}}, "supergroup", "Bad Request: BUTTON_TYPE_INVALID"),
    ],
)
def test_buttons_are_checked_against_the_chat(
    button: dict[str, Any], chat: str, description: str
) -> None:
    parsed = parse(inline([{"text": "t", **button}]))
    assert fails(lambda: markup_for(parsed, chat, channel_post=False)) == description


@pytest.mark.parametrize("name", ["switch_inline_query", "switch_inline_query_current_chat"])
def test_switch_inline_buttons_are_refused_on_channel_posts(name: str) -> None:
    parsed = parse(inline([{"text": "t", name: "q"}]))
    assert fails(lambda: markup_for(parsed, "channel", channel_post=True)) == (
        f"Bad Request: can't use {name} button in a channel chat, because users will not be "
        "able to use the button without knowing bot's username"
    )


def test_telegram_keeps_twelve_buttons_a_row_and_drops_empty_ones() -> None:
    row = [{"text": str(i), "callback_data": str(i)} for i in range(14)]
    shown = markup_for(parse(inline(row, [{"text": "", "callback_data": "x"}])), "private", False)
    assert shown is not None
    assert [len(r) for r in shown["inline_keyboard"]] == [12]
    assert markup_for(parse(inline([])), "private", channel_post=False) is None


def test_other_keyboards_are_not_shown_and_not_allowed_where_only_inline_ones_are() -> None:
    keyboard = parse({"keyboard": [["yes", {"text": "no"}]], "resize_keyboard": True})
    assert markup_for(keyboard, "private", channel_post=False) is None
    assert markup_for(parse({"remove_keyboard": True}), "supergroup", channel_post=False) is None
    # A channel post and an edit take inline keyboards only.
    assert fails(lambda: markup_for(keyboard, "channel", channel_post=True)) == (
        "Bad Request: inline keyboard expected"
    )
    removal = parse({"remove_keyboard": True})
    assert fails(lambda: markup_for(removal, "private", False, editing=True)) == (
        "Bad Request: inline keyboard expected"
    )
    contact = parse({"keyboard": [[{"text": "phone", "request_contact": True}]]})
    assert fails(lambda: markup_for(contact, "supergroup", channel_post=False)) == (
        "Bad Request: phone number can be requested in private chats only"
    )


def test_a_keyboard_read_again_is_a_copy_of_its_own() -> None:
    # Keyboards are read once per JSON text and kind of chat; each message gets its own copy.
    raw = inline([{"text": "Go", "web_app": {"url": "https://example.com/app"}}])
    first = markup_for(parse(raw), "private", channel_post=False)
    assert first is not None
    first["inline_keyboard"][0][0]["web_app"]["url"] = "changed"
    again = markup_for(parse(raw), "private", channel_post=False)
    assert again == {
        "inline_keyboard": [[{"text": "Go", "web_app": {"url": "https://example.com/app"}}]]
    }
    # The same keyboard elsewhere is checked again: Web App buttons are for private chats.
    assert fails(lambda: markup_for(parse(raw), "supergroup", channel_post=False)) == (
        "Bad Request: BUTTON_TYPE_INVALID"
    )
    # A JSON body's decoded object and its text read the same.
    assert markup_for(parse(raw, as_text=False), "private", channel_post=False) == again
    # Refusals are not kept: the same bad JSON is refused every time.
    for _ in range(2):
        assert fails(lambda: parse({"inline_keyboard": [["x"]]})).startswith(CANT_PARSE)
