"""Form fields several panel pages read the same way: text, whole numbers, ids, and moments
typed in the workspace's time zone."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from sponsorbot.web.panel.i18n import gettext as _


def text_of(form: Mapping[str, Any], key: str) -> str:
    """A text field as typed, made storable."""
    # NUL is the one character PostgreSQL's text refuses; nobody means to type it. A textarea
    # sends CRLF line ends: what is kept has the plain newlines Telegram shows.
    value = form.get(key, "")
    return value.replace("\x00", "").replace("\r\n", "\n") if isinstance(value, str) else ""


def whole_number(raw: str, errors: dict[str, str], key: str, message: str) -> int | None:
    """A whole number typed in a field; None when empty, an error under `key` when not one."""
    raw = raw.strip()
    if not raw:
        return None
    if not raw.isdigit() or len(raw) > 9:
        errors[key] = message
        return None
    return int(raw)


def is_id(raw: str) -> bool:
    """An id as a form sends it (and small enough for a bigint)."""
    return raw.isdigit() and len(raw) <= 18


def moment_of(raw: str, zone: str, errors: dict[str, str], field: str) -> datetime | None:
    """A date and time typed in the workspace's zone; None when empty (an error under `field`
    when it is not one)."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        value = datetime.fromisoformat(raw)
        if not value.tzinfo:
            value = value.replace(tzinfo=ZoneInfo(zone))
        value.astimezone(ZoneInfo("UTC"))  # years at the ends of the calendar overflow here
    except (ValueError, OverflowError):
        errors[field] = _("Enter a date and time like 2026-12-31 18:00.")
        return None
    return value


def local_input(moment: datetime | None, zone: str) -> str:
    """A moment as a datetime-local field shows it, in the workspace's zone."""
    return moment.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M") if moment else ""


def bot_filter(raw: str, bots: list[dict[str, Any]]) -> int | None:
    """A page's `bot` filter: the id of one of `bots`, or None (every bot) for anything else."""
    known = {int(b["id"]) for b in bots}
    return int(raw) if is_id(raw) and int(raw) in known else None
