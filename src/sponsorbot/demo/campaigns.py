"""The demo's sponsor campaigns: one running over two bots, one that reached its goal, one
ended by its date, one paused.

All four are created through the owner API as an owner would (the channel checked live in each
bot, a real invite link per bot in the simulator), with their start a few weeks back; the
finished ones are ended through the API too, so their links are really revoked. The history
(`make_history`) then makes their joins through those links, and their leaves, from the gate's
own history, and `save` dates what the API did "now" back to when it happened in that story:
when the goal was reached, when the end date passed, when the owner paused. Goals are set from
the made-up figures so that each campaign's status agrees with them (the running one part of
the way, the reached one past it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from sponsorbot.demo import history
from sponsorbot.demo.history import BotHistory, Credit, Window
from sponsorbot.demo.setup import ProductBot
from sponsorbot.demo.world import World
from sponsorbot.features.campaigns.service import link_name
from sponsorbot.loadtest.scenario import OwnerApi
from sponsorbot.telegram import BotApi, TelegramError


@dataclass(frozen=True)
class CampaignPlan:
    """One demo campaign: its sponsor (world.SPONSORS), what became of it, and when."""

    name: str
    sponsor: str  # the channel's username
    status: str  # running, reached, ended or paused
    started_days_ago: float
    until_days_ago: float  # out of the gates since (reached: at the latest; running: 0)
    goal_kind: str = "kept"
    goal: int | None = None  # the reached campaign's goal; the others' follow their figures
    retention_hours: int = 24
    position: str = "first"
    ends_in_days: float | None = None  # the running campaign's end date, ahead


# Oldest first, so the ids follow the story (the panel lists the newest first).
PLANS: tuple[CampaignPlan, ...] = (
    CampaignPlan("Movie Night launch", "movie_night_fa", "reached", 27, 12, goal=600),
    CampaignPlan("Gadget Deals, November", "gadget_deals_ir", "ended", 22, 9, goal_kind="joins",
                 retention_hours=48, position="last"),
    CampaignPlan("English Daily: autumn network", "english_daily_pod", "running", 12, 0,
                 ends_in_days=9),
    CampaignPlan("Ashpazi Recipes", "ashpazi_recipes", "paused", 8, 2, position="last"),
)  # fmt: skip
# The running campaign's goal is set so that it is about this far along when the demo starts.
RUNNING_PROGRESS = 0.62

# Dates the API set to "now", moved back to when they happened in the made-up story; and
# "reached", which only the periodic job sets (the demo ended it through the API).
BACKDATE = """
UPDATE campaigns SET goal_joins = $2, ends_at = $3, status_at = $4, created_at = $5,
    updated_at = $4, status = $6
WHERE id = $1
"""
LINKS_REVOKED = "UPDATE campaign_bots SET revoked_at = $2 WHERE campaign_id = $1"
# Members, and their leaves as (campaign, person, when) beside them; left_at is the trigger's.
MEMBERS = """
WITH m AS (
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::timestamptz[])
        AS m (campaign_id, user_id, bot_id, joined_at)
), l AS (
    SELECT * FROM unnest($5::bigint[], $6::bigint[], $7::timestamptz[])
        AS l (campaign_id, user_id, at)
)
INSERT INTO campaign_members (campaign_id, user_id, bot_id, gate_joined_at, leaves)
SELECT m.campaign_id, m.user_id, m.bot_id, m.joined_at,
       COALESCE(array_agg(l.at ORDER BY l.at) FILTER (WHERE l.at IS NOT NULL), '{}')
FROM m LEFT JOIN l USING (campaign_id, user_id)
GROUP BY m.campaign_id, m.user_id, m.bot_id, m.joined_at
ON CONFLICT (campaign_id, user_id) DO NOTHING
"""
# A kept demo: the campaigns still in the gates, for the history of the days it was stopped.
RUNNING = """
SELECT c.id, c.chat_id, c.starts_at, c.retention, array_agg(b.bot_id) AS bot_ids
FROM campaigns c JOIN campaign_bots b ON b.campaign_id = c.id
WHERE c.status = 'running'
GROUP BY c.id
"""
# A kept demo meets a new simulated world, where the links of the old one do not exist.
OPEN_LINKS = """
SELECT b.campaign_id, b.bot_id, c.chat_id, c.name, c.join_requests
FROM campaign_bots b JOIN campaigns c ON c.id = b.campaign_id
WHERE b.revoked_at IS NULL
ORDER BY b.campaign_id, b.bot_id
"""
# The joins through the old link stay the campaign's: the statistics know a campaign's joins
# by its link (0012_stats.sql).
NEW_LINK = """
WITH old AS (
    SELECT invite_link FROM campaign_bots WHERE campaign_id = $1 AND bot_id = $2
), relinked AS (
    UPDATE events e SET data = jsonb_set(e.data, '{link}', to_jsonb($3::text))
    FROM old
    WHERE e.bot_id = $2 AND e.kind = 'joined' AND e.data ->> 'link' = old.invite_link
)
UPDATE campaign_bots SET invite_link = $3 WHERE campaign_id = $1 AND bot_id = $2
"""
LINKS = """
SELECT campaign_id, bot_id, invite_link FROM campaign_bots WHERE campaign_id = ANY($1::bigint[])
"""
REPORT = """
SELECT report_token FROM campaigns WHERE report_token IS NOT NULL
ORDER BY status = 'running' DESC, id
LIMIT 1
"""


@dataclass
class Made:
    """A demo campaign: its plan and its time in the gates. Until `create` has made it, the
    window's campaign id is the plan's place in PLANS, so the history can be made meanwhile."""

    plan: CampaignPlan
    window: Window


def planned(world: World, now: datetime) -> list[Made]:
    """The campaigns of PLANS, numbered by their place in it."""
    sponsors = {s.plan.username: s for s in world.sponsors}
    made = []
    for n, plan in enumerate(PLANS):
        sponsor = sponsors[plan.sponsor]
        window = Window(
            n,
            sponsor.chat_id,
            frozenset(sponsor.bot_ids),
            now - timedelta(days=plan.started_days_ago),
            now - timedelta(days=plan.until_days_ago),
            timedelta(hours=plan.retention_hours),
        )
        made.append(Made(plan, window))
    return made


async def create(api: OwnerApi, made: list[Made], now: datetime) -> list[int]:
    """Create the campaigns through the owner API, pause and end those that were; their ids.

    One after another, so the ids follow the story (the product makes each campaign's links
    one bot after another anyway)."""
    ids = []
    for campaign in made:
        plan, window = campaign.plan, campaign.window
        body: dict[str, Any] = {
            "name": plan.name,
            "channel": f"@{plan.sponsor}",
            "bot_ids": sorted(window.bot_ids),
            "goal_kind": plan.goal_kind,
            "starts_at": window.start.isoformat(),
            "retention_hours": plan.retention_hours,
            "position": plan.position,
        }
        if plan.ends_in_days is not None:
            body["ends_at"] = (now + timedelta(days=plan.ends_in_days)).isoformat()
        campaign_id = int((await api.call("POST", "/campaigns", body))["id"])
        if plan.status == "paused":
            await api.call("POST", f"/campaigns/{campaign_id}/pause", {})
        elif plan.status in ("reached", "ended"):
            await api.call("POST", f"/campaigns/{campaign_id}/end", {})
        ids.append(campaign_id)
    return ids


async def running(pool: asyncpg.Pool, since: datetime, now: datetime) -> list[Window]:
    """A kept demo's running campaigns, as windows from `since` to now."""
    return [
        Window(
            int(r["id"]),
            int(r["chat_id"]),
            frozenset(int(b) for b in r["bot_ids"]),
            max(since, r["starts_at"]),
            now,
            r["retention"],
        )
        for r in await pool.fetch(RUNNING)
    ]


def _credits(made: list[tuple[int, BotHistory]]) -> dict[int, dict[int, Credit]]:
    """Each campaign's credits by person (the earliest, should two bots have the same one)."""
    found: dict[int, dict[int, Credit]] = {}
    for _, story in made:
        for credit in story.credits:
            mine = found.setdefault(credit.campaign_id, {})
            known = mine.get(credit.user)
            if known is None or credit.joined_at < known.joined_at:
                mine[credit.user] = credit
    return found


def loose(made: list[tuple[int, BotHistory]]) -> list[Credit]:
    """Every credit of these histories, once per campaign and person (a kept demo's)."""
    return [c for mine in _credits(made).values() for c in mine.values()]


def _kept_at(credit: Credit, window: Window) -> datetime | None:
    """When this join became kept (its retention window passed without a leave), if ever."""
    deadline = credit.joined_at + window.retention
    if any(credit.joined_at <= gone < deadline for gone in credit.leaves):
        return None
    return deadline


def _progress(credits: list[Credit], plan: CampaignPlan, window: Window, at: datetime) -> int:
    if plan.goal_kind == "joins":
        return sum(c.joined_at <= at for c in credits)
    return sum(k is not None and k <= at for k in (_kept_at(c, window) for c in credits))


def _above(value: float, step: int = 50) -> int:
    """The next round number above `value`."""
    return (math.floor(value / step) + 1) * step


@dataclass
class Outcome:
    """What `settle` decided for one campaign."""

    made: Made
    goal: int
    status_at: datetime
    ends_at: datetime | None
    credits: list[Credit]


def settle(
    campaigns: list[Made], made: list[tuple[int, BotHistory]], now: datetime
) -> list[Outcome]:
    """Decide goals and dates from the made-up joins: the reached campaign's goal was met at
    `status_at`, when it left the gates (`make_history` makes its bots' history end it then)."""
    credits = _credits(made)
    outcomes = []
    for campaign in campaigns:
        plan, window = campaign.plan, campaign.window
        mine = sorted(credits.get(window.campaign_id, {}).values(), key=lambda c: c.joined_at)
        ends_at = None
        status_at = window.until
        if plan.status == "reached":
            goal = plan.goal or 1
            kept = sorted(k for k in (_kept_at(c, window) for c in mine) if k is not None)
            kept = [k for k in kept if k <= window.until]
            goal = max(1, min(goal, len(kept)))
            status_at = kept[goal - 1] if kept else window.start + window.retention
        elif plan.status == "running":
            progress = _progress(mine, plan, window, now)
            goal = max(_above(progress / RUNNING_PROGRESS), _above(progress))
            ends_at = now + timedelta(days=plan.ends_in_days or 30)
        else:
            # Ended by its date, or paused: the goal was not met, now or at the time.
            goal = _above(_progress(mine, plan, window, now) * 1.3)
            if plan.status == "ended":
                ends_at = window.until
        outcomes.append(Outcome(campaign, goal, status_at, ends_at, mine))
    return outcomes


def make_history(
    bots: list[ProductBot],
    since: datetime,
    now: datetime,
    seed: int,
    planned: list[Made],
    windows: list[Window],
    taken: frozenset[str] = frozenset(),
) -> tuple[list[tuple[int, BotHistory]], list[Outcome]]:
    """The history of [since, now) with the campaigns of `windows` in the gates, and what
    became of the `planned` ones (a fresh demo's, whose windows these are; a kept demo has none
    planned, and its people are not the simulator's).

    A campaign that reached its goal left the gates right then, which only its history tells:
    the lives that met its bots' gates from then to the end of its window are made again
    without it (history.again). Those before are the same, so the goal is met at the same
    moment.
    """
    made = history.make(bots, since, now, seed, tuple(windows), bool(planned), taken)
    outcomes = settle(planned, made, now)
    reached = {
        o.made.window.campaign_id: o.status_at
        for o in outcomes
        if o.made.plan.status == "reached" and o.status_at < o.made.window.until
    }
    if not reached:
        return made, outcomes
    cut = [
        replace(w, until=reached[w.campaign_id]) if w.campaign_id in reached else w for w in windows
    ]
    by_id = {b.sim.id: b for b in bots}
    usernames = set(taken)
    usernames.update(life.person[5] for _, story in made for life in story.lives if life.person[5])
    for bot_id, story in made:
        changed = [
            (reached[w.campaign_id], w.until)
            for w in windows
            if w.campaign_id in reached and bot_id in w.bot_ids
        ]
        if changed:
            history.again(story, seed, by_id[bot_id], now, tuple(cut), changed, usernames)
    windows_of = {w.campaign_id: w for w in cut}
    ended = [Made(m.plan, windows_of[m.window.campaign_id]) for m in planned]
    return made, settle(ended, made, now)


async def save(
    conn: asyncpg.Connection, outcomes: list[Outcome], ids: list[int], extra: list[Credit]
) -> int:
    """Write the campaigns' members and their dates (in the caller's transaction), the planned
    campaigns under the `ids` `create` gave them; the number of members written. `extra` are
    credits of a kept demo's running campaigns, under their own ids."""
    real = {o.made.window.campaign_id: ids[n] for n, o in enumerate(outcomes)}
    credits = [c for o in outcomes for c in o.credits] + extra
    campaign_ids = [real.get(c.campaign_id, c.campaign_id) for c in credits]
    pairs = zip(campaign_ids, credits, strict=True)
    leaves = [(i, c.user, at) for i, c in pairs for at in c.leaves]
    await conn.execute(
        MEMBERS,
        campaign_ids,
        [c.user for c in credits],
        [c.bot_id for c in credits],
        [c.joined_at for c in credits],
        [c for c, _, _ in leaves],
        [u for _, u, _ in leaves],
        [at for _, _, at in leaves],
    )
    for o, campaign_id in zip(outcomes, ids, strict=True):
        created = o.made.window.start - timedelta(hours=3)
        status = o.made.plan.status
        await conn.execute(BACKDATE, campaign_id, o.goal, o.ends_at, o.status_at, created, status)
        if status in ("reached", "ended"):
            await conn.execute(LINKS_REVOKED, campaign_id, o.status_at)
    return len(credits)


async def links(
    conn: asyncpg.Connection, windows: list[Window], ids: list[int]
) -> dict[tuple[int, int], str]:
    """The campaigns' invite links by (the campaign's id in `windows`, bot), for the joins the
    history makes through them: `ids` are the ids `create` gave the windows' campaigns, in
    order (none: a kept demo's windows carry the campaigns' own ids)."""
    planned = [w.campaign_id for w in windows]
    mine = dict(zip(ids or planned, planned, strict=True))  # real id → the windows' id
    rows = await conn.fetch(LINKS, list(mine))
    return {(mine[r["campaign_id"]], r["bot_id"]): r["invite_link"] for r in rows}


async def refresh_links(pool: asyncpg.Pool, world: World, telegram_url: str) -> int:
    """A kept demo: give the campaigns' open links to the new simulated world (made by each
    bot, as the product made the first ones); the number of links made."""
    tokens = {b.id: b.token for b in world.bots}
    rows = await pool.fetch(OPEN_LINKS)
    if not rows:
        return 0
    api = BotApi(telegram_url)
    try:
        for r in rows:
            bot = api.bot(tokens[int(r["bot_id"])])
            try:
                link = await bot.create_chat_invite_link(
                    r["chat_id"],
                    name=link_name(r["name"]),
                    creates_join_request=r["join_requests"] or None,
                )
            except TelegramError as exc:
                raise RuntimeError(f"a campaign's invite link could not be made: {exc}") from exc
            await pool.execute(NEW_LINK, r["campaign_id"], r["bot_id"], link["invite_link"])
    finally:
        await api.close()
    return len(rows)


async def report_token(pool: asyncpg.Pool) -> str | None:
    """The report token of the running campaign (else of the oldest with one)."""
    token = await pool.fetchval(REPORT)
    return str(token) if token else None
