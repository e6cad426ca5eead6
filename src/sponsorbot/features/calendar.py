"""Dates and numbers as a Persian reader writes them: the Jalali calendar, Persian digits and
separators, and the reverse (what a Persian keyboard types, read back).

Both the bot's messages and the panel use these, so they live below both.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import jdatetime

PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
# Persian (U+06F0..) and Arabic-Indic (U+0660..) digits as a keyboard may type them, and the
# Persian separators, read as what they mean.
_LATIN = str.maketrans(
    "۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩٬٫",
    "0123456789" * 2 + ",.",
)
THOUSANDS = "\u066c"  # ٬ ARABIC THOUSANDS SEPARATOR
DECIMAL = "\u066b"  # ٫ ARABIC DECIMAL SEPARATOR
# Bidi isolates: a left-to-right run (LRI), one that finds its own direction (FSI), their end.
LRI, FSI, PDI = "\u2066", "\u2068", "\u2069"

# A Jalali date typed as year/month/day with / - or . between (the digits already Latin).
_JALALI = re.compile(r"^(\d{4})[/.-](\d{1,2})[/.-](\d{1,2})(?:[ T]+(\d{1,2}):(\d{2}))?$")


def latin_digits(text: str) -> str:
    """`text` with Persian and Arabic-Indic digits and separators made ASCII (٬ becomes a comma,
    ٫ a point), so that a number typed on a Persian keyboard reads like any other."""
    return text.translate(_LATIN)


def persian_number(text: str) -> str:
    """A number written with Latin digits, ``,`` and ``.`` as Persian writes it: its own digits,
    ٬ between thousands and ٫ before the decimals."""
    return text.replace(",", THOUSANDS).replace(".", DECIMAL).translate(PERSIAN_DIGITS)


def to_jalali(day: date) -> tuple[int, int, int]:
    """The Jalali (year, month, day) of a Gregorian date."""
    jalali = jdatetime.date.fromgregorian(date=day)
    return jalali.year, jalali.month, jalali.day


def from_jalali(year: int, month: int, day: int) -> date:
    """The Gregorian date of a Jalali one; ValueError when there is no such day."""
    gregorian: date = jdatetime.date(year, month, day).togregorian()
    return gregorian


def jalali_text(day: date) -> str:
    """A Gregorian date as Jalali year/month/day, with Latin digits (``1405/09/14``)."""
    year, month, dd = to_jalali(day)
    return f"{year:04d}/{month:02d}/{dd:02d}"


def parse_jalali(raw: str) -> tuple[date, time | None]:
    """A Jalali date typed as ``1405/09/14`` (Persian or Latin digits, ``/``, ``-`` or ``.``
    between), optionally followed by a time ``18:30``: the Gregorian day and the time.
    ValueError when it is not one."""
    found = _JALALI.match(latin_digits(raw).strip())
    if not found:
        raise ValueError(raw)
    year, month, day = (int(found.group(i)) for i in (1, 2, 3))
    gregorian = from_jalali(year, month, day)
    if found.group(4) is None:
        return gregorian, None
    return gregorian, time(int(found.group(4)), int(found.group(5)))


def local_moment(at: datetime, zone: str, language: str) -> str:
    """A moment to the minute in `zone`, followed by the zone's name: Gregorian with Latin
    digits in English, Jalali with Persian digits in Persian."""
    local = at.astimezone(ZoneInfo(zone))
    if language == "fa":
        text = f"{jalali_text(local.date())} {local:%H:%M}".translate(PERSIAN_DIGITS)
    else:
        text = f"{local:%Y-%m-%d %H:%M}"
    return f"{text} ({zone})"
