"""A broadcast's post: what the owner writes, checked as Telegram would check it, and the Bot
API call it becomes (the same call for every recipient but the chat id)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from sponsorbot.features.errors import Code, Invalid
from sponsorbot.telegram.html import HtmlError, check_message_text

MEDIA_KINDS = ("photo", "video", "document")
METHODS = {"photo": "sendPhoto", "video": "sendVideo", "document": "sendDocument"}
MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_ROWS = 10
MAX_PER_ROW = 8
MAX_BUTTON_TEXT = 64
FILE_ID = re.compile(r"^[A-Za-z0-9_-]{8,200}$")
URL_SCHEMES = ("http", "https", "tg")


@dataclass(frozen=True, slots=True)
class Button:
    """A button with a link."""

    text: str
    url: str


@dataclass(frozen=True, slots=True)
class Post:
    """The message of a broadcast, as the owner wrote it."""

    text: str = ""
    media_kind: str | None = None
    file_id: str | None = None
    buttons: tuple[tuple[Button, ...], ...] = ()
    protect: bool = False
    silent: bool = False
    paid: bool = False

    def as_json(self) -> dict[str, Any]:
        """The post as stored (and as the API and the form show it)."""
        return {
            "text": self.text,
            "media_kind": self.media_kind,
            "file_id": self.file_id,
            "buttons": [[{"text": b.text, "url": b.url} for b in row] for row in self.buttons],
            "protect": self.protect,
            "silent": self.silent,
            "paid": self.paid,
        }

    @classmethod
    def of_json(cls, data: dict[str, Any]) -> Post:
        """A stored post back; shapes the API already checked."""
        rows = tuple(
            tuple(Button(str(b.get("text", "")), str(b.get("url", ""))) for b in row)
            for row in data.get("buttons") or ()
        )
        return cls(
            text=str(data.get("text") or ""),
            media_kind=data.get("media_kind") or None,
            file_id=data.get("file_id") or None,
            buttons=rows,
            protect=bool(data.get("protect")),
            silent=bool(data.get("silent")),
            paid=bool(data.get("paid")),
        )


@dataclass(frozen=True, slots=True)
class Call:
    """The Bot API call a post becomes, without the chat id."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)


def check_url(url: str) -> str:
    """The button's link, or Invalid: Telegram accepts http(s) and tg:// links with a host."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in URL_SCHEMES or not (parts.netloc or parts.scheme == "tg"):
        raise Invalid(
            f"the button link {url!r} is not a valid URL (use https://...)", code=Code.BUTTON_URL
        )
    if parts.scheme.lower() == "tg" and not (parts.netloc or parts.path):
        raise Invalid(f"the button link {url!r} is not a valid URL", code=Code.BUTTON_URL)
    return url


def build(post: Post) -> Call:
    """The call for this post, or Invalid with the error Telegram would give."""
    # Sent as written: Telegram trims it itself, by rules of its own (not str.strip's).
    text = post.text
    if post.media_kind is None and post.file_id:
        raise Invalid("say what kind of file the file_id is", code=Code.MEDIA_KIND)
    if post.media_kind is not None:
        if post.media_kind not in MEDIA_KINDS:
            raise Invalid(
                f"the media kind is one of {', '.join(MEDIA_KINDS)}", code=Code.MEDIA_KIND
            )
        if not post.file_id or not FILE_ID.match(post.file_id):
            raise Invalid("the media needs a Telegram file_id (or an upload)", code=Code.FILE_ID)
    params: dict[str, Any] = {}
    try:
        if post.media_kind is None:
            check_message_text(text, limit=MAX_TEXT)
            params["text"] = text
            method = "sendMessage"
        else:
            method = METHODS[post.media_kind]
            params[post.media_kind] = post.file_id
            if check_message_text(text, limit=MAX_CAPTION, what="caption").text:
                params["caption"] = text
    except HtmlError as exc:
        raise Invalid(str(exc), code=Code.POST_TEXT, telegram=str(exc)) from None
    if "text" in params or "caption" in params:
        params["parse_mode"] = "HTML"
    rows = [row for row in post.buttons if row]
    if len(rows) > MAX_ROWS:
        raise Invalid(f"at most {MAX_ROWS} rows of buttons", code=Code.BUTTONS)
    keyboard = []
    for row in rows:
        if len(row) > MAX_PER_ROW:
            raise Invalid(f"at most {MAX_PER_ROW} buttons in a row", code=Code.BUTTONS)
        out = []
        for button in row:
            label = button.text.strip()
            if not label or len(label) > MAX_BUTTON_TEXT:
                raise Invalid(
                    f"a button needs a label of 1 to {MAX_BUTTON_TEXT} characters",
                    code=Code.BUTTONS,
                )
            out.append({"text": label, "url": check_url(button.url)})
        keyboard.append(out)
    if keyboard:
        params["reply_markup"] = {"inline_keyboard": keyboard}
    if post.protect:
        params["protect_content"] = True
    if post.silent:
        params["disable_notification"] = True
    if post.paid:
        params["allow_paid_broadcast"] = True
    return Call(method, params)
