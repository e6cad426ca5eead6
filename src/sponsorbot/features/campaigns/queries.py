"""Reading campaigns: rows, their figures, per-bot breakdowns and the hourly series.

The figures follow `rules.verdict` exactly: a credited join is kept once its retention window
has passed with no leave inside it, left when a leave came inside it, waiting otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from sponsorbot.features.campaigns.rules import Counts, Status
from sponsorbot.features.service import Record

CAMPAIGN_COLUMNS = """c.id, c.name, c.chat_id, c.chat_title, c.chat_username, c.join_requests,
    c.goal_joins, c.goal_kind, c.starts_at, c.ends_at, c.retention, c.position, c.status,
    c.status_at, c.report_token, c.created_by, c.created_at, c.updated_at"""
ONE = f"SELECT {CAMPAIGN_COLUMNS} FROM campaigns c WHERE c.id = $1"
BY_TOKEN = f"SELECT {CAMPAIGN_COLUMNS} FROM campaigns c WHERE c.report_token = $1"
LIVE = f"""
SELECT {CAMPAIGN_COLUMNS} FROM campaigns c WHERE c.status IN ('scheduled', 'running', 'paused')
"""
UNREVOKED = """
SELECT DISTINCT b.campaign_id FROM campaign_bots b JOIN campaigns c ON c.id = b.campaign_id
WHERE c.status IN ('reached', 'ended') AND b.revoked_at IS NULL
"""
PAGE = f"""
SELECT {CAMPAIGN_COLUMNS} FROM campaigns c
WHERE ($1::text IS NULL OR c.status = $1)
  AND ($2::bigint IS NULL OR EXISTS (
      SELECT 1 FROM campaign_bots b WHERE b.campaign_id = c.id AND b.bot_id = $2))
ORDER BY c.id DESC LIMIT $3 OFFSET $4
"""
TOTAL = """
SELECT count(*) FROM campaigns c
WHERE ($1::text IS NULL OR c.status = $1)
  AND ($2::bigint IS NULL OR EXISTS (
      SELECT 1 FROM campaign_bots b WHERE b.campaign_id = c.id AND b.bot_id = $2))
"""
LINKS = """
SELECT b.campaign_id, b.bot_id, bo.username, b.invite_link, b.revoked_at
FROM campaign_bots b JOIN bots bo ON bo.id = b.bot_id
WHERE b.campaign_id = ANY($1::bigint[])
ORDER BY b.campaign_id, b.bot_id
"""
# $1 campaigns, $2 now, $3 the zone "today" is in: the figures of several campaigns at once.
FIGURES = """
SELECT c.id,
    count(m.gate_joined_at) AS joins,
    count(*) FILTER (WHERE m.left_at < m.gate_joined_at + c.retention) AS left,
    count(*) FILTER (WHERE m.gate_joined_at + c.retention <= $2
                       AND (m.left_at IS NULL OR m.left_at >= m.gate_joined_at + c.retention))
        AS kept,
    count(*) FILTER (WHERE m.gate_joined_at IS NULL AND m.outside_at IS NOT NULL) AS outside_gate,
    count(*) FILTER (WHERE m.gate_joined_at >= date_trunc('day', $2::timestamptz, $3))
        AS joins_today
FROM campaigns c LEFT JOIN campaign_members m ON m.campaign_id = c.id
WHERE c.id = ANY($1::bigint[])
GROUP BY c.id
"""
BY_BOT = """
SELECT m.bot_id,
    count(*) AS joins,
    count(*) FILTER (WHERE m.left_at < m.gate_joined_at + c.retention) AS left,
    count(*) FILTER (WHERE m.gate_joined_at + c.retention <= $2
                       AND (m.left_at IS NULL OR m.left_at >= m.gate_joined_at + c.retention))
        AS kept
FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id
WHERE m.campaign_id = $1 AND m.gate_joined_at IS NOT NULL
GROUP BY m.bot_id
"""
# Joins (credited) and the leaves that cost a credit (inside the retention window, the
# campaign's "left") per hour of the zone $4, from $2 to $3.
HOURLY = """
SELECT s.hour, COALESCE(j.n, 0) AS joins, COALESCE(l.n, 0) AS leaves
FROM generate_series(date_trunc('hour', $2::timestamptz, $4), $3::timestamptz, interval '1 hour')
    AS s (hour)
LEFT JOIN (
    SELECT date_trunc('hour', gate_joined_at, $4) AS hour, count(*) AS n
    FROM campaign_members
    WHERE campaign_id = $1 AND gate_joined_at >= date_trunc('hour', $2::timestamptz, $4)
    GROUP BY 1
) j USING (hour)
LEFT JOIN (
    SELECT date_trunc('hour', m.left_at, $4) AS hour, count(*) AS n
    FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id
    WHERE m.campaign_id = $1 AND m.gate_joined_at IS NOT NULL
      AND m.left_at >= date_trunc('hour', $2::timestamptz, $4)
      AND m.left_at < m.gate_joined_at + c.retention
    GROUP BY 1
) l USING (hour)
ORDER BY s.hour
"""
MAX_HOURS = 24 * 62  # the chart's widest range, two months of hours


@dataclass(frozen=True, slots=True)
class CampaignLink(Record):
    """One bot of a campaign: its invite link and, on a campaign read whole, what came
    through it."""

    bot_id: int
    username: str
    invite_link: str
    revoked_at: datetime | None
    joins: int = 0
    kept: int = 0
    left: int = 0

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> CampaignLink:
        """A link from its row (with or without its counts)."""
        return cls(**cls.values_of(row))


@dataclass(frozen=True, slots=True)
class Campaign(Record):
    """A campaign as the owner reads it: what was set, where it stands, its figures (as in
    `rules.Counts`; `progress` in what its goal counts, `percent` of the goal), and its bots'
    links. `by_bot` is the links with their figures, on a campaign read whole."""

    id: int
    name: str
    chat_id: int
    chat_title: str
    chat_username: str | None
    join_requests: bool
    goal_joins: int | None
    goal_kind: str
    starts_at: datetime
    ends_at: datetime | None
    retention_hours: int
    position: str
    status: Status
    status_at: datetime
    report_token: str | None
    created_by: str
    created_at: datetime
    updated_at: datetime
    joins: int
    kept: int
    left: int
    waiting: int
    outside_gate: int
    joins_today: int
    progress: int
    percent: int | None
    links: tuple[CampaignLink, ...]
    by_bot: tuple[CampaignLink, ...] = ()

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Campaign:
        """A campaign from a row with its figures and links (`service.describe`)."""
        values = cls.values_of(row)
        values["status"] = Status(row["status"])
        values["links"] = tuple(CampaignLink.of(link) for link in row["links"])
        values["by_bot"] = tuple(CampaignLink.of(link) for link in row.get("by_bot", ()))
        return cls(**values)


def counts_of(row: asyncpg.Record | dict[str, Any] | None) -> Counts:
    """Counts from a FIGURES row (zeros for a campaign without members)."""
    if row is None:
        return Counts()
    joins, kept, left = int(row["joins"]), int(row["kept"]), int(row["left"])
    return Counts(
        joins=joins,
        kept=kept,
        left=left,
        waiting=joins - kept - left,
        outside_gate=int(row["outside_gate"]),
    )


async def figures(
    pool: asyncpg.Pool, ids: Sequence[int], now: datetime, zone: str
) -> dict[int, tuple[Counts, int]]:
    """Each campaign's counts at `now`, and its joins since the start of today in `zone`."""
    rows = await pool.fetch(FIGURES, list(ids), now, zone)
    return {int(r["id"]): (counts_of(r), int(r["joins_today"])) for r in rows}


async def links(pool: asyncpg.Pool, ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """Each campaign's bots and their invite links."""
    found: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    for r in await pool.fetch(LINKS, list(ids)):
        found[int(r["campaign_id"])].append(
            {
                "bot_id": r["bot_id"],
                "username": r["username"],
                "invite_link": r["invite_link"],
                "revoked_at": r["revoked_at"],
            }
        )
    return found


async def by_bot(pool: asyncpg.Pool, campaign_id: int, now: datetime) -> dict[int, Counts]:
    """Credited joins, kept and left per bot."""
    out: dict[int, Counts] = {}
    for r in await pool.fetch(BY_BOT, campaign_id, now):
        joins, kept, left = int(r["joins"]), int(r["kept"]), int(r["left"])
        out[int(r["bot_id"])] = Counts(joins, kept, left, joins - kept - left, 0)
    return out


@dataclass(frozen=True, slots=True)
class Hour(Record):
    """A campaign's joins and leaves in one hour of the workspace's zone (a day, on a chart
    that sums them by day)."""

    hour: datetime
    joins: int
    leaves: int


async def hourly(
    pool: asyncpg.Pool, campaign_id: int, since: datetime, until: datetime, zone: str = "UTC"
) -> list[Hour]:
    """Joins and leaves per hour of `zone` from `since` to `until` (the last MAX_HOURS)."""
    since = max(since, until - timedelta(hours=MAX_HOURS))
    rows = await pool.fetch(HOURLY, campaign_id, since, until, zone)
    return [Hour(r["hour"], int(r["joins"]), int(r["leaves"])) for r in rows]
