"""Languages of the panel: Babel catalogs read from .po at start, digits, Jalali dates.

The catalogs are plain `.po` files compiled in memory when the panel starts, so there is no
build step: editing `locale/fa/LC_MESSAGES/messages.po` and restarting is enough.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from contextvars import ContextVar
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations
from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from sponsorbot.features.calendar import (
    FSI,
    PDI,
    PERSIAN_DIGITS,
    THOUSANDS,
    jalali_text,
    persian_number,
)

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
LANGUAGES = ("en", "fa")
RTL = frozenset({"fa"})
_LATIN_LETTER = re.compile("[A-Za-z]")
# A number as a filter gets it: digits, thousands commas, one decimal point.
_NUMBER = re.compile(r"[+-]?\d[\d,]*(?:\.\d+)?")

_current: ContextVar[str] = ContextVar("panel_language", default="en")


@cache
def translations(language: str) -> NullTranslations:
    """The catalog of one language, compiled from its .po file in memory."""
    path = LOCALE_DIR / language / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as po:
        catalog = read_po(po, locale=language)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return Translations(fp=buffer)


def use_language(language: str) -> None:
    """Make `language` the one `gettext` answers in for the rest of this request."""
    _current.set(language if language in LANGUAGES else "en")


def current_language() -> str:
    """The language of the request being handled."""
    return _current.get()


def isolate(value: Any) -> Any:
    """A value put into a Persian sentence, kept in one piece by the bidi algorithm: wrapped in
    FSI…PDI when it holds Latin letters (a @handle, a name, a unit), so that its punctuation
    does not drift to the other end. Markup stays Markup; other languages and values without
    Latin letters are returned as they are."""
    if _current.get() != "fa" or not isinstance(value, str):
        return value
    if not _LATIN_LETTER.search(value) or value.startswith(FSI):
        return value
    if isinstance(value, Markup):
        return Markup("\u2068{}\u2069").format(value)
    return f"{FSI}{value}{PDI}"


def gettext(message: str, **variables: object) -> str:
    """`message` in the current language, with `%(name)s` placeholders filled in."""
    text = translations(_current.get()).gettext(message)
    if variables:
        text = text % {k: isolate(localize_digits(v)) for k, v in variables.items()}
    return text


def ngettext(singular: str, plural: str, n: int, **variables: object) -> str:
    """The singular or plural form for `n`, in the current language."""
    text = translations(_current.get()).ngettext(singular, plural, n)
    variables.setdefault("num", n)
    return text % {k: isolate(localize_digits(v)) for k, v in variables.items()}


def _filled(context: Context, text: str, variables: dict[str, Any]) -> str:
    """A translated template string with its variables, as Jinja's own gettext fills it (a
    format string even without variables; escaped under autoescape), values isolated."""
    # The catalog's own text is trusted markup, as in Jinja's gettext; the values are escaped.
    rv: str = Markup(text) if context.eval_ctx.autoescape else text  # noqa: S704
    return rv % {k: isolate(v) for k, v in variables.items()}


def template_callables() -> tuple[Callable[..., str], Callable[..., str]]:
    """gettext and ngettext for templates: Jinja's new-style ones, with each Latin value in a
    Persian sentence isolated (`isolate`)."""

    @pass_context
    def template_gettext(context: Context, message: str, **variables: Any) -> str:
        return _filled(context, translations(_current.get()).gettext(message), variables)

    @pass_context
    def template_ngettext(
        context: Context, singular: str, plural: str, n: int, **variables: Any
    ) -> str:
        variables.setdefault("num", localize_digits(n))
        text = translations(_current.get()).ngettext(singular, plural, n)
        return _filled(context, text, variables)

    return template_gettext, template_ngettext


_ = gettext


def N_(message: str) -> str:
    """Mark a message for the catalog without translating it yet (constants)."""
    return message


def localize_digits(value: object) -> str:
    """The value as text, with Persian digits when the current language is Persian: a number
    also gets Persian's separators (٬ between thousands, ٫ before decimals)."""
    text = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
    if _current.get() == "fa":
        if _NUMBER.fullmatch(text):
            return persian_number(text)
        return text.replace(",", THOUSANDS).translate(PERSIAN_DIGITS)
    return text


def format_datetime(moment: datetime | None, zone: str, with_time: bool = True) -> str:
    """A moment in the workspace's zone: Jalali with Persian digits in Persian."""
    if moment is None:
        return "—"
    local = moment.astimezone(ZoneInfo(zone))
    if _current.get() == "fa":
        text = jalali_text(local.date()) + (f" {local:%H:%M}" if with_time else "")
        return text.translate(PERSIAN_DIGITS)
    return local.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d")


def zone_label(zone: str) -> str:
    """A zone's name and current UTC offset, e.g. "Asia/Tehran (UTC+03:30)"."""
    offset = datetime.now(ZoneInfo(zone)).strftime("%z")
    text = f"{zone} (UTC{offset[:3]}:{offset[3:]})"
    return text.translate(PERSIAN_DIGITS) if _current.get() == "fa" else text


def format_percent(share: float | None, signed: bool = False) -> str:
    """A percentage with one decimal in the current language ("—" when undefined): Persian
    writes its own digits, ٫ for the decimal point and ٪ for the sign."""
    if share is None:
        return "—"
    text = localize_digits(f"{share:+,.1f}%" if signed else f"{share:,.1f}%")
    if _current.get() == "fa":
        text = text.replace(".", "٫").replace("%", "٪")
    return text
