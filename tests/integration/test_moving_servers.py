"""Moving to a new server in the safe order, as the guide tells it: stop the old api and
workers, take the final backup (`sponsorbot backup`'s code), copy it with the key, restore it
on the new server (`sponsorbot restore`'s code, into a database of its own), start there with
the same key. Everything is there and works: the bot tokens open, the campaign and the
visitors are kept, a shop order awaiting payment keeps its deadline through a round of the
jobs, and the owner signs in with two-step.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sponsorbot.engine.token_box import TokenBox
from sponsorbot.features.campaigns.service import Draft
from sponsorbot.ops.backup import make_backup
from sponsorbot.ops.backup_restore import restore
from tests.integration.panel_kit import Clock
from tests.integration.shopkit import add_order, shop
from tests.integration.twostepkit import (
    OFFLINE,
    keyed_panel,
    run_jobs,
    signs_in,
    turn_on_two_step,
)
from tests.kit import SECRET, make_settings

pytestmark = pytest.mark.slow

COUNTS = """
SELECT (SELECT count(*) FROM bots) AS bots, (SELECT count(*) FROM contents) AS contents,
       (SELECT count(*) FROM campaigns) AS campaigns, (SELECT count(*) FROM people) AS people,
       (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM shop_orders) AS orders
"""
ORDER = "SELECT state, expires_at, price_usdt, address, usdt_per_trx FROM shop_orders WHERE id = $1"
TOKENS = "SELECT id, token_enc FROM bots ORDER BY id"


async def _state(conn: asyncpg.Pool, order_id: int) -> dict[str, Any]:
    """What moves: the counts, the order waiting for its payment, the bots' tokens opened."""
    box = TokenBox(SECRET.encode())
    return {
        "counts": dict(await conn.fetchrow(COUNTS)),
        "order": dict(await conn.fetchrow(ORDER, order_id)),
        "tokens": {r["id"]: box.open(r["token_enc"]) for r in await conn.fetch(TOKENS)},
    }


async def test_moving_to_a_new_server_keeps_everything_working(
    pool: asyncpg.Pool, db_dsn: str, empty_dsn: str, tmp_path: Path
) -> None:
    clock = Clock()
    old, new = tmp_path / "old-server", tmp_path / "new-server"
    # The old server at work: a bot with a campaign and its visitors, a shop with an order
    # approved and waiting for its payment, an owner with two-step sign-in. Leaving each
    # block stops its api and workers: the first step of a move.
    async with shop(pool, db_dsn, old) as s:
        channel = "@" + s.channel["username"]
        await s.features.campaigns.create(
            Draft(name="Winter sponsor", channel=channel, bot_ids=(s.bot["id"],)), "test"
        )
        visitors = [await s.advertiser() for _ in range(2)]
        for person in visitors:
            await s.say(person, "/start")
            await s.wait_for(person, lambda _: True)
        material = {"text": "Visit Ada", "url": "https://ada.example"}
        order_id = await add_order(pool, s.bot["id"], "banner", visitors[0], material)
        await s.features.shop.approve(order_id, "owner")
    async with keyed_panel(pool, db_dsn, old, SECRET, clock) as panel:
        owner = await turn_on_two_step(panel)
    before = await _state(pool, order_id)
    assert before["counts"]["bots"] == 1 and before["counts"]["campaigns"] == 1
    assert before["counts"]["people"] >= 2 and before["order"]["state"] == "awaiting_payment"

    said: list[str] = []
    archive = old / "backups" / "final.tar"
    archive.parent.mkdir(parents=True)
    await make_backup(make_settings(db_dsn, OFFLINE["telegram_api"], old), archive, said.append)
    new.mkdir()
    copied = Path(shutil.copy(archive, new / archive.name))
    settings = make_settings(empty_dsn, OFFLINE["telegram_api"], new, **OFFLINE)
    await restore(settings, copied, False, said.append)
    assert said[-1] == "the secret key here opens the bot tokens", said

    moved = await asyncpg.create_pool(empty_dsn, min_size=1, max_size=5)
    try:
        async with keyed_panel(moved, empty_dsn, new, SECRET, clock) as panel:
            active = await panel.engine.bots.active()
            assert {b.info.id: b.token for b in active} == before["tokens"]
            # A round of the shop's runner (deadlines, expiry): its lease is short, so the
            # old server's, restored with the rest, is over in seconds.
            await run_jobs(panel.engine, "shop_runner")
            assert await _state(moved, order_id) == before
            assert await signs_in(panel, owner.email, None, owner.secret)
            assert await signs_in(panel, owner.email, owner.codes[0])
    finally:
        await moved.close()
