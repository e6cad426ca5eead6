"""Every tap answered at a human's pace, and a script's taps bounded with one word: the gate on
the simulator, real PostgreSQL, the real engine worker and sender."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sponsorbot.engine.notify import Notifier
from sponsorbot.features.content.service import NewContent
from sponsorbot.features.gate import visitor as gate_visitor
from sponsorbot.features.texts import DEFAULTS, render
from tests.integration.gatekit import BOT, Gate, running_gate
from tests.kit import eventually

# Taps spaced on a (compressed) clock, waited out for real: the slow tier.
pytestmark = pytest.mark.slow

EPISODES = 30
# Time runs this much faster for the pace in the binge: 2 s between taps become 0.1 s, and the
# refill of one a second twenty a second, so the ratio of taps to tokens is the user's.
FASTER = 20
TAP_EVERY_S = 2.0 / FASTER
# The sender and the simulated Telegram let this many messages a second into one chat, so the
# thirty answers come in a few seconds rather than at Telegram's 1 a second.
PER_CHAT = 15
POLL_S = 0.02


@pytest.fixture
def quick_backlog(monkeypatch: pytest.MonkeyPatch) -> None:
    """One person's updates are handled one after another, and the worker claims the next of
    a backlog that arrived all at once on its poll (1-2 s), not on a wake-up: poll often."""
    monkeypatch.setattr(Notifier, "poll_interval", staticmethod(lambda: POLL_S))


async def settled(pool: asyncpg.Pool, messages: int) -> None:
    """Wait until these many messages are handled and every call queued for them went out."""

    async def done() -> bool:
        handled = await pool.fetchval(
            "SELECT count(*) FROM inbox WHERE kind = 'message' AND status = 'done'"
        )
        waiting = await pool.fetchval("SELECT count(*) FROM inbox WHERE status <> 'done'")
        unsent = await pool.fetchval("SELECT count(*) FROM outbox WHERE status <> 'sent'")
        return bool(handled == messages and waiting == 0 and unsent == 0)

    await eventually(done, timeout=60.0)


async def member(g: Gate, language: str) -> int:
    user = await g.visitor(language)
    for channel in g.channels:
        await g.tg.sim.join(user, channel["id"])
    return user


async def test_thirty_episodes_two_seconds_apart_all_arrive_once_in_order(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gate_visitor, "TAPS", gate_visitor.TAPS.faster(FASTER))
    async with running_gate(pool, db_dsn, tmp_path, channels=1, send_per_chat_per_s=PER_CHAT) as g:
        await g.tg.sim.set_limits(per_chat_per_second=PER_CHAT * 2)
        codes = []
        for n in range(1, EPISODES + 1):
            item = await g.features.contents.create(
                g.bot["id"],
                NewContent(
                    kind="text", items=[{"kind": "text", "text": f"Episode {n}"}], created_by="t"
                ),
            )
            codes.append(item["code"])
        user = await member(g, "en")
        started = time.monotonic()
        for i, code in enumerate(codes):
            await asyncio.sleep(max(0.0, started + i * TAP_EVERY_S - time.monotonic()))
            await g.tg.sim.open_link(user, BOT, code)
        await settled(pool, EPISODES)
        texts = [m["text"] for m in await g.bot_messages(user)]
        assert texts == [f"Episode {n}" for n in range(1, EPISODES + 1)]


@pytest.mark.usefixtures("quick_backlog")
async def test_a_script_opening_two_hundred_links_at_once_gets_a_bounded_number_and_one_word(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(pool, db_dsn, tmp_path, channels=1, send_per_chat_per_s=PER_CHAT) as g:
        await g.tg.sim.set_limits(per_chat_per_second=PER_CHAT * 2)
        user = await member(g, "fa")
        started = time.monotonic()
        await g.tg.sim.open_links([(user, BOT, g.content["code"])] * 200)

        async def handled() -> bool:
            done = await pool.fetchval(
                "SELECT count(*) FROM inbox WHERE kind = 'message' AND status = 'done'"
            )
            return bool(done == 200)

        await eventually(handled, timeout=60.0)
        # Every tap was paced between `started` and now, so within this many seconds.
        elapsed = time.monotonic() - started
        await settled(pool, 200)
        messages: list[dict[str, Any]] = await g.bot_messages(user)
        files = [m for m in messages if m["media"]]
        words = [m["text"] for m in messages if not m["media"]]
        taps = gate_visitor.TAPS
        assert taps.burst <= len(files) <= taps.bound(elapsed)
        assert elapsed < taps.notice_every_s  # else a second notice would be due
        assert words == [DEFAULTS["fa"]["slow_down"]]
        opened = await pool.fetchval("SELECT count(*) FROM events WHERE kind = 'content_sent'")
        assert opened == len(files)


@pytest.mark.usefixtures("quick_backlog")
async def test_a_second_message_soon_after_the_welcome_is_answered_once_more_then_not(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    async with running_gate(pool, db_dsn, tmp_path, channels=0) as g:
        user = await g.visitor("fa")
        for text in ("سلام", "/help", "hello?", "/start"):
            await g.tg.sim.send_text(user, BOT, text)
        await settled(pool, 4)
        texts = [m["text"] for m in await g.bot_messages(user)]
        assert texts == [render("welcome", "fa"), DEFAULTS["fa"]["welcome_again"]]
