"""Fixtures shared by the integration tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from tests.integration.panel_kit import PanelApp, panel_app


@pytest.fixture
async def panel(pool: asyncpg.Pool, db_dsn: str, tmp_path: Path) -> AsyncIterator[PanelApp]:
    """The panel app over a fresh database and a simulated Telegram."""
    async with panel_app(pool, db_dsn, tmp_path) as app:
        yield app
