"""The bots service answers typed, frozen bots, and the owner API shows them field for field."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import asyncpg
import httpx
import pytest

from sponsorbot.db.database import Database
from sponsorbot.features.accounts.api_tokens import TokenService
from sponsorbot.features.all import install
from sponsorbot.features.bots.service import Bot, BotsService
from sponsorbot.web.app import create_app
from tests.kit import make_settings, running_engine, serving, simulated_telegram


async def test_bots_are_frozen_results_without_their_token_and_the_api_shows_them(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with simulated_telegram() as tg:
        settings = make_settings(db_dsn, tg.url, tmp_path)
        async with running_engine(settings, pool, db_dsn, worker=False) as run:
            features = install(run.engine)
            bots = features.get(BotsService)
            made = await tg.sim.create_bot("typed_bot")
            added = await bots.add(made["token"], "polling")
            assert isinstance(added, Bot)
            assert (added.username, added.mode, added.status) == ("typed_bot", "polling", "active")
            assert added.token_tail == made["token"][-4:]
            assert made["token"] not in repr(added)
            with pytest.raises(dataclasses.FrozenInstanceError):
                added.status = "paused"  # type: ignore[misc]

            paused = await bots.pause(added.id)
            assert paused.status == "paused" and await bots.get(added.id) == paused
            assert await bots.all() == [paused]

            app = create_app(settings, Database(db_dsn, pool, None), features)
            _, token = await features.get(TokenService).create("test", "owner")
            async with (
                serving(app) as url,
                httpx.AsyncClient(
                    base_url=url, headers={"Authorization": f"Bearer {token}"}
                ) as http,
            ):
                shown = (await http.get(f"/api/v1/bots/{added.id}")).json()
            assert shown.pop("storage_chat_id") is None
            expected = dataclasses.asdict(paused)
            assert shown.keys() == expected.keys()
            assert {k: shown[k] for k in ("id", "username", "mode", "status", "token_tail")} == {
                k: expected[k] for k in ("id", "username", "mode", "status", "token_tail")
            }
