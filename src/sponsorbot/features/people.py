"""The people a bot knows: one row per (bot, person), shared by the features."""

from __future__ import annotations

from typing import Any

from sponsorbot.engine.unit import UnitOfWork

SEEN = """
INSERT INTO people (bot_id, user_id, language, username, first_name, last_name)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (bot_id, user_id) DO UPDATE
SET last_seen = excluded.last_seen, language = COALESCE(excluded.language, people.language),
    blocked_at = NULL,
    username = excluded.username, first_name = excluded.first_name, last_name = excluded.last_name
"""


def seen(uow: UnitOfWork, user: dict[str, Any]) -> None:
    """Upsert the person: last seen, language, names, not blocked (they just wrote to us)."""
    uow.write_alone(SEEN, uow.bot_id, user["id"], user.get("language_code"), *names(user))


def names(user: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """The username and the first and last names of a Telegram user, as the visitors page
    searches them (cut to Telegram's own limits, so an odd update cannot bloat the row)."""
    return (
        _text(user.get("username"), 32),
        _text(user.get("first_name"), 64),
        _text(user.get("last_name"), 64),
    )


def _text(value: Any, limit: int) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None
