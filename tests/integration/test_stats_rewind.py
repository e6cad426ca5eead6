"""Facts written late (for hours the roll-up job already folded) reach every figure: their
writer rewinds the roll-ups (rollup.rewind) and the job folds those days again. Whatever was
folded before, whatever is folded after, the figures of any span equal the raw facts, and the
content list's all-time counts hold each fact once."""

from __future__ import annotations

from datetime import timedelta

import asyncpg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsorbot.features.stats.facts import facts
from sponsorbot.features.stats.hours import Span
from sponsorbot.features.stats.report import Report
from sponsorbot.features.stats.rollup import rewind, roll_up
from tests.examples import DEV_DATABASE, examples
from tests.integration.test_stats_rollup import ORIGIN, RESET, ZONE, _check, _write, events

ALL_TIME = f"""
SELECT dim, kind, sum(n) AS n FROM {facts("'-infinity'", "'infinity'", "ARRAY[$1::bigint]")}
WHERE kind IN ('started', 'gate_shown', 'gate_passed', 'content_sent') AND dim <> ''
GROUP BY 1, 2
"""


async def _all_time_agrees(pool: asyncpg.Pool) -> None:
    for bot in (1, 2):
        expected: dict[int, dict[str, int]] = {}
        for r in await pool.fetch(ALL_TIME, bot):
            expected.setdefault(int(r["dim"]), {})[str(r["kind"])] = int(r["n"])
        assert await Report(pool).content_totals(bot, [1, 2, 3]) == expected


@settings(
    max_examples=examples(40, dev=DEV_DATABASE),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    first=events,
    late=events,
    zone=st.sampled_from(["UTC", "Asia/Tehran"]),
    folded=st.integers(0, 6 * 24),
    refolded=st.integers(0, 6 * 24),
    day=st.integers(0, 4),
    days=st.integers(1, 3),
)
async def test_late_facts_reach_every_figure_whatever_was_folded(
    pool: asyncpg.Pool,
    first: list[tuple[int, int, str, int, int]],
    late: list[tuple[int, int, str, int, int]],
    zone: str,
    folded: int,
    refolded: int,
    day: int,
    days: int,
) -> None:
    await pool.execute(RESET)
    await pool.execute(ZONE, zone)
    await _write(pool, first)
    await roll_up(pool, now=ORIGIN + timedelta(hours=folded))
    if late:
        async with pool.acquire() as conn, conn.transaction():
            await rewind(conn, ORIGIN + timedelta(minutes=min(m for _, m, *_ in late)))
        await _write(pool, late)
    base = ORIGIN.date() + timedelta(days=day)
    span = Span(base, base + timedelta(days=days - 1))
    await _check(pool, zone, span)  # before the job folds again: from the raw facts
    await _all_time_agrees(pool)
    await roll_up(pool, now=ORIGIN + timedelta(hours=refolded))
    await _check(pool, zone, span)
    await _all_time_agrees(pool)


async def test_without_a_rewind_late_facts_were_lost(pool: asyncpg.Pool) -> None:
    """What the rewind is for: facts dated before the job's progress are neither in the
    roll-ups nor in the live tail the pages add, until a rewind folds their days again."""
    await pool.execute(RESET)
    await _write(pool, [(1, 10, "started", 1, 1)])
    await roll_up(pool, now=ORIGIN + timedelta(days=2))
    await _write(pool, [(1, 20, "started", 2, 1)])
    report = Report(pool)
    span = Span(ORIGIN.date(), ORIGIN.date())
    assert (await report.totals(await report.scope(None, span)))["started"] == 1
    async with pool.acquire() as conn, conn.transaction():
        await rewind(conn, ORIGIN)
        await conn.execute(
            "INSERT INTO events (bot_id, at, kind, user_id) VALUES (1, $1, 'started', 3)",
            ORIGIN + timedelta(minutes=30),
        )
    assert (await report.totals(await report.scope(None, span)))["started"] == 3
    await roll_up(pool, now=ORIGIN + timedelta(days=2))
    assert (await report.totals(await report.scope(None, span)))["started"] == 3
