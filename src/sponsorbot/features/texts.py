"""The visitor's texts in English and Persian, overridable per bot by the owner.

Texts go out with HTML parse mode. Our defaults may use tags; an owner's override is plain
text and is escaped like every value put into a text. Escaping touches exactly ``&``, ``<``,
``>`` and ``"``: Persian and accented letters go as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sponsorbot.features.texts_shop import SHOP_TEXTS

LANGUAGES = ("en", "fa")

_VISITOR: dict[str, dict[str, str]] = {
    "en": {
        "welcome": "Hello! Open a content link to get its file.",
        "unknown_code": "Sorry, this link is not valid or the content is no longer available.",
        "gate": "To get this content, please join:\n{channels}\n\nThen press <b>I've joined</b>.",
        "join_button": "Join {title}",
        "joined_button": "I've joined ✅",
        "still_missing": "Still missing: {titles}",
        "all_joined": "Thanks! Here it is.",
        "gate_outdated": "This message is outdated; open the link again.",
        "auto_delete": "This will be deleted in {minutes} minute(s). Save what you need.",
        "upload_saved": "Saved. Link:\n{link}",
        "batch_started": "Batch started: send the files, then /done (or /cancel).",
        "batch_added": "Added ({count} so far). Send more, or /done.",
        "batch_empty": "The batch is empty: send files first, or /cancel.",
        "batch_cancelled": "Batch cancelled.",
        "no_batch": "There is no open batch; /batch starts one.",
        "channel_added": "Channel added: {title}",
        "channel_refused": "Cannot add this channel: {reason}",
        # Answers where the bot used to say nothing: taps refused by the pace (gate/flood.py),
        # a second message inside the welcome's window, a button nobody handles any more.
        "slow_down": (
            "You are opening links faster than I can answer. Wait a few seconds, then open "
            "again the links that brought nothing."
        ),
        "welcome_again": "I only answer content links: open one to get its file.",
        "button_outdated": "This button no longer works; open the link again.",
    },
    "fa": {
        "welcome": "سلام! برای دریافت فایل، لینک آن را باز کنید.",
        "unknown_code": "متأسفیم، این لینک معتبر نیست یا محتوای آن دیگر در دسترس نیست.",
        "gate": "برای دریافت این محتوا لطفاً عضو شوید:\n{channels}\n\nسپس <b>عضو شدم</b> را بزنید.",
        "join_button": "عضویت در \u2068{title}\u2069",
        "joined_button": "عضو شدم ✅",
        "still_missing": "هنوز عضو نشده‌اید: \u2068{titles}\u2069",
        "all_joined": "ممنون! بفرمایید.",
        "gate_outdated": "این پیام قدیمی است؛ لینک را دوباره باز کنید.",
        "auto_delete": "این پیام پس از {minutes} دقیقه پاک می‌شود. آنچه لازم دارید ذخیره کنید.",
        "upload_saved": "ذخیره شد. لینک:\n{link}",
        "batch_started": (
            "دسته شروع شد: فایل‌ها را بفرستید، سپس \u2066/done\u2069 (یا \u2066/cancel\u2069)."
        ),
        "batch_added": "اضافه شد ({count} تا کنون). باز هم بفرستید، یا \u2066/done\u2069.",
        "batch_empty": "دسته خالی است: اول فایل بفرستید، یا \u2066/cancel\u2069.",
        "batch_cancelled": "دسته لغو شد.",
        "no_batch": "دسته‌ای باز نیست؛ با \u2066/batch\u2069 شروع کنید.",
        "channel_added": "کانال اضافه شد: \u2068{title}\u2069",
        "channel_refused": "این کانال اضافه نشد: {reason}",
        "slow_down": (
            "لینک‌ها را سریع‌تر از آنچه بتوانم پاسخ دهم باز می‌کنید. چند ثانیه صبر کنید، سپس "
            "لینک‌هایی را که چیزی نیاوردند دوباره باز کنید."
        ),
        "welcome_again": "من فقط به لینک‌های محتوا پاسخ می‌دهم؛ یکی را باز کنید تا فایلش را بگیرید.",
        "button_outdated": "این دکمه دیگر کار نمی‌کند؛ لینک را دوباره باز کنید.",
    },
}
# The shop talks to advertisers, who are visitors of the bot too.
DEFAULTS = {lang: {**_VISITOR[lang], **SHOP_TEXTS[lang]} for lang in LANGUAGES}
KEYS = frozenset(DEFAULTS["en"])
MAX_TEXT = 1000
# A placeholder is `{name}` and nothing more; `{{` and `}}` are braces. Texts are filled by this
# pattern, not str.format, whose format specs and attribute lookups an owner could abuse
# (`{title:>99999999999}` allocated gigabytes per visitor: docs/adr/0011-owner-texts.md).
_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_NAME = re.compile(r"^[a-z_]{1,32}$")


class _Unbalanced(ValueError):
    """A lone { or } in a text."""


def escape(text: str) -> str:
    """Escape exactly what Telegram's HTML parse mode needs: & < > and "."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def language_of(code: str | None) -> str:
    """The texts' language for a Telegram language_code: Persian for fa, English otherwise."""
    return "fa" if code and code.lower().split("-")[0] == "fa" else "en"


def placeholders(template: str) -> set[str]:
    """What a template writes in braces: `{title}` gives "title", `{title:>9}` gives
    "title:>9" (which no text allows). _Unbalanced (a ValueError) for a lone brace."""
    found = set()
    for match in _FIELD.finditer(template):
        token = match.group(0)
        if token in ("{", "}"):
            raise _Unbalanced(token)
        if match.group(1) is not None:
            found.add(match.group(1))
    return found


def _fill(template: str, fields: Mapping[str, str]) -> str:
    """Put `fields` into a template's {names}; KeyError for a name it lacks."""

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        name = match.group(1)
        if name is None or not _NAME.match(name):
            raise KeyError(token)
        return fields[name]

    return _FIELD.sub(one, template)


def text_problem(key: str, text: str) -> dict[str, Any] | None:
    """Why an owner's text for `key` cannot be used, as data (None when it can):
    `{"problem": "too_long", "limit": n}`, `{"problem": "unbalanced"}` or
    `{"problem": "placeholders", "allowed": [...], "unknown": [...]}`."""
    if len(text) > MAX_TEXT:
        return {"problem": "too_long", "limit": MAX_TEXT}
    allowed = placeholders(DEFAULTS["en"][key])
    try:
        used = placeholders(text)
    except ValueError:
        return {"problem": "unbalanced"}
    if used - allowed:
        return {
            "problem": "placeholders",
            "allowed": sorted(allowed),
            "unknown": sorted(used - allowed),
        }
    return None


def render(
    key: str,
    language: str,
    overrides: Mapping[str, Mapping[str, str]] | None = None,
    *,
    raw: Mapping[str, str] | None = None,
    html: bool = True,
    **values: Any,
) -> str:
    """The text `key` in `language`: the owner's override or our default.

    As HTML (the default) the override and `values` are escaped; `raw` values are HTML we
    built already. With `html=False` (button labels, callback answers) nothing is escaped.
    """
    quote = escape if html else str
    fields = {k: quote(str(v)) for k, v in values.items()}
    fields.update(raw or {})
    custom = (overrides or {}).get(language, {}).get(key)
    template = quote(custom) if custom else DEFAULTS[language][key]
    if not html:
        template = template.replace("<b>", "").replace("</b>", "")
    try:
        return _fill(template, fields)
    except KeyError:
        # An override naming a placeholder we do not have: fall back rather than fail a visitor.
        return _fill(DEFAULTS[language][key], fields)
