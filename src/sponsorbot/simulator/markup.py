"""``reply_markup`` as Telegram takes it, in two steps with the real errors of each.

First the Bot API server reads the JSON (:func:`parse_reply_markup`: ``can't parse reply
keyboard markup JSON object``, ``can't parse inline keyboard button: ...``); then, once the
chat is known, tdlib and Telegram check the buttons against it (:func:`markup_for`: bad URLs,
Web App buttons outside private chats, switch-inline buttons in channels...). What comes out
is the InlineKeyboardMarkup a message shows, buttons written back the way Telegram stores them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import orjson

from sponsorbot.simulator.errors import BUTTON_DATA_INVALID, bad_request, from_tdlib
from sponsorbot.simulator.params import Params, json_object
from sponsorbot.simulator.readers import (
    FieldError,
    optional,
    optional_integer,
    optional_text,
    required,
    required_text,
)
from sponsorbot.simulator.textlinks import LinkError, check_link, link_user_id, parse_url
from sponsorbot.simulator.types import shape

# Telegram keeps the first 12 buttons of a row and the first 300 of a keyboard.
MAX_ROW_BUTTONS = 12
MAX_BUTTONS = 300
MAX_CALLBACK_DATA = 64
_STYLES = ("primary", "danger", "success")
# Reply keyboard buttons that only work in a private chat, and tdlib's word for each.
_PRIVATE_ONLY = {
    "request_contact": "Phone number",
    "request_phone_number": "Phone number",
    "request_location": "Location",
    "request_poll": "Poll",
    "web_app": "Web App buttons",
    "request_users": "Users",
    "request_user": "Users",
    "request_chat": "Chats",
    "request_managed_bot": "Managed bots",
}
# The boolean fields of a reply_markup, and those only a reply keyboard reads.
_FLAGS = frozenset(
    {
        "hide_keyboard",
        "remove_keyboard",
        "force_reply_keyboard",
        "force_reply",
        "personal_keyboard",
        "selective",
    }
)
_KEYBOARD_FLAGS = frozenset({"resize_keyboard", "one_time_keyboard", "is_persistent"})
# Switch-inline buttons, by the name tdlib gives each when refusing it in a channel.
_SWITCH_NAMES = {
    "switch_inline_query": "switch_inline_query",
    "switch_inline_query_chosen_chat": "switch_inline_query",
    "switch_inline_query_current_chat": "switch_inline_query_current_chat",
}
SWITCH_IN_CHANNEL = (
    "can't use {} button in a channel chat, because users will not be able to use the button "
    "without knowing bot's username"
)


# Bots send the same keyboards again and again: what was read from a reply_markup (and what
# it became in each kind of chat) is kept for the next call with the same JSON text.
_CACHED_MARKUPS = 256
_CACHED_LENGTH = 8192


@dataclass(frozen=True, slots=True)
class Markup:
    """A reply_markup the server could read: an inline keyboard, or another kind of markup.
    Shared by every call that sends the same ``key`` (its JSON text): never changed."""

    kind: str  # "inline", "keyboard", "remove" or "force_reply"
    key: str | bytes
    rows: tuple[tuple[dict[str, Any], ...], ...] = ()


def parse_reply_markup(p: Params) -> Markup | None:
    """Read ``reply_markup`` as the Bot API server does, failing with its words."""
    raw = p.data.get("reply_markup")
    if raw is None or raw == "":
        return None
    key = raw if isinstance(raw, str) else orjson.dumps(raw)
    if len(key) > _CACHED_LENGTH:
        return _parse(key)
    return _parse_cached(key)


def _parse(key: str | bytes) -> Markup | None:
    value = json_object(key, "reply keyboard markup", "reply markup")
    try:
        return _read_markup(value, key)
    except FieldError as error:
        raise from_tdlib(str(error)) from None


_parse_cached = functools.lru_cache(maxsize=_CACHED_MARKUPS)(_parse)


def _read_markup(value: dict[str, Any], key: str | bytes) -> Markup | None:
    keyboard = optional(value, "keyboard", list)
    rows = []
    for row in keyboard or ():
        if not isinstance(row, list):
            raise FieldError('Field "keyboard" must be an Array of Arrays')
        rows.append([_wrap("Can't parse keyboard button: ", _keyboard_button, b) for b in row])
    inline = optional(value, "inline_keyboard", list)
    inline_rows = []
    for row in inline or ():
        if not isinstance(row, list):
            raise FieldError(
                'Field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays'
            )
        inline_rows.append(
            [_wrap("Can't parse inline keyboard button: ", _inline_button, b) for b in row]
        )
    # Only fields that are there can be of the wrong type.
    flags = {name: optional(value, name, bool) for name in _FLAGS & value.keys()}
    optional(value, "input_field_placeholder", str)
    if rows:
        for name in _KEYBOARD_FLAGS & value.keys():
            optional(value, name, bool)
        return Markup("keyboard", key, tuple(map(tuple, rows)))
    if inline_rows:
        return Markup("inline", key, tuple(map(tuple, inline_rows)))
    if flags.get("hide_keyboard") or flags.get("remove_keyboard"):
        return Markup("remove", key)
    if flags.get("force_reply") or flags.get("force_reply_keyboard"):
        return Markup("force_reply", key)
    return None


def _wrap(prefix: str, read: Any, button: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = read(button)
    except FieldError as error:
        raise FieldError(prefix + str(error)) from None
    return result


def _keyboard_button(button: Any) -> dict[str, Any]:
    if isinstance(button, str):
        return {"text": button, "type": None}
    if not isinstance(button, dict):
        raise FieldError("KeyboardButton must be a String or an Object")
    text = required_text(button, "text")
    optional_integer(button, "icon_custom_emoji_id", 64)
    _style(button)
    kind = next((k for k in _PRIVATE_ONLY if button.get(k)), None)
    return {"text": text, "type": kind}


def _inline_button(button: Any) -> dict[str, Any]:
    if not isinstance(button, dict):
        raise FieldError("InlineKeyboardButton must be an Object")
    out: dict[str, Any] = {"text": required_text(button, "text")}
    icon = optional_integer(button, "icon_custom_emoji_id", 64)
    if icon:
        out["icon_custom_emoji_id"] = str(icon)
    style = _style(button)
    if style:
        out["style"] = style
    for name in ("url", "callback_data"):
        text = optional_text(button, name)
        if text:
            out[name] = text
            return out
    if "callback_game" in button:
        out["callback_game"] = shape("CallbackGame")
    elif "pay" in button:
        out["pay"] = True
    elif "switch_inline_query" in button:
        out["switch_inline_query"] = required_text(button, "switch_inline_query")
    elif "switch_inline_query_chosen_chat" in button:
        chosen = required(button, "switch_inline_query_chosen_chat", dict)
        query = optional_text(chosen, "query") or ""
        allowed = [optional(chosen, f"allow_{k}_chats", bool) or False for k in _TARGETS]
        if all(allowed):
            out["switch_inline_query"] = query
        else:
            chat = dict(zip((f"allow_{k}_chats" for k in _TARGETS), allowed, strict=True))
            out["switch_inline_query_chosen_chat"] = shape(
                "SwitchInlineQueryChosenChat", chat, query=query
            )
    elif "switch_inline_query_current_chat" in button:
        out["switch_inline_query_current_chat"] = required_text(
            button, "switch_inline_query_current_chat"
        )
    elif "login_url" in button:
        login = required(button, "login_url", dict)
        out["login_url"] = required_text(login, "url")
        name = (optional_text(login, "bot_username") or "").removeprefix("@")
        if "bot_username" in login and (not name or not name.replace("_", "").isalnum()):
            raise FieldError("LoginUrl bot username is invalid")
        optional(login, "request_write_access", bool)
        optional_text(login, "forward_text")
    elif "web_app" in button:
        url = required_text(required(button, "web_app", dict), "url")
        out["web_app"] = shape("WebAppInfo", url=url)
    elif "copy_text" in button:
        text = required_text(required(button, "copy_text", dict), "text")
        out["copy_text"] = shape("CopyTextButton", text=text)
    else:
        raise FieldError("Text buttons are unallowed in the inline keyboard")
    return out


_TARGETS = ("user", "bot", "group", "channel")


def _style(button: dict[str, Any]) -> str | None:
    style = (optional_text(button, "style") or "").lower()
    if style in ("", "default"):
        return None
    if style not in _STYLES:
        raise FieldError("invalid button style specified")
    return style


def markup_for(
    markup: Markup | None, chat_type: str, channel_post: bool, editing: bool = False
) -> dict[str, Any] | None:
    """Check the buttons against the chat as tdlib and Telegram do; the InlineKeyboardMarkup
    the message shows (None for other keyboards, which messages do not carry), the caller's
    own to keep."""
    if markup is None:
        return None
    if len(markup.key) > _CACHED_LENGTH:
        return _markup_for(markup, chat_type, channel_post, editing)
    built = _built(markup.key, chat_type, channel_post, editing)
    return None if built is None else orjson.loads(built)  # a copy of its own


@functools.lru_cache(maxsize=_CACHED_MARKUPS)
def _built(key: str | bytes, chat_type: str, channel_post: bool, editing: bool) -> bytes | None:
    markup = _parse_cached(key)
    built = _markup_for(markup, chat_type, channel_post, editing) if markup else None
    return None if built is None else orjson.dumps(built)


def _markup_for(
    markup: Markup, chat_type: str, channel_post: bool, editing: bool
) -> dict[str, Any] | None:
    if markup.kind != "inline":
        if editing or channel_post:
            raise bad_request("inline keyboard expected")
        if markup.kind == "keyboard" and chat_type != "private":
            _check_private_only(markup.rows)
        return None
    rows = []
    total = 0
    for row in markup.rows:
        kept = []
        for button in row:
            if not button["text"] and "icon_custom_emoji_id" not in button:
                continue  # Telegram drops buttons without text
            kept.append(_checked(button, channel_post))
            total += 1
            if len(kept) >= MAX_ROW_BUTTONS or total >= MAX_BUTTONS:
                break
        if kept:
            rows.append(kept)
        if total >= MAX_BUTTONS:
            break
    if not rows:
        return None
    # tdlib has accepted every button; Telegram's own checks come after.
    for button in (b for row in rows for b in row):
        if len(button.get("callback_data", "").encode()) > MAX_CALLBACK_DATA:
            raise bad_request(BUTTON_DATA_INVALID)
        if "web_app" in button and chat_type != "private":
            raise bad_request("BUTTON_TYPE_INVALID")  # Web App buttons: private chats only
    return shape("InlineKeyboardMarkup", inline_keyboard=rows)


def _check_private_only(rows: tuple[tuple[dict[str, Any], ...], ...]) -> None:
    for row in rows:
        for button in row:
            kind = button["type"]
            if kind is not None and button["text"]:
                what = _PRIVATE_ONLY[kind]
                verb = "used" if kind == "web_app" else "requested"
                raise from_tdlib(f"{what} can be {verb} in private chats only")


def _checked(button: dict[str, Any], channel_post: bool) -> dict[str, Any]:
    """tdlib's checks of one button; the button as the message will show it."""
    if not button["text"]:
        raise bad_request("inline keyboard button text must be non-empty")
    out = dict(button)
    if "url" in button:
        user_id = link_user_id(button["url"])
        if user_id:
            out["url"] = f"tg://user?id={user_id}"
        else:
            out["url"] = _link(button["url"], "inline keyboard button ", https=False)
    elif "login_url" in button:
        # A login button shows as a plain URL button on the message.
        url = out.pop("login_url")
        if link_user_id(url):
            raise bad_request("link to a user can't be used in login URL buttons")
        out["url"] = _link(url, "inline keyboard button login ", https=True)
    elif "web_app" in button:
        url = button["web_app"]["url"]
        if link_user_id(url):
            raise bad_request("link to a user can't be used in Web App URL buttons")
        out["web_app"] = shape(
            "WebAppInfo", url=_link(url, "inline keyboard button Web App ", https=True)
        )
    elif channel_post:
        switch = next((_SWITCH_NAMES[k] for k in _SWITCH_NAMES if k in button), None)
        if switch:
            raise bad_request(SWITCH_IN_CHANNEL.format(switch))
    return shape("InlineKeyboardButton", **out)


def _link(url: str, prefix: str, https: bool) -> str:
    """tdlib's check_link; Web App and login URLs must be HTTPS (``https_only``)."""
    try:
        if https:
            special = url[:8].lower().startswith(("tg:", "ton:", "tonsite:"))
            if special or not parse_url(url).https:
                raise LinkError(f"URL '{url}' is invalid: Only HTTPS links are allowed")
        return check_link(url)
    except LinkError as error:
        message = str(error)
        if not message.startswith("URL"):
            message = f"URL '{url}' is invalid: {message}"
        raise bad_request(prefix + message) from None
