"""The daily digest: yesterday's visitors, passes, joins and revenue, each against the day
before, in the member's language, once a day after 09:00 in the workspace's time zone (after
their quiet hours, if those cover the morning). Read from the statistics' daily roll-ups and
the shop's credited transfers: the figures the Statistics page shows for the same days."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal

import asyncpg

from sponsorbot.engine import calls
from sponsorbot.engine.outbox import ENQUEUE
from sponsorbot.engine.unit import PRIORITY_LATER, call_arrays
from sponsorbot.features.accounts import workspace
from sponsorbot.features.accounts.permissions import allowed
from sponsorbot.features.alerts.deliver import after_quiet
from sponsorbot.features.alerts.kinds import DIGEST_PERMISSION
from sponsorbot.features.alerts.messages import amount
from sponsorbot.features.alerts.texts import isolate, team_text

SEND_AFTER_HOUR = 9
WHO = """
SELECT u.id, u.role, coalesce(u.language, w.default_language, 'en') AS language,
       l.via_bot, l.chat_id, p.quiet_from, p.quiet_to, p.digest_on
FROM alert_prefs p
JOIN users u ON u.id = p.user_id AND u.disabled_at IS NULL
JOIN team_links l ON l.user_id = p.user_id
JOIN bots b ON b.id = l.via_bot AND b.status = 'active'
LEFT JOIN workspace w ON w.id = 1
WHERE p.digest AND (p.digest_on IS NULL OR p.digest_on < $1)
FOR UPDATE OF p SKIP LOCKED
"""
# Each day's figures over every bot. The bot tables' sums are made apart, grouped by day, and
# joined to the days after: Citus cannot run a subquery over a distributed table per day.
FIGURES = """
WITH visits AS MATERIALIZED (
    SELECT v.day, count(DISTINCT v.user_id) AS n FROM stats_visits v
    WHERE v.bot_id IN (SELECT id FROM bots) AND v.day = ANY ($1::date[])
    GROUP BY v.day
), counts AS MATERIALIZED (
    SELECT s.day, sum(s.n) FILTER (WHERE s.kind = 'gate_passed') AS passes,
           sum(s.n) FILTER (WHERE s.kind = 'joined') AS joins
    FROM stats_days s
    WHERE s.bot_id IN (SELECT id FROM bots) AND s.day = ANY ($1::date[])
      AND s.kind IN ('gate_passed', 'joined')
    GROUP BY s.day
)
SELECT d.day, coalesce(v.n, 0) AS visitors, coalesce(c.passes, 0) AS passes,
       coalesce(c.joins, 0) AS joins,
       (SELECT coalesce(sum(t.credited_usdt), 0) FROM shop_transfers t
        WHERE t.state = 'credited' AND (coalesce(t.decided_at, t.seen_at) AT TIME ZONE $2)::date
              = d.day) AS revenue
FROM unnest($1::date[]) AS d (day)
LEFT JOIN visits v ON v.day = d.day
LEFT JOIN counts c ON c.day = d.day
"""
SENT = "UPDATE alert_prefs SET digest_on = $2 WHERE user_id = $1"


def delta(now: Decimal | int, before: Decimal | int, language: str) -> str:
    """A figure against the day before, in words."""
    if now == before:
        return team_text("same" if before else "no_before", language)
    change = Decimal(now) - Decimal(before)
    key = "up" if change > 0 else "down"
    return team_text(key, language, n=amount(abs(change)))


async def send_digests(conn: asyncpg.Connection, now: datetime) -> set[int]:
    """Queue today's digest for each member who asked for one and has not had it; the bots."""
    zone = await workspace.zone(conn)
    local = now.astimezone(zone)
    if local.hour < SEND_AFTER_HOUR:
        return set()
    today = local.date()
    members = await conn.fetch(WHO, today)
    if not members:
        return set()
    yesterday = today - timedelta(days=1)
    rows = {
        r["day"]: r
        for r in await conn.fetch(FIGURES, [yesterday, yesterday - timedelta(days=1)], str(zone))
    }
    woken: set[int] = set()
    for member in members:
        if not allowed(DIGEST_PERMISSION, member["role"]):
            continue
        if after_quiet(now, zone, member["quiet_from"], member["quiet_to"]) > now:
            continue  # in their quiet hours: the next look after them sends it
        text = _text(rows, yesterday, member["language"])
        out = calls.send_message(member["chat_id"], text, priority=PRIORITY_LATER)
        await conn.execute(ENQUEUE, member["via_bot"], None, *call_arrays([out]))
        await conn.execute(SENT, member["id"], today)
        woken.add(member["via_bot"])
    return woken


def _text(rows: dict[date, asyncpg.Record], day: date, language: str) -> str:
    now, before = rows[day], rows[day - timedelta(days=1)]
    values: dict[str, str] = {"day": isolate(day.isoformat(), language)}
    for name in ("visitors", "passes", "joins", "revenue"):
        values[name] = amount(now[name])
        values[f"{name}_delta"] = delta(now[name], before[name], language)
    return team_text("digest", language, raw=values)
