"""Languages of the panel: Babel catalogs read from .po at start, digits, Jalali dates.

The catalogs are plain `.po` files compiled in memory when the panel starts, so there is no
build step: editing `locale/fa/LC_MESSAGES/messages.po` and restarting is enough.
"""

from __future__ import annotations

import io
from contextvars import ContextVar
from datetime import datetime
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

import jdatetime
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
LANGUAGES = ("en", "fa")
RTL = frozenset({"fa"})
_PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")

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


def gettext(message: str, **variables: object) -> str:
    """`message` in the current language, with `%(name)s` placeholders filled in."""
    text = translations(_current.get()).gettext(message)
    if variables:
        text = text % {k: localize_digits(v) for k, v in variables.items()}
    return text


def ngettext(singular: str, plural: str, n: int, **variables: object) -> str:
    """The singular or plural form for `n`, in the current language."""
    text = translations(_current.get()).ngettext(singular, plural, n)
    variables.setdefault("num", n)
    return text % {k: localize_digits(v) for k, v in variables.items()}


_ = gettext


def N_(message: str) -> str:
    """Mark a message for the catalog without translating it yet (constants)."""
    return message


def localize_digits(value: object) -> str:
    """The value as text, with Persian digits when the current language is Persian."""
    text = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
    if _current.get() == "fa":
        return text.replace(",", "٬").translate(_PERSIAN_DIGITS)
    return text


def format_datetime(moment: datetime | None, zone: str, with_time: bool = True) -> str:
    """A moment in the workspace's zone: Jalali with Persian digits in Persian."""
    if moment is None:
        return "—"
    local = moment.astimezone(ZoneInfo(zone))
    if _current.get() == "fa":
        jalali = jdatetime.datetime.fromgregorian(datetime=local)
        text = str(jalali.strftime("%Y/%m/%d %H:%M" if with_time else "%Y/%m/%d"))
        return text.translate(_PERSIAN_DIGITS)
    return local.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d")


def zone_label(zone: str) -> str:
    """A zone's name and current UTC offset, e.g. "Asia/Tehran (UTC+03:30)"."""
    offset = datetime.now(ZoneInfo(zone)).strftime("%z")
    text = f"{zone} (UTC{offset[:3]}:{offset[3:]})"
    return text.translate(_PERSIAN_DIGITS) if _current.get() == "fa" else text


def format_percent(share: float | None, signed: bool = False) -> str:
    """A percentage with one decimal in the current language ("—" when undefined): Persian
    writes its own digits, ٫ for the decimal point and ٪ for the sign."""
    if share is None:
        return "—"
    text = localize_digits(f"{share:+,.1f}%" if signed else f"{share:,.1f}%")
    if _current.get() == "fa":
        text = text.replace(".", "٫").replace("%", "٪")
    return text
