"""The demo's broadcasts, on its biggest bot: one that finished, with a report (most reached,
a few had blocked the bot, one could not be reached at all), and one still sending, slowly,
so its progress bar moves while someone looks.

Both are created and sent through the owner API as an owner would, and the product really
sends them to the simulator: the history's people are people of the simulator who started the
bot (world.py), and so are the bot's older subscribers written here, who started it before the
month of history. The sending one goes to the Persian speakers, thousands of people, at what
the bot's limit (about 24 messages a second) leaves free after the live visitors' replies:
minutes. (The phone's person speaks English: what they see on the phone stays the gate's.)

The finished one goes to the English speakers seen in the last day, a few dozen, chosen before
the demo says it is ready (so never the phone's person); the other is scheduled a few seconds
later, so the first is sent first (a bot's broadcasts go out in the order their messages were
queued). Someone who blocks a bot is known to the product from then on (Telegram tells the
bot), so the people who blocked it are made to do so after the broadcast chose them and before
it reached them: the last few in its sending order, as soon as it has chosen (`block_late`).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import asyncpg

from sponsorbot.demo import history
from sponsorbot.demo.names import Names, person_names
from sponsorbot.demo.setup import ProductBot
from sponsorbot.features.stats import rollup
from sponsorbot.loadtest.scenario import OwnerApi
from sponsorbot.simulator.client import SimulatorClient, SimulatorError

log = logging.getLogger(__name__)

BOT = "cinema_vault_bot"
BLOCKERS = 3
# Someone in the bot's audience whom Telegram no longer knows ("chat not found"): below the
# simulator's ids, so no person of it.
UNREACHABLE = 99_000_001
CHOSEN_WITHIN_S = 60.0
# The sending one starts this long after the finished one: long enough for the finished one to
# choose everyone and queue them first, short enough that no one sees it waiting.
STARTS_AFTER = timedelta(seconds=5)

EARLIER = """
INSERT INTO people (bot_id, user_id, first_seen, last_seen, language, username, first_name,
                    last_name)
SELECT $1, p.user_id, p.first_seen, p.last_seen, p.language, p.username, p.first_name,
       p.last_name
FROM unnest($2::bigint[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6::text[],
            $7::text[], $8::text[])
     AS p (user_id, first_seen, last_seen, language, username, first_name, last_name)
ON CONFLICT (bot_id, user_id) DO NOTHING
"""
# The finished broadcast's last recipients in its sending order (by user id), not yet sent.
LATE = """
SELECT user_id FROM broadcast_recipients
WHERE broadcast_id = $1 AND status IN ('waiting', 'queued')
ORDER BY user_id DESC LIMIT $2
"""
CHOSEN = "SELECT chosen FROM broadcasts WHERE id = $1"


@dataclass(frozen=True)
class Made:
    """The two broadcasts' ids, and their bot's."""

    bot_id: int
    finished: int
    sending: int


def _post(text: str, buttons: list[list[dict[str, str]]], **media: Any) -> dict[str, Any]:
    return {
        "text": text,
        "media_kind": media.get("media_kind"),
        "file_id": media.get("file_id"),
        "buttons": buttons,
        "protect": False,
        "silent": False,
        "paid": False,
    }


def _audience(**filters: Any) -> dict[str, Any]:
    return {"active_days": None, "language": None, "campaign_id": None, "passed": False} | filters


def _link(bot: ProductBot, caption: str) -> str:
    """The content link of the bot's item with this caption."""
    n = [words for _, words in bot.sim.plan.contents].index(caption)
    return f"https://t.me/{bot.sim.plan.username}?start={bot.contents[n].code}"


def _file(bot: ProductBot, caption: str) -> str | None:
    n = [words for _, words in bot.sim.plan.contents].index(caption)
    return bot.sim.file_ids[n]


async def _write_earlier(pool: asyncpg.Pool, bot: ProductBot, now: datetime) -> None:
    """The older subscribers (first seen 5 weeks to a year ago, not since the month of history
    began), and the one the simulator does not know; their usernames are not the history's."""
    rng = random.Random(bot.sim.id)
    usernames = set(await history.usernames(pool))
    rows: list[tuple[int, datetime, datetime, str, *Names]] = []
    for user in bot.sim.earlier:
        seen = now - timedelta(days=rng.uniform(35, 365))
        last = min(seen + timedelta(days=rng.expovariate(1 / 5)), now - timedelta(days=31))
        language = "fa" if rng.random() < 0.65 else "en"
        rows.append((user, seen, last, language, *person_names(rng, language, usernames)))
    gone = now - timedelta(days=12), now - timedelta(hours=2)
    rows.append((UNREACHABLE, *gone, "en", *person_names(rng, "en", usernames)))
    async with pool.acquire() as conn, conn.transaction():
        # Past arrivals: the statistics fold their days again (see rollup.rewind).
        await rollup.rewind(conn, min(r[1] for r in rows))
        await conn.execute(EARLIER, bot.sim.id, *([r[i] for r in rows] for i in range(7)))


async def create(api: OwnerApi, pool: asyncpg.Pool, bots: list[ProductBot], now: datetime) -> Made:
    """Write the older subscribers, then create and send both broadcasts (a fresh demo, with
    its history written: the audiences are chosen from `people` when the product starts them).
    The finished one is sent now, the sending one a few seconds later (`STARTS_AFTER`)."""
    bot = next(b for b in bots if b.sim.plan.username == BOT)
    await _write_earlier(pool, bot, now)
    path = f"/bots/{bot.sim.id}/broadcasts"
    finished = await api.call(
        "POST",
        path,
        {
            "title": "English subtitles for the season finale",
            "post": _post(
                "The <b>English subtitles</b> for episodes 1 to 5 and the season finale are "
                "in the bot now.",
                [
                    [
                        {
                            "text": "Get the subtitles",
                            "url": _link(bot, "Subtitles (en), episodes 1-5"),
                        }
                    ]
                ],
            ),
            "audience": _audience(active_days=1, language="en"),
            "send": "now",
        },
    )
    sending = await api.call(
        "POST",
        path,
        {
            "title": "Season 3 trailer, for the Persian speakers",
            "post": _post(
                "<b>فصل سوم</b> از پنجشنبه ساعت ۲۰:۰۰ شروع می‌شود. اول تریلر را ببینید!",
                [[{"text": "▶ تماشای تریلر", "url": _link(bot, "Trailer, season 3")}]],
                media_kind="photo",
                file_id=_file(bot, "Poster, season 2"),
            ),
            "audience": _audience(language="fa"),
            "send": "schedule",
            "scheduled_at": (datetime.now(UTC) + STARTS_AFTER).isoformat(),
        },
    )
    return Made(bot.sim.id, int(finished["id"]), int(sending["id"]))


async def block_late(pool: asyncpg.Pool, sim: SimulatorClient, made: Made) -> None:
    """Once the finished broadcast has chosen its recipients, the last few of them block the
    bot, before it reaches them (it sends in user id order, a few dozen a second). A failure
    here costs the report its blocked people, not the demo: it is logged."""
    try:
        deadline = time.monotonic() + CHOSEN_WITHIN_S
        while not await pool.fetchval(CHOSEN, made.finished):
            if time.monotonic() > deadline:
                log.warning("the demo broadcast %s chose no one in time", made.finished)
                return
            await asyncio.sleep(0.1)
        for row in await pool.fetch(LATE, made.finished, BLOCKERS):
            await sim.block_bot(int(row["user_id"]), made.bot_id)
    except (SimulatorError, aiohttp.ClientError, asyncpg.PostgresError, OSError) as exc:
        log.warning("the demo broadcast's blocked people could not be made: %s", exc)
