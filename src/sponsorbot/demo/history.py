"""A month of made-up history, written straight into the database in bulk.

People arrive with the rhythms of a real audience: more in the evening (Tehran time), more at
the Iranian weekend (Thursday and Friday), and a little more every week as the bots grow. Each
person opens content links a few times; the first time they meet the gate, most join the
channels (or ask to, in join-request mode) and get the content, some leave a channel later and
meet the gate again, a few block the bot. The events, people and per-minute send counts are the
same rows the handlers write, so the panel shows them as it would show real traffic.

While a sponsor campaign runs in a bot (a `Window`), its channel is in that bot's gate: people
meeting the gate then are shown it too (returning people who passed the gate before meet it
for the campaign's channel alone), most join it, and their joins are the campaign's credits;
some of them leave it, inside the retention window or after.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import asyncpg
import orjson

from sponsorbot.demo.setup import ProductBot
from sponsorbot.demo.world import HISTORY_DAYS, PEOPLE_PER_DAY

DAYS = HISTORY_DAYS
PERSIAN_SHARE = 0.65

# Relative traffic by local hour (0 to 23): quiet before dawn, peaking at 21:00.
HOURLY = (
    0.55, 0.35, 0.22, 0.15, 0.12, 0.12, 0.18, 0.3, 0.5, 0.65, 0.75, 0.85,
    0.95, 1.0, 0.95, 0.9, 0.95, 1.15, 1.45, 1.85, 2.25, 2.5, 2.2, 1.3,
)  # fmt: skip
# By weekday, Monday first: Thursday and Friday are the weekend in Iran.
WEEKLY = (0.92, 0.9, 0.95, 1.0, 1.22, 1.32, 1.05)
LOCAL_OFFSET = timedelta(hours=3, minutes=30)

EVENT_MONTH = "SELECT sponsorbot_events_month($1)"
EVENT_COLUMNS = ("bot_id", "at", "kind", "user_id", "content_id", "chat_id", "data")
PEOPLE = """
INSERT INTO people (bot_id, user_id, first_seen, last_seen, language, blocked_at)
SELECT $1, p.user_id, p.first_seen, p.last_seen, p.language, p.blocked_at
FROM unnest($2::bigint[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6::timestamptz[])
     AS p (user_id, first_seen, last_seen, language, blocked_at)
ON CONFLICT (bot_id, user_id) DO NOTHING
"""
SENDS = """
INSERT INTO send_stats (bot_id, minute, sent)
SELECT $1, s.minute, s.sent FROM unnest($2::timestamptz[], $3::integer[]) AS s (minute, sent)
ON CONFLICT (bot_id, minute) DO UPDATE SET sent = send_stats.sent + excluded.sent
"""
REQUESTS = """
INSERT INTO join_requests (bot_id, chat_id, user_id, requested_at, updated_at)
SELECT $1, $2, r.user_id, r.at, r.at FROM unnest($3::bigint[], $4::timestamptz[]) AS r (user_id, at)
ON CONFLICT DO NOTHING
"""

Event = tuple[datetime, str, int, int | None, int | None, str | None]

# Of those who join a campaign's channel: some leave inside the retention window (not kept),
# some later (kept, then gone), the rest stay.
LEAVE_INSIDE = 0.14
LEAVE_AFTER = 0.12
LATER_LEAVE_DAYS = 4.0


@dataclass(frozen=True)
class Window:
    """A campaign's time in the gates of some bots: its channel is there from `start` to
    `until`."""

    campaign_id: int
    chat_id: int
    bot_ids: frozenset[int]
    start: datetime
    until: datetime
    retention: timedelta


@dataclass
class Credit:
    """A person's record in a campaign: their join through the gate of `bot_id`, and leaves."""

    campaign_id: int
    user: int
    bot_id: int
    joined_at: datetime
    leaves: list[datetime] = field(default_factory=list)


@dataclass
class BotHistory:
    """The rows made for one bot."""

    events: list[Event] = field(default_factory=list)
    people: list[tuple[int, datetime, datetime, str, datetime | None]] = field(default_factory=list)
    sends: Counter[datetime] = field(default_factory=Counter)
    requests: dict[int, list[tuple[int, datetime]]] = field(default_factory=dict)
    credits: list[Credit] = field(default_factory=list)

    def add(
        self,
        at: datetime,
        kind: str,
        user: int,
        content: int | None = None,
        chat: int | None = None,
        data: dict[str, Any] | None = None,
        sends: int = 0,
    ) -> None:
        """One event, and the messages the bot sent for it."""
        # JSON text: the events go in by binary COPY, whose jsonb takes text.
        self.events.append(
            (at, kind, user, content, chat, orjson.dumps(data).decode() if data else None)
        )
        if sends:
            self.sends[at.replace(second=0, microsecond=0)] += sends


def _weights(start: datetime, hours: int) -> list[float]:
    weights = []
    for h in range(hours):
        local = start + timedelta(hours=h) + LOCAL_OFFSET
        growth = 0.75 + 0.45 * h / max(1, hours)  # the audience grows through the month
        weights.append(HOURLY[local.hour] * WEEKLY[local.weekday()] * growth)
    return weights


def arrivals(rng: random.Random, start: datetime, end: datetime, count: int) -> list[datetime]:
    """`count` moments in [start, end) that follow the daily and weekly rhythm, sorted."""
    hours = max(1, int((end - start).total_seconds() // 3600))
    picked = rng.choices(range(hours), weights=_weights(start, hours), k=count)
    moments = []
    for h in picked:
        at = start + timedelta(hours=h, seconds=rng.uniform(0, 3600))
        moments.append(min(at, end - timedelta(seconds=1)))
    return sorted(moments)


def _later_visits(rng: random.Random, first: datetime) -> list[datetime]:
    """Later visits of one person: a few, days apart, at the hours people are about."""
    visits: list[datetime] = []
    day = first
    while rng.random() < 0.5 and len(visits) < 7:
        day += timedelta(days=1 + int(rng.expovariate(1 / 2.5)))
        local = (day + LOCAL_OFFSET).replace(hour=0, minute=0, second=0, microsecond=0)
        hour = rng.choices(range(24), weights=HOURLY)[0]
        visits.append(local - LOCAL_OFFSET + timedelta(hours=hour, seconds=rng.uniform(0, 3600)))
    return visits


def bot_history(
    rng: random.Random,
    bot: ProductBot,
    start: datetime,
    end: datetime,
    people: int,
    windows: tuple[Window, ...] = (),
    ids: Iterator[int] | None = None,
) -> BotHistory:
    """The history of one bot between `start` and `end`, with about `people` newcomers, and
    the campaigns whose `windows` put their channel in this bot's gate. The newcomers take
    the `ids` given (people of the simulator), then made-up ones."""
    out = BotHistory()
    codes = [c.id for c in bot.contents]
    popular = [1 / (i + 1) ** 0.8 for i in range(len(codes))]
    checked = [(chat, counts) for chat, counts in bot.gate if not _lost(bot, chat)]
    lost = [chat for chat, _ in bot.gate if _lost(bot, chat)]
    lost_since = end - timedelta(days=3)
    mine = [w for w in windows if bot.sim.id in w.bot_ids and w.start < end]
    used: set[int] = set()
    for first in arrivals(rng, start, end, people):
        user = next(ids, None) if ids is not None else None
        if user is None:
            user = rng.randint(100_000_000, 7_999_999_999)
        if user in used:
            continue
        used.add(user)
        language = "fa" if rng.random() < PERSIAN_SHARE else "en"
        through = False
        blocked: datetime | None = None
        last = first
        # The person's place in each campaign's channel: (joined, left or None).
        inside: dict[int, tuple[datetime, datetime | None]] = {}
        visits = [first, *(v for v in _later_visits(rng, first) if v < end)]
        for at in visits:
            last = at
            out.add(at, "started", user)
            if rng.random() < 0.02:
                out.add(at, "unknown_code", user, data={"code": "old-link"}, sends=1)
                continue
            content = rng.choices(codes, weights=popular)[0]
            if lost and at >= lost_since:
                for chat in lost:
                    out.add(at, "channel_unknown", user, content, chat)
            due = [w for w in mine if w.start <= at < w.until and not _member(inside, w, at)]
            if through and not due:
                out.add(at, "gate_passed", user, content, data={"checks": 1})
                out.add(at, "content_sent", user, content, sends=1)
                continue
            missing = len(due) + (0 if through else len(checked))
            out.add(at, "gate_shown", user, content, data={"missing": missing}, sends=1)
            if rng.random() > 0.72:
                continue  # looked at the gate and went away
            at += timedelta(seconds=rng.uniform(15, 150))
            if not through:
                for chat, counts in checked:
                    if counts:
                        out.add(at, "join_request", user, chat=chat)
                        out.requests.setdefault(chat, []).append((user, at))
                    else:
                        out.add(at, "joined", user, chat=chat)
            for window in due:
                if at < window.until:  # else the campaign left the gate while they looked
                    _join_campaign(rng, out, window, bot.sim.id, user, at, end, inside)
            at += timedelta(seconds=rng.uniform(2, 20))
            checks = rng.choice((1, 1, 1, 2, 2, 3))
            out.add(at, "gate_passed", user, content, data={"checks": checks}, sends=1)
            out.add(at, "content_sent", user, content, sends=1)
            last = at
            if through:
                continue
            through = True
            if rng.random() < 0.12 and checked:
                gone = at + timedelta(hours=rng.expovariate(1 / 60))
                left = [c for c, counts in checked if not counts]
                if left and gone < end:
                    out.add(gone, "left", user, chat=rng.choice(left), data={"status": "left"})
                    through = False  # the next link meets the gate again
        if rng.random() < 0.04:
            at = last + timedelta(hours=rng.uniform(1, 72))
            if at < end:
                blocked = at
        out.people.append((user, first, last, language, blocked))
    return out


def _member(inside: dict[int, tuple[datetime, datetime | None]], w: Window, at: datetime) -> bool:
    """Whether the person is in the campaign's channel at `at`."""
    place = inside.get(w.campaign_id)
    return place is not None and (place[1] is None or place[1] > at)


def _join_campaign(
    rng: random.Random,
    out: BotHistory,
    window: Window,
    bot_id: int,
    user: int,
    at: datetime,
    end: datetime,
    inside: dict[int, tuple[datetime, datetime | None]],
) -> None:
    """A join of a campaign's channel through the gate: credited the first time only (a
    re-join after a leave is not a second credit); a first join may be followed by a leave."""
    out.add(at, "joined", user, chat=window.chat_id)
    if window.campaign_id in inside:
        inside[window.campaign_id] = (inside[window.campaign_id][0], None)
        return
    credit = Credit(window.campaign_id, user, bot_id, at)
    out.credits.append(credit)
    roll = rng.random()
    gone: datetime | None = None
    if roll < LEAVE_INSIDE:
        gone = at + window.retention * rng.uniform(0.02, 0.95)
    elif roll < LEAVE_INSIDE + LEAVE_AFTER:
        gone = at + window.retention + timedelta(days=rng.expovariate(1 / LATER_LEAVE_DAYS))
    if gone is not None and gone < end:
        out.add(gone, "left", user, chat=window.chat_id, data={"status": "left"})
        credit.leaves.append(gone)
    else:
        gone = None
    inside[window.campaign_id] = (at, gone)


def _lost(bot: ProductBot, chat_id: int) -> bool:
    return any(c.chat_id == chat_id and c.plan.loses_rights for c in bot.sim.channels)


def make(
    bots: list[ProductBot],
    start: datetime,
    end: datetime,
    seed: int,
    windows: tuple[Window, ...] = (),
    newcomers: bool = False,
) -> list[tuple[int, BotHistory]]:
    """Make the history of every bot for [start, end), campaigns included (nothing written);
    with `newcomers`, its people are the simulator's people of each bot (a fresh demo's: a
    kept demo's later days bring people the simulator does not have)."""
    rng = random.Random(seed)
    days = (end - start).total_seconds() / 86_400
    made: list[tuple[int, BotHistory]] = []
    for bot in bots:
        if not bot.contents:
            continue
        people = int(PEOPLE_PER_DAY * days * bot.sim.plan.share)
        ids = iter(bot.sim.newcomers) if newcomers else None
        made.append((bot.sim.id, bot_history(rng, bot, start, end, people, windows, ids)))
    return made


async def write(
    conn: asyncpg.Connection, made: list[tuple[int, BotHistory]], start: datetime, end: datetime
) -> int:
    """Write histories made by `make` (the caller holds the transaction); the events written.

    `conn` must be a plain connection (no JSON codecs): the events go in by binary COPY.
    """
    total = 0
    # A month's own partition rather than the default one (0007_events_by_month.sql).
    month = start
    while month < end:
        await conn.execute(EVENT_MONTH, month)
        month += timedelta(days=28)
    await conn.execute(EVENT_MONTH, end)
    for bot_id, history in made:
        ev = history.events
        await conn.copy_records_to_table(
            "events", records=[(bot_id, *e) for e in ev], columns=EVENT_COLUMNS
        )
        pp = history.people
        await conn.execute(
            PEOPLE,
            bot_id,
            [p[0] for p in pp],
            [p[1] for p in pp],
            [p[2] for p in pp],
            [p[3] for p in pp],
            [p[4] for p in pp],
        )
        await conn.execute(SENDS, bot_id, list(history.sends), list(history.sends.values()))
        for chat, requests in history.requests.items():
            users = [u for u, _ in requests]
            await conn.execute(REQUESTS, bot_id, chat, users, [a for _, a in requests])
        total += len(ev)
    return total
