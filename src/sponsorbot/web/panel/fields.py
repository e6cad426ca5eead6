"""Form fields several panel pages read the same way: ids, and moments typed in the
workspace's time zone."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from sponsorbot.web.panel.i18n import gettext as _


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
