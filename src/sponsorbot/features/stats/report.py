"""What the statistics pages and the owner API read: counts over whole days in the
workspace's zone, per hour, per weekday and hour, and per content, channel and campaign.

Every query is two parts added together: the roll-ups (stats_days, stats_daily,
stats_hourly, stats_visits, stats_totals, and for long spans the monthly stats_monthly and
stats_week_hours, read as whole months less the days outside the span: months.py) for the
facts before `done_until`, and
`sponsorbot_stat_facts` from there on, so a figure is exact whether the job ran a minute ago
or is rebuilding after a zone change (then the zone's roll-ups are not used at all and
everything is counted from the facts).

A fold moves facts from the tail into the roll-ups in one transaction: each read runs in one
REPEATABLE READ snapshot that also reads how far the roll-ups go, so it sees the fold either
wholly or not at all, never the facts on both sides of it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import asyncpg

from sponsorbot.features.stats.facts import facts
from sponsorbot.features.stats.hours import Span, day_start
from sponsorbot.features.stats.months import cover
from sponsorbot.features.stats.rollup import VISITOR_KINDS

STATE = """
SELECT w.time_zone AS zone, r.zone AS rolled_zone, r.done_until, r.rebuilt_at
FROM workspace w, stats_rollup r WHERE w.id = 1 AND r.id = 1
"""
BOTS = "SELECT id, username FROM bots ORDER BY id"

# The range queries share $1 bots, $2 first day, $3 last day, $4 start, $5 end, $6 roll-ups
# usable, $7 done until: DAYS picks the rolled days, TAIL bounds the live tail's facts
# (fragments, not input).
DAYS = "$6::boolean AND day >= $2 AND day <= $3 AND bot_id = ANY ($1::bigint[])"
TAIL = ("greatest($4::timestamptz, $7::timestamptz)", "$5::timestamptz", "$1::bigint[]")
# The queries by the hour (and LIVE_VISITORS) share $1 bots, $2 start, $3 end, $4 usable,
# $5 done until.
HOUR_TAIL = ("greatest($2::timestamptz, $5::timestamptz)", "$3::timestamptz", "$1::bigint[]")
IS_VISIT = "user_id IS NOT NULL AND kind IN ({})".format(", ".join(f"'{k}'" for k in VISITOR_KINDS))

TOTALS = f"""
SELECT kind, sum(n)::bigint AS n FROM (
    SELECT kind, n FROM stats_days WHERE {DAYS}
    UNION ALL SELECT kind, n FROM {facts(*TAIL)}
) t GROUP BY kind
"""
# Distinct visitors = those of the rolled days (ROLLED_VISITORS) + those of the live tail not
# among them (LIVE_VISITORS: a few hundred people, each looked up by (bot, person) in
# stats_visits_by_user; $6 and $7 the span's first and last days). A person visited the rolled
# days [$2, $3] once for each of their visits there whose visit before was before $2: the first
# of them, so a sum over stats_returns counts each person once, without hashing anyone.
ROLLED_VISITORS = """
SELECT coalesce(sum(n), 0)::bigint FROM stats_returns
WHERE day >= $2 AND day <= $3 AND prev_day < $2 AND bot_id = ANY ($1::bigint[])
"""
LIVE_VISITORS = f"""
SELECT count(*) FROM (SELECT DISTINCT bot_id, user_id FROM {facts(*HOUR_TAIL)} WHERE {IS_VISIT}) l
WHERE NOT ($4::boolean AND EXISTS (
    SELECT 1 FROM stats_visits v
    WHERE v.bot_id = l.bot_id AND v.user_id = l.user_id AND v.day >= $6 AND v.day <= $7))
"""
CACHED = 512  # rolled visitor counts kept per process (one per bots, days and roll-up step)
BY_BOT = f"""
SELECT bot_id, kind, sum(n)::bigint AS n FROM (
    SELECT bot_id, kind, n FROM stats_days WHERE {DAYS}
    UNION ALL SELECT bot_id, kind, n FROM {facts(*TAIL)}
) t GROUP BY 1, 2
"""
VISITORS_BY_BOT = f"""
SELECT bot_id, count(*) AS n FROM (
    SELECT bot_id, user_id FROM stats_visits WHERE {DAYS}
    UNION SELECT bot_id, user_id FROM {facts(*TAIL)} WHERE {IS_VISIT}
) v GROUP BY 1
"""
# Like the queries by the hour, with $6 kinds, $7 the months read whole, and two runs of days
# added or taken away, [$8, $9] with $10 and [$11, $12] with $13 (1 or -1; months.Cover), each
# its own index range. A sum of rolled rows is 0 only where days taken away cancel it.
# ROLLED: the rolled rows of the bots and kinds, when the roll-ups are usable.
ROLLED = "$4::boolean AND bot_id = ANY ($1::bigint[]) AND kind = ANY ($6::text[])"
RUN_DAYS = """
    SELECT bot_id, kind, dim, {sign}::int * n FROM stats_daily
    WHERE {rolled} AND day >= {first}::date AND day <= {last}::date"""
BY_DIM = f"""
SELECT bot_id, kind, dim, sum(n)::bigint AS n FROM (
    SELECT bot_id, kind, dim, n FROM stats_monthly
    WHERE {ROLLED} AND month = ANY ($7::date[])
  UNION ALL{RUN_DAYS.format(rolled=ROLLED, first="$8", last="$9", sign="$10")}
  UNION ALL{RUN_DAYS.format(rolled=ROLLED, first="$11", last="$12", sign="$13")}
  UNION ALL
    SELECT bot_id, kind, dim, n FROM {facts(*HOUR_TAIL)} WHERE kind = ANY ($6::text[])
) t GROUP BY 1, 2, 3 HAVING sum(n) <> 0
"""
# $8 kinds, $9 zone.
DAILY = f"""
SELECT day, kind, sum(n)::bigint AS n FROM (
    SELECT day, kind, n FROM stats_days WHERE {DAYS} AND kind = ANY ($8::text[])
    UNION ALL SELECT (date_trunc('hour', at, $9) AT TIME ZONE $9)::date, kind, n
    FROM {facts(*TAIL)} WHERE kind = ANY ($8::text[])
) t GROUP BY 1, 2
"""
# $6 kinds, $7 zone.
HOURS = "$4::boolean AND hour >= $2 AND hour < $3 AND bot_id = ANY ($1::bigint[])"
HOURLY = f"""
SELECT bot_id, hour, kind, sum(n)::bigint AS n FROM (
    SELECT bot_id, hour, kind, n FROM stats_hourly WHERE {HOURS} AND kind = ANY ($6::text[])
    UNION ALL SELECT bot_id, date_trunc('hour', at, $7), kind, n
    FROM {facts(*HOUR_TAIL)} WHERE kind = ANY ($6::text[])
) t GROUP BY 1, 2, 3
"""
# Weekday (0 = Monday) and hour of the day on the workspace's clock: the months read whole
# ($8) from stats_week_hours, and the hours of at most two runs of days, [$9, $10) and
# [$12, $13), added or taken away ($11, $14: 1 or -1) from stats_hourly (months.Cover). Each
# run is its own range, so each is an index range scan (joined to a list of runs instead, the
# planner read every hour of the bots).
RUN_HOURS = """
    SELECT extract(isodow FROM hour AT TIME ZONE $7)::int - 1,
           extract(hour FROM hour AT TIME ZONE $7)::int, {sign}::int * n FROM stats_hourly
    WHERE {rolled} AND hour >= {start}::timestamptz AND hour < {end}::timestamptz"""
HEAT = f"""
SELECT weekday, hour, sum(n)::bigint AS n FROM (
    SELECT weekday::int, hour::int, n FROM stats_week_hours
    WHERE {ROLLED} AND month = ANY ($8::date[])
  UNION ALL{RUN_HOURS.format(rolled=ROLLED, start="$9", end="$10", sign="$11")}
  UNION ALL{RUN_HOURS.format(rolled=ROLLED, start="$12", end="$13", sign="$14")}
  UNION ALL
    SELECT extract(isodow FROM hour AT TIME ZONE $7)::int - 1,
           extract(hour FROM hour AT TIME ZONE $7)::int, n
    FROM (SELECT date_trunc('hour', at, $7) AS hour, n FROM {facts(*HOUR_TAIL)}
          WHERE kind = ANY ($6::text[])) f
) t GROUP BY 1, 2 HAVING sum(n) <> 0
"""
# All time, for one bot's content list: $1 bot, $2 content ids as text, $3 kinds, $4 where
# stats_totals stands (TOTALS_UNTIL, read first in the same snapshot: on Citus a coordinator
# table cannot be a subquery of a statement over a bot's shard).
TOTALS_UNTIL = "SELECT totals_until FROM stats_rollup WHERE id = 1"
LATE = ("coalesce($4::timestamptz, '-infinity')", "'infinity'", "ARRAY[$1::bigint]")
CONTENT_TOTALS = f"""
SELECT dim, kind, sum(n)::bigint AS n FROM (
    SELECT dim, kind, n FROM stats_totals
    WHERE bot_id = $1 AND kind = ANY ($3::text[]) AND dim = ANY ($2::text[])
  UNION ALL
    SELECT dim, kind, n FROM {facts(*LATE)}
    WHERE kind = ANY ($3::text[]) AND dim = ANY ($2::text[])
) t GROUP BY 1, 2
"""
# A readable title for an item: its caption, else the text or caption or file name of its
# first part (a page falls back on its kind and code when there is none of these).
CONTENT_NAMES = """
SELECT id, bot_id, code, kind, caption,
       coalesce(nullif(btrim(caption), ''), nullif(btrim(items -> 0 ->> 'text'), ''),
                nullif(btrim(items -> 0 ->> 'caption'), ''),
                nullif(btrim(items -> 0 ->> 'file_name'), '')) AS title
FROM contents WHERE id = ANY ($1::bigint[])
"""
TITLE_CHARS = 80
CHANNEL_NAMES = """
SELECT bot_id, chat_id, title, username FROM channels WHERE bot_id = ANY ($1::bigint[])
"""
# Campaigns touching [$2, $3): running in it, or losing credits in it (a leave inside the
# retention window may come after the end).
CAMPAIGNS = """
SELECT c.id, c.name, c.chat_id, c.chat_title, c.status, c.starts_at,
       array_agg(cb.bot_id) AS bots
FROM campaigns c JOIN campaign_bots cb ON cb.campaign_id = c.id
WHERE cb.bot_id = ANY ($1::bigint[]) AND c.starts_at < $3
  AND (c.ends_at IS NULL OR c.ends_at + c.retention >= $2)
GROUP BY c.id ORDER BY c.starts_at DESC
"""
# A campaign's credited joins in [$2, $3), and the leaves in it that cost a credit (inside the
# retention window): what its own page and the sponsor's report count, from the same rows. Each
# is a range of the joins' index: a leave that costs a credit came less than the retention after
# its join. $1 campaigns, $4 bots.
CAMPAIGN_MEMBERS = """
SELECT m.campaign_id, count(*) AS joined, 0 AS left
FROM campaign_members m
WHERE m.campaign_id = ANY ($1::bigint[]) AND m.gate_joined_at >= $2 AND m.gate_joined_at < $3
  AND m.bot_id = ANY ($4::bigint[])
GROUP BY 1
UNION ALL
SELECT c.id, 0, count(*)
FROM campaigns c JOIN campaign_members m
  ON m.campaign_id = c.id AND m.gate_joined_at > $2::timestamptz - c.retention
     AND m.gate_joined_at < $3
WHERE c.id = ANY ($1::bigint[]) AND m.left_at >= $2 AND m.left_at < $3
  AND m.left_at < m.gate_joined_at + c.retention AND m.bot_id = ANY ($4::bigint[])
GROUP BY 1
"""
# The same counts for whole days [$2, $3] from stats_campaign_days (days the job counted), and
# the campaigns whose retention changed since (counted from campaign_members instead).
CAMPAIGNS_UNTIL = "SELECT campaigns_until FROM stats_rollup WHERE id = 1"
CAMPAIGN_DAYS = """
SELECT campaign_id, sum(joined)::bigint AS joined, sum("left")::bigint AS left
FROM stats_campaign_days
WHERE campaign_id = ANY ($1::bigint[]) AND day >= $2 AND day <= $3 AND bot_id = ANY ($4::bigint[])
GROUP BY 1
"""
CAMPAIGNS_RETAINED = """
SELECT DISTINCT d.campaign_id FROM stats_campaign_days d JOIN campaigns c ON c.id = d.campaign_id
WHERE d.campaign_id = ANY ($1::bigint[]) AND d.retention <> c.retention
"""

# Before any fact: the roll-ups are not used, everything is counted from the facts.
NEVER = datetime(1970, 1, 1, tzinfo=UTC)

CONTENT_KINDS = [
    "started",
    "gate_shown",
    "gate_joined",
    "gate_cleared",
    "gate_passed",
    "content_sent",
]
CHANNEL_KINDS = ["gate_listed", "joined", "join_request", "left"]
CAMPAIGN_KINDS = ["gate_listed"]


@dataclass(frozen=True, slots=True)
class Scope:
    """What a page counts: some bots, some whole days, on the workspace's clock."""

    bots: list[int]
    span: Span
    zone: str
    usable: bool  # the roll-ups are in this zone (not rebuilding)
    done: datetime  # the roll-ups hold every fact before this
    # When the roll-ups were last rebuilt or rewound: with `done`, names what they hold.
    rebuilt: datetime | None = None

    def previous(self) -> Scope:
        """The same bots over the span just before, at the same roll-up progress."""
        return replace(self, span=self.span.previous())

    def args(self) -> tuple[Any, ...]:
        """The parameters $1 to $7 the range queries share."""
        start, end = self.span.bounds(self.zone)
        return (self.bots, self.span.first, self.span.last, start, end, self.usable, self.done)

    def by_dim_args(self, kinds: list[str]) -> tuple[Any, ...]:
        """The parameters of BY_DIM: the bots, the span's bounds, the roll-up's progress,
        the kinds, and the span in months."""
        start, end = self.span.bounds(self.zone)
        months = cover(self.span)
        return (
            *(self.bots, start, end, self.usable, self.done, kinds),
            *(months.months, *months.day_runs()),
        )


def _title(text: str | None) -> str | None:
    """The first line of `text`, cut to TITLE_CHARS (None when there is no text)."""
    if not text:
        return None
    line = text.strip().splitlines()[0]
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def _usable(state: asyncpg.Record, zone: str) -> tuple[bool, datetime]:
    """Whether the roll-ups are in `zone`, and how far they go (NEVER when not usable)."""
    done = state["done_until"]
    usable = done is not None and state["rolled_zone"] == zone
    return usable, done if usable else NEVER


class Report:
    """The statistics pages' and API's read side."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._visitors: dict[tuple[Any, ...], int] = {}

    async def scope(self, bots: list[int] | None, span: Span) -> Scope:
        """A scope over `bots` (None: every bot) and `span`, with the roll-up's progress."""
        zone, usable, done = await self._progress()
        if bots is None:
            bots = [int(r["id"]) for r in await self.pool.fetch(BOTS)]
        return Scope(bots, span, zone, usable, done)

    async def _progress(self) -> tuple[str, bool, datetime]:
        """The workspace's zone, whether the roll-ups are in it, and how far they go."""
        state = await self.pool.fetchrow(STATE)
        zone = str(state["zone"])
        return (zone, *_usable(state, zone))

    @asynccontextmanager
    async def _read(self, scope: Scope) -> AsyncIterator[tuple[asyncpg.Connection, Scope]]:
        """A connection in a read-only REPEATABLE READ snapshot, and `scope` with the roll-up's
        progress as that snapshot sees it: the roll-ups and the tail read there never overlap
        (nor leave a gap), whatever the job folds meanwhile."""
        async with (
            self.pool.acquire() as conn,
            conn.transaction(isolation="repeatable_read", readonly=True),
        ):
            state = await conn.fetchrow(STATE)
            usable, done = _usable(state, scope.zone)
            yield conn, replace(scope, usable=usable, done=done, rebuilt=state["rebuilt_at"])

    async def zone(self) -> str:
        """The workspace's time zone."""
        return str((await self.pool.fetchrow(STATE))["zone"])

    async def totals(self, scope: Scope) -> dict[str, int]:
        """Every kind's count over the scope, plus `visitors` (distinct people) and
        `returning` (visitors not new in the span)."""
        async with self._read(scope) as (conn, scope):
            rows = await conn.fetch(TOTALS, *scope.args())
            totals = {str(r["kind"]): int(r["n"]) for r in rows}
            visitors = await self._rolled_visitors(conn, scope)
            start, end = scope.span.bounds(scope.zone)
            first, last = scope.span.first, scope.span.last
            args = (scope.bots, start, end, scope.usable, scope.done, first, last)
            visitors += int(await conn.fetchval(LIVE_VISITORS, *args))
        totals["visitors"] = visitors
        totals["returning"] = max(0, visitors - totals.get("visitor_new", 0))
        return totals

    async def _rolled_visitors(self, conn: asyncpg.Connection, scope: Scope) -> int:
        """Distinct visitors of the scope's rolled days: counted once per roll-up step (the
        hashing of a month of visits is most of a 30-day page's time), then remembered."""
        if not scope.usable:
            return 0
        key = (tuple(scope.bots), scope.span, scope.zone, scope.done, scope.rebuilt)
        if key not in self._visitors:
            n = int(await conn.fetchval(ROLLED_VISITORS, scope.bots, *scope.args()[1:3]))
            if len(self._visitors) >= CACHED:
                self._visitors.pop(next(iter(self._visitors)))
            self._visitors[key] = n
        return self._visitors[key]

    async def daily(self, scope: Scope, kinds: list[str]) -> dict[str, dict[date, int]]:
        """Per kind, its count on each day of the scope (days without any are left out)."""
        out: dict[str, dict[date, int]] = defaultdict(dict)
        async with self._read(scope) as (conn, scope):
            rows = await conn.fetch(DAILY, *scope.args(), kinds, scope.zone)
        for r in rows:
            out[str(r["kind"])][r["day"]] = int(r["n"])
        return dict(out)

    async def hourly(
        self, scope: Scope, start: datetime, end: datetime, kinds: list[str]
    ) -> dict[str, dict[datetime, int]]:
        """Per kind, its count in each hour (of the workspace's clock) from `start` to `end`."""
        out: dict[str, dict[datetime, int]] = defaultdict(lambda: defaultdict(int))
        for per_bot in (await self.hourly_by_bot(scope, start, end, kinds)).values():
            for kind, hours in per_bot.items():
                for hour, n in hours.items():
                    out[kind][hour] += n
        return {k: dict(v) for k, v in out.items()}

    async def hourly_by_bot(
        self, scope: Scope, start: datetime, end: datetime, kinds: list[str]
    ) -> dict[int, dict[str, dict[datetime, int]]]:
        """Per bot and kind, its count in each hour from `start` to `end`."""
        out: dict[int, dict[str, dict[datetime, int]]] = defaultdict(lambda: defaultdict(dict))
        async with self._read(scope) as (conn, scope):
            args = (scope.bots, start, end, scope.usable, scope.done, kinds, scope.zone)
            rows = await conn.fetch(HOURLY, *args)
        for r in rows:
            out[int(r["bot_id"])][str(r["kind"])][r["hour"]] = int(r["n"])
        return {b: dict(v) for b, v in out.items()}

    async def per_bot(self, scope: Scope) -> dict[int, dict[str, int]]:
        """Per bot: every kind's count over the scope, and `visitors`."""
        out: dict[int, dict[str, int]] = {b: {} for b in scope.bots}
        async with self._read(scope) as (conn, scope):
            kinds = await conn.fetch(BY_BOT, *scope.args())
            visitors = await conn.fetch(VISITORS_BY_BOT, *scope.args())
        for r in kinds:
            out.setdefault(int(r["bot_id"]), {})[str(r["kind"])] = int(r["n"])
        for r in visitors:
            out.setdefault(int(r["bot_id"]), {})["visitors"] = int(r["n"])
        return out

    async def heat(self, scope: Scope, kind: str = "started") -> dict[tuple[int, int], int]:
        """(weekday, hour) → count of `kind` over the scope, weekday 0 being Monday."""
        start, end = scope.span.bounds(scope.zone)
        months = cover(scope.span)
        async with self._read(scope) as (conn, scope):
            args = (scope.bots, start, end, scope.usable, scope.done, [kind], scope.zone)
            rows = await conn.fetch(HEAT, *args, months.months, *months.runs(scope.zone))
        return {(r["weekday"], r["hour"]): int(r["n"]) for r in rows}

    async def content_totals(self, bot_id: int, ids: list[int]) -> dict[int, dict[str, int]]:
        """Per content item of one bot, all time: opened, gated, joined, passed, delivered."""
        counts: dict[int, dict[str, int]] = {}
        async with (
            self.pool.acquire() as conn,
            conn.transaction(isolation="repeatable_read", readonly=True),
        ):
            until = await conn.fetchval(TOTALS_UNTIL)
            args = (bot_id, [str(i) for i in ids], CONTENT_KINDS, until)
            rows = await conn.fetch(CONTENT_TOTALS, *args)
        for r in rows:
            counts.setdefault(int(r["dim"]), {})[str(r["kind"])] = int(r["n"])
        return counts

    async def _by_dim(self, scope: Scope, kinds: list[str]) -> list[asyncpg.Record]:
        async with self._read(scope) as (conn, scope):
            return list(await conn.fetch(BY_DIM, *scope.by_dim_args(kinds)))

    async def content_funnel(self, scope: Scope) -> list[dict[str, Any]]:
        """Per content item: opened, gated, joined (while its gate was open), passed,
        delivered; busiest first."""
        rows: dict[int, dict[str, Any]] = {}
        for r in await self._by_dim(scope, CONTENT_KINDS):
            if not r["dim"]:
                continue
            item = rows.setdefault(int(r["dim"]), {k: 0 for k in CONTENT_KINDS})
            item[str(r["kind"])] += int(r["n"])
        names = await self.pool.fetch(CONTENT_NAMES, list(rows))
        for n in names:
            rows[int(n["id"])].update(
                bot_id=n["bot_id"],
                code=n["code"],
                caption=n["caption"],
                content_kind=n["kind"],
                title=_title(n["title"]),
            )
        out = [{"id": cid, **v} for cid, v in rows.items()]
        out.sort(key=lambda r: (-r["started"], -r["content_sent"], r["id"]))
        return out

    async def channel_funnel(self, scope: Scope) -> list[dict[str, Any]]:
        """Per (bot, channel): shown in a gate, joined, asked to join, left."""
        rows: dict[tuple[int, int], dict[str, Any]] = {}
        for r in await self._by_dim(scope, CHANNEL_KINDS):
            if not r["dim"]:
                continue
            key = (int(r["bot_id"]), int(r["dim"]))
            rows.setdefault(key, {k: 0 for k in CHANNEL_KINDS})[str(r["kind"])] += int(r["n"])
        titles = {
            (int(c["bot_id"]), int(c["chat_id"])): c
            for c in await self.pool.fetch(CHANNEL_NAMES, scope.bots)
        }
        out = []
        for (bot_id, chat_id), v in rows.items():
            known = titles.get((bot_id, chat_id))
            out.append(
                {
                    "bot_id": bot_id,
                    "chat_id": chat_id,
                    "title": known["title"] if known else str(chat_id),
                    "username": known["username"] if known else None,
                    **v,
                }
            )
        out.sort(key=lambda r: (-r["gate_listed"], -r["joined"], r["chat_id"]))
        return out

    async def campaign_funnel(self, scope: Scope) -> list[dict[str, Any]]:
        """Per campaign touching the scope: times its channel was shown in the gates of its
        bots, its credited joins, and the leaves that cost a credit, in the span."""
        start, end = scope.span.bounds(scope.zone)
        async with self._read(scope) as (conn, scope):
            campaigns = await conn.fetch(CAMPAIGNS, scope.bots, start, end)
            if not campaigns:
                return []
            counts = await conn.fetch(BY_DIM, *scope.by_dim_args(CAMPAIGN_KINDS))
            ids = [int(c["id"]) for c in campaigns]
            members = await self._campaign_members(conn, scope, ids)
        out = []
        for c in campaigns:
            bots = set(c["bots"])
            shown = sum(
                int(r["n"])
                for r in counts
                if r["kind"] == "gate_listed"
                and r["bot_id"] in bots
                and r["dim"] == str(c["chat_id"])
            )
            mine = members.get(int(c["id"]), (0, 0))
            out.append(
                {
                    "id": c["id"],
                    "name": c["name"],
                    "chat_title": c["chat_title"],
                    "status": c["status"],
                    "gate_listed": shown,
                    "campaign_joined": mine[0],
                    "left": mine[1],
                }
            )
        return out

    async def _campaign_members(
        self, conn: asyncpg.Connection, scope: Scope, ids: list[int]
    ) -> dict[int, tuple[int, int]]:
        """Per campaign: its credited joins and the leaves that cost a credit in the span; the
        days the job counted from stats_campaign_days, the others from campaign_members."""
        start, end = scope.span.bounds(scope.zone)
        counted = await conn.fetchval(CAMPAIGNS_UNTIL) if scope.usable else None
        out: dict[int, tuple[int, int]] = {}

        def add(rows: list[asyncpg.Record]) -> None:
            for r in rows:
                joined, left = out.get(int(r["campaign_id"]), (0, 0))
                out[int(r["campaign_id"])] = (joined + int(r["joined"]), left + int(r["left"]))

        if counted is None or counted <= scope.span.first:
            add(await conn.fetch(CAMPAIGN_MEMBERS, ids, start, end, scope.bots))
            return out
        retained = {int(r["campaign_id"]) for r in await conn.fetch(CAMPAIGNS_RETAINED, ids)}
        whole = [i for i in ids if i not in retained]
        if retained:
            add(await conn.fetch(CAMPAIGN_MEMBERS, sorted(retained), start, end, scope.bots))
        last = min(scope.span.last, counted - timedelta(days=1))
        add(await conn.fetch(CAMPAIGN_DAYS, whole, scope.span.first, last, scope.bots))
        if counted <= scope.span.last:
            tail = day_start(counted, scope.zone)
            add(await conn.fetch(CAMPAIGN_MEMBERS, whole, tail, end, scope.bots))
        return out
