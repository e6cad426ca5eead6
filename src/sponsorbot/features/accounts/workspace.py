"""The workspace: its name, time zone and default language (one row)."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import asyncpg

DEFAULT: dict[str, Any] = {"name": "Sponsorbot", "time_zone": "UTC"}
LOAD = "SELECT name, time_zone, default_language FROM workspace WHERE id = 1"
ZONE = "SELECT time_zone FROM workspace WHERE id = 1"
SAVE = "UPDATE workspace SET name = $1, time_zone = $2, default_language = $3 WHERE id = 1"


async def load(pool: asyncpg.Pool) -> dict[str, Any]:
    """The workspace's settings (defaults before the first save)."""
    row = await pool.fetchrow(LOAD)
    return dict(row) if row else dict(DEFAULT)


async def save(pool: asyncpg.Pool, name: str, time_zone: str, default_language: str) -> None:
    """Change the workspace's settings."""
    await pool.execute(SAVE, name, time_zone, default_language)


async def zone(db: asyncpg.Pool | asyncpg.Connection) -> ZoneInfo:
    """The workspace's time zone (UTC before the first save)."""
    return ZoneInfo(await db.fetchval(ZONE) or "UTC")
