"""Form fields several panel pages read the same way: text, whole numbers, ids, and days and
moments typed in the workspace's time zone.

Dates come two ways. English pages use the browser's date inputs, which send ISO dates
(``2026-12-05``, ``2026-12-05T18:30``). Persian pages show a text field in the Jalali calendar
(``۱۴۰۵/۰۹/۱۴ ۱۸:۳۰``), typed with Persian or Latin digits and read here, so they need no script.
Both are accepted on both: a year before 1700 is a Jalali one (the Jalali calendar reaches 1700
in 2321), a later one Gregorian.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from sponsorbot.features.bots.service import Bot
from sponsorbot.features.calendar import PERSIAN_DIGITS, from_jalali, jalali_text, latin_digits
from sponsorbot.web.panel import i18n
from sponsorbot.web.panel.i18n import gettext as _

_LAST_JALALI_YEAR = 1699
# year, month, day with - / or . between; then optionally a time after a space or a T.
_DAY = re.compile(r"(\d{1,4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[ T]+(\d{1,2}):(\d{2}))?")


def text_of(form: Mapping[str, Any], key: str) -> str:
    """A text field as typed, made storable."""
    # NUL is the one character PostgreSQL's text refuses; nobody means to type it. A textarea
    # sends CRLF line ends: what is kept has the plain newlines Telegram shows.
    value = form.get(key, "")
    return value.replace("\x00", "").replace("\r\n", "\n") if isinstance(value, str) else ""


def whole_number(raw: str, errors: dict[str, str], key: str, message: str) -> int | None:
    """A whole number typed in a field; None when empty, an error under `key` when not one."""
    # Persian digits and separators (٬) read as any others: a Persian page shows them so.
    raw = latin_digits(raw).replace(",", "").strip()
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9:
        errors[key] = message
        return None
    return int(raw)


def is_id(raw: str) -> bool:
    """An id as a form sends it (and small enough for a bigint)."""
    return raw.isdigit() and len(raw) <= 18


def _day_and_time(raw: str) -> tuple[date, time | None]:
    """A typed day (and time), ISO or Jalali; ValueError when it is not one."""
    found = _DAY.fullmatch(latin_digits(raw).strip())
    if not found:
        raise ValueError(raw)
    year, month, day = (int(found.group(i)) for i in (1, 2, 3))
    typed = from_jalali(year, month, day) if year <= _LAST_JALALI_YEAR else date(year, month, day)
    if found.group(4) is None:
        return typed, None
    return typed, time(int(found.group(4)), int(found.group(5)))


def day_of(raw: str | None) -> date | None:
    """A day from a date field, ISO or Jalali; None when empty or not a day."""
    try:
        return _day_and_time(raw or "")[0]
    except ValueError:
        return None


def moment_of(raw: str, zone: str, errors: dict[str, str], field: str) -> datetime | None:
    """A date and time typed in the workspace's zone, ISO or Jalali (midnight when only a day is
    given); None when empty (an error under `field` when it is not one)."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        try:
            day, at = _day_and_time(raw)
            value = datetime.combine(day, at or time(0), ZoneInfo(zone))
        except ValueError:
            value = datetime.fromisoformat(raw)  # ISO with seconds or an offset
        if not value.tzinfo:
            value = value.replace(tzinfo=ZoneInfo(zone))
        value.astimezone(ZoneInfo("UTC"))  # years at the ends of the calendar overflow here
    except (ValueError, OverflowError):
        errors[field] = _("Enter a date and time like 2026-12-31 18:00.")
        return None
    return value


def local_input(moment: datetime | None, zone: str) -> str:
    """A moment as its field shows it, in the workspace's zone: for the browser's
    datetime-local input in English, Jalali with Persian digits in Persian."""
    if moment is None:
        return ""
    if i18n.current_language() == "fa":
        return i18n.format_datetime(moment, zone)
    return moment.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M")


def day_example(with_time: bool) -> str:
    """What a Persian date field asks for, as its placeholder: a Jalali day (and a time)."""
    return "۱۴۰۵/۰۹/۱۴ ۱۸:۳۰" if with_time else "۱۴۰۵/۰۹/۱۴"


def day_input(value: date | str | None) -> str:
    """A day as its field shows it: ISO for the browser's date input in English, Jalali with
    Persian digits in Persian. Text that is not a day is shown as typed."""
    day = value if isinstance(value, date) else day_of(value)
    if day is None:
        return str(value or "")
    if i18n.current_language() == "fa":
        return jalali_text(day).translate(PERSIAN_DIGITS)
    return day.isoformat()


def bot_filter(raw: str, bots: list[Bot]) -> int | None:
    """A page's `bot` filter: the id of one of `bots`, or None (every bot) for anything else."""
    known = {b.id for b in bots}
    return int(raw) if is_id(raw) and int(raw) in known else None
