"""The people a bot knows: one row per (bot, person), shared by the features."""

from __future__ import annotations

from typing import Any

from sponsorbot.engine.unit import UnitOfWork

SEEN = """
INSERT INTO people (bot_id, user_id, language) VALUES ($1, $2, $3)
ON CONFLICT (bot_id, user_id) DO UPDATE
SET last_seen = now(), language = COALESCE(excluded.language, people.language), blocked_at = NULL
"""


def seen(uow: UnitOfWork, user: dict[str, Any]) -> None:
    """Upsert the person: last seen, language, not blocked (they just wrote to us)."""
    uow.write_alone(SEEN, uow.bot_id, user["id"], user.get("language_code"))
