"""The campaign funnel: whatever the roll-up job counted, and whatever retention the campaign
has now, its credited joins and costly leaves over any span of days equal campaign_members'.

Credited joins and leaves are written at random moments over a fortnight, the job counts the
days that ended `CAMPAIGN_LATE` before a random moment, the campaign's retention may change
after it did (and the job may or may not run again), and the page's figures are compared with
the count over campaign_members that the campaign's own page makes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sponsorbot.features.stats.hours import Span
from sponsorbot.features.stats.report import Report
from sponsorbot.features.stats.rollup import roll_up
from tests.examples import DEV_DATABASE, examples
from tests.integration.test_stats_rollup import BOTS, RESET, ZONE

START = datetime(2024, 11, 1, 9, tzinfo=UTC)
DAYS = 14
CAMPAIGN = """
INSERT INTO campaigns (name, chat_id, chat_title, starts_at, retention, created_by)
VALUES ('c', -1001, 'Channel', $1, make_interval(hours => $2), 'test') RETURNING id
"""
CAMPAIGN_BOTS = """
INSERT INTO campaign_bots (campaign_id, bot_id, invite_link)
SELECT $1, b, 'https://t.me/+x' || b FROM unnest($2::bigint[]) b
"""
MEMBERS = """
INSERT INTO campaign_members (campaign_id, user_id, bot_id, gate_joined_at, leaves)
SELECT $1, u, b, j, CASE WHEN l IS NULL THEN '{}' ELSE ARRAY[l] END
FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[], $5::timestamptz[]) AS m (u, b, j, l)
"""
RETAIN = "UPDATE campaigns SET retention = make_interval(hours => $2) WHERE id = $1"
CLEAR = "TRUNCATE campaigns CASCADE"
# What the campaign's own page counts over [$2, $3) for the bots $4 (one pass over its rows).
RAW = """
SELECT count(*) FILTER (WHERE m.gate_joined_at >= $2 AND m.gate_joined_at < $3) AS joined,
       count(*) FILTER (WHERE m.left_at >= $2 AND m.left_at < $3
                          AND m.left_at < m.gate_joined_at + c.retention) AS left
FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id
WHERE m.campaign_id = $1 AND m.gate_joined_at IS NOT NULL AND m.bot_id = ANY ($4::bigint[])
"""

members = st.lists(
    st.tuples(
        st.integers(1, 2),  # bot
        st.integers(0, DAYS * 24 * 60),  # joined, minutes after START
        st.one_of(st.none(), st.integers(1, 3 * 24 * 60)),  # left, minutes after the join
    ),
    max_size=40,
)


async def _write(
    pool: asyncpg.Pool, rows: list[tuple[int, int, int | None]], zone: str, retention: int
) -> int:
    """A campaign of bots 1 and 2 with these (bot, joined, left after) members; its id."""
    await pool.execute(RESET)
    await pool.execute(CLEAR)
    await pool.execute(BOTS)
    await pool.execute(ZONE, zone)
    campaign = await pool.fetchval(CAMPAIGN, START - timedelta(days=1), retention)
    await pool.execute(CAMPAIGN_BOTS, campaign, [1, 2])
    joins = {u: START + timedelta(minutes=j) for u, (_, j, _) in enumerate(rows)}
    await pool.execute(
        MEMBERS,
        campaign,
        list(joins),
        [b for b, _, _ in rows],
        list(joins.values()),
        [
            None if left is None else joins[u] + timedelta(minutes=left)
            for u, (*_, left) in enumerate(rows)
        ],
    )
    return int(campaign)


@settings(
    max_examples=examples(40, dev=DEV_DATABASE),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    rows=members,
    zone=st.sampled_from(["UTC", "Asia/Tehran", "America/New_York"]),
    retention=st.integers(1, 48),
    retained=st.one_of(st.none(), st.integers(1, 48)),
    again=st.booleans(),
    counted_to=st.integers(0, DAYS + 6),
    first=st.integers(-1, DAYS),
    days=st.integers(1, DAYS + 2),
    one_bot=st.booleans(),
)
async def test_the_campaign_funnel_equals_campaign_members(
    pool: asyncpg.Pool,
    rows: list[tuple[int, int, int | None]],
    zone: str,
    retention: int,
    retained: int | None,
    again: bool,
    counted_to: int,
    first: int,
    days: int,
    one_bot: bool,
) -> None:
    campaign = await _write(pool, rows, zone, retention)
    now = START + timedelta(days=counted_to)
    await roll_up(pool, now=now)
    if retained is not None:
        await pool.execute(RETAIN, campaign, retained)
        if again:
            await roll_up(pool, now=now)
    base = START.date() + timedelta(days=first)
    span = Span(base, base + timedelta(days=days - 1))
    bots = [1] if one_bot else [1, 2]
    report = Report(pool)
    scope = await report.scope(bots, span)
    start, end = span.bounds(zone)
    raw = await pool.fetchrow(RAW, campaign, start, end, bots)
    got = {c["id"]: c for c in await report.campaign_funnel(scope)}
    assert got[campaign]["campaign_joined"] == raw["joined"]
    assert got[campaign]["left"] == raw["left"]


async def test_every_span_of_dense_joins_and_leaves_equals_campaign_members(
    pool: asyncpg.Pool,
) -> None:
    """Joins every few hours, leaves after a few hours to two days, counted up to the middle,
    then the retention shortened: every span, before and after the job runs again."""
    rows = [
        (u % 2 + 1, u * 97 % (DAYS * 24 * 60), u * 211 % (2 * 24 * 60) or None) for u in range(200)
    ]
    campaign = await _write(pool, rows, "Asia/Tehran", 24)
    await roll_up(pool, now=START + timedelta(days=10))
    counted = await pool.fetchval("SELECT campaigns_until FROM stats_rollup")
    assert counted == START.date() + timedelta(days=7)
    assert await pool.fetchval('SELECT sum(joined) + sum("left") FROM stats_campaign_days')
    report = Report(pool)

    async def every_span() -> None:
        for a in range(-1, DAYS + 1, 2):
            for b in range(a, DAYS + 2, 3):
                first = START.date() + timedelta(days=a)
                span = Span(first, START.date() + timedelta(days=b))
                for bots in ([1], [1, 2]):
                    start, end = span.bounds("Asia/Tehran")
                    raw = await pool.fetchrow(RAW, campaign, start, end, bots)
                    got = await report.campaign_funnel(await report.scope(bots, span))
                    assert (got[0]["campaign_joined"], got[0]["left"]) == tuple(raw), span

    await every_span()
    await pool.execute(RETAIN, campaign, 5)
    await every_span()
    await roll_up(pool, now=START + timedelta(days=10))
    assert await pool.fetchval("SELECT DISTINCT retention FROM stats_campaign_days") == timedelta(
        hours=5
    )
    await every_span()
