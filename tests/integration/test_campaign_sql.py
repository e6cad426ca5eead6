"""The crediting upserts and the figures in SQL agree with the rules in Python, for updates in
any order, twice, and through several bots at once."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

import asyncpg

from sponsorbot.features.campaigns import queries
from sponsorbot.features.campaigns.credit import JOIN, leave
from sponsorbot.features.campaigns.rules import Join, Leave, Member, apply, count

BOTS = (101, 102)
CHAT = -100555
LINKS = {101: "https://t.me/+link101", 102: "https://t.me/+link102"}
T0 = datetime(2026, 11, 1, tzinfo=UTC)
KNOWN = 1000  # users below this have opened the bots (a people row)


async def setup(pool: asyncpg.Pool, retention_h: int = 24) -> int:
    for bot in BOTS:
        await pool.execute(
            "INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path,"
            " webhook_secret_hash) VALUES ($1, $2, '\\x00', 'abcd', 'polling', $2, '\\x00')",
            bot,
            f"bot{bot}",
        )
    campaign_id: int = await pool.fetchval(
        "INSERT INTO campaigns (name, chat_id, chat_title, starts_at, retention, created_by)"
        " VALUES ('c', $1, 'Sponsor', $2, make_interval(hours => $3), 'test') RETURNING id",
        CHAT,
        T0 - timedelta(days=1),
        retention_h,
    )
    for bot, link in LINKS.items():
        await pool.execute(
            "INSERT INTO campaign_bots (campaign_id, bot_id, invite_link) VALUES ($1, $2, $3)",
            campaign_id,
            bot,
            link,
        )
        await pool.executemany(
            "INSERT INTO people (bot_id, user_id) VALUES ($1, $2)",
            [(bot, u) for u in range(1, KNOWN)],
        )
    return campaign_id


def random_updates(rnd: random.Random, user: int) -> list[tuple[str, int, datetime, str | None]]:
    """A few joins (through a link or not, via either bot) and leaves of one person."""
    out: list[tuple[str, int, datetime, str | None]] = []
    for _ in range(rnd.randint(1, 6)):
        at = T0 + timedelta(minutes=rnd.randint(0, 3000))
        bot = rnd.choice(BOTS)
        if rnd.random() < 0.6:
            link = rnd.choice([LINKS[bot], LINKS[bot], None, "https://t.me/+other..."])
            out.append(("join", bot, at, link))
        else:
            out.append(("leave", bot, at, None))
    return out


def as_rule(update: tuple[str, int, datetime, str | None], user: int) -> Join | Leave:
    kind, bot, at, link = update
    if kind == "leave":
        return Leave(at)
    return Join(at, bot, link == LINKS[bot] and user < KNOWN)


async def test_sql_and_rules_agree_in_any_order(pool: asyncpg.Pool) -> None:
    campaign_id = await setup(pool)
    rnd = random.Random(20261130)
    users = [*range(1, 300), *range(KNOWN + 1, KNOWN + 50)]
    expected: dict[int, Member] = {}
    work: list[tuple[int, tuple[str, int, datetime, str | None]]] = []
    for user in users:
        updates = random_updates(rnd, user)
        member = Member()
        for update in updates:
            member = apply(member, as_rule(update, user))
        expected[user] = member
        work += [(user, u) for u in updates] + [(user, u) for u in updates if rnd.random() < 0.3]
    rnd.shuffle(work)

    async def run(chunk: list[tuple[int, tuple[str, int, datetime, str | None]]]) -> None:
        async with pool.acquire() as conn:
            for user, (kind, bot, at, link) in chunk:
                if kind == "join":
                    await conn.execute(JOIN, bot, CHAT, user, at, link)
                else:
                    async with conn.transaction():
                        await leave(conn, bot, CHAT, user, at)

    # Four connections at once, as several workers would.
    await asyncio.gather(*(run(work[i::4]) for i in range(4)))
    rows = {r["user_id"]: r for r in await pool.fetch("SELECT * FROM campaign_members")}
    for user, member in expected.items():
        row = rows.get(user)
        if member == Member():
            continue
        assert row is not None, user
        assert row["gate_joined_at"] == member.gate_joined_at, user
        assert row["bot_id"] == member.bot_id, user
        assert row["outside_at"] == member.outside_at, user
        assert tuple(row["leaves"]) == member.leaves, user
        assert row["left_at"] == member.left_at, user
    for now in (T0, T0 + timedelta(hours=20), T0 + timedelta(days=3)):
        want = count(list(expected.values()), timedelta(hours=24), now)
        figures = await queries.figures(pool, [campaign_id], now, "UTC")
        assert figures[campaign_id][0] == want


async def test_nothing_is_credited_to_a_campaign_that_is_not_running(pool: asyncpg.Pool) -> None:
    campaign_id = await setup(pool)
    await pool.execute("UPDATE campaigns SET status = 'ended' WHERE id = $1", campaign_id)
    await pool.execute(JOIN, 101, CHAT, 5, T0, LINKS[101])
    async with pool.acquire() as conn:
        await leave(conn, 101, CHAT, 6, T0)
    assert await pool.fetchval("SELECT count(*) FROM campaign_members") == 0
    # A member the campaign already has still gets their leave recorded after it ended.
    await pool.execute("UPDATE campaigns SET status = 'running' WHERE id = $1", campaign_id)
    await pool.execute(JOIN, 101, CHAT, 5, T0, LINKS[101])
    await pool.execute("UPDATE campaigns SET status = 'ended' WHERE id = $1", campaign_id)
    async with pool.acquire() as conn:
        await leave(conn, 101, CHAT, 5, T0 + timedelta(hours=1))
    assert await pool.fetchval("SELECT left_at FROM campaign_members") == T0 + timedelta(hours=1)
