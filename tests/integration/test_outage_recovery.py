"""Back within seconds of Telegram's return: what waited out a backoff during an outage is
tried again as soon as Telegram answers (engine/recovery.py).

Every Bot API call answers 502 while visitors come; the backoff cap is a minute, so without
the recovery those who came early would wait up to that long after the outage. Timings come
from settings: the outage lasts seconds and Telegram's return is probed for every second.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.integration.gatekit import BOT, Gate, gate_of, members_and_strangers, running_gate
from tests.integration.test_retries import ANSWERING, has_file
from tests.kit import eventually

# Each waits out an outage of 12 s on timers: the slow tier.
pytestmark = pytest.mark.slow

OUTAGE_S = 12.0
CAP_S = 60.0
PROBE_S = 1.0
# Everyone is answered within this long of the outage's end: a fraction of the backoff cap
# (the probe's second, the claim, the handler and the send, on a busy machine).
BOUND_S = 5.0
SETTINGS: dict[str, Any] = {"retry_cap_s": CAP_S, "recovery_probe_s": PROBE_S}


async def come_during(g: Gate, people: list[int]) -> None:
    """The people open the link spread over the outage, the first at its start."""
    for visitor in people:
        await g.tg.sim.open_link(visitor, BOT, g.content["code"])
        await asyncio.sleep(OUTAGE_S * 0.6 / len(people))


async def answered_within(g: Gate, members: list[int], strangers: list[int]) -> None:
    """Members got the file and strangers the gate, each once, within BOUND_S from now."""
    done: set[int] = set()

    async def everyone() -> bool:
        for visitor in [*members, *strangers]:
            if visitor in done:
                continue
            messages = await g.bot_messages(visitor)
            answer = has_file(messages) if visitor in members else gate_of(messages) is not None
            if answer:
                done.add(visitor)
        return len(done) == len(members) + len(strangers)

    start = asyncio.get_running_loop().time()
    try:
        await eventually(everyone, timeout=BOUND_S)
    except AssertionError:
        waiting = len(members) + len(strangers) - len(done)
        message = f"{waiting} visitors unanswered {BOUND_S} s after the outage"
        raise AssertionError(message) from None
    took = asyncio.get_running_loop().time() - start
    print(f"everyone answered {took:.2f} s after the outage")
    for visitor in members:
        assert [m for m in await g.bot_messages(visitor) if m["media"]] != []
    for visitor in strangers:
        assert not has_file(await g.bot_messages(visitor))


async def test_a_sending_outage_ends_and_everyone_is_answered_within_seconds(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """Updates keep coming (as a webhook's do); every call that answers a visitor fails. The
    members' files wait in the sender, the strangers' updates in the inbox (their membership
    check failed): both are retried at once when Telegram answers again."""
    async with running_gate(pool, db_dsn, tmp_path, **SETTINGS) as g:
        members, strangers = await members_and_strangers(g, 10)
        for method in ANSWERING:
            await g.tg.sim.set_fault(method, error_rate=1.0, status=502)
        loop = asyncio.get_running_loop()
        ends = loop.time() + OUTAGE_S
        await come_during(g, [*strangers, *members])
        await asyncio.sleep(max(0.0, ends - loop.time()))
        # Those who came first wait out long delays by now: without the recovery, seconds
        # to a minute more.
        waiting = await pool.fetchval(
            "SELECT count(*) FROM inbox WHERE status = 'pending' AND error LIKE '%502%'"
        )
        assert waiting >= 1
        await g.tg.sim.clear_faults()
        await answered_within(g, members, strangers)
        assert await pool.fetchval("SELECT count(*) FROM inbox WHERE status = 'dead'") == 0
        assert await pool.fetchval("SELECT count(*) FROM outbox WHERE status = 'failed'") == 0


async def test_a_whole_outage_ends_and_everyone_is_answered_within_seconds(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """Every call fails, getUpdates too: the poller tries again at least every probe, so
    the updates sent during the outage arrive within seconds of its end, not a minute."""
    async with running_gate(pool, db_dsn, tmp_path, **SETTINGS) as g:
        members, strangers = await members_and_strangers(g, 6)
        await g.tg.sim.set_fault("*", error_rate=1.0, status=502)
        loop = asyncio.get_running_loop()
        ends = loop.time() + OUTAGE_S
        await come_during(g, [*strangers, *members])
        await asyncio.sleep(max(0.0, ends - loop.time()))
        # None of the visitors' updates came in during the outage.
        assert not await pool.fetchval("SELECT count(*) FROM inbox WHERE kind = 'message'")
        await g.tg.sim.clear_faults()
        await answered_within(g, members, strangers)
