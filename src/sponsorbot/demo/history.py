"""A month of made-up history, written straight into the database in bulk.

People arrive with the rhythms of a real audience: more in the evening (Tehran time), more at
the Iranian weekend (Thursday and Friday), and a little more every week as the bots grow. Each
person opens content links a few times, and every visit is the funnel the live handlers write
(features/gate/visitor.py, chats.py): the open (`started`, naming the item), then either the
gate (`gate_shown`, listing the channels it asked for) or, with nothing missing, the pass and
the content at once. Shown the gate, most join the channels it listed within a minute or two
(`joined`, naming the item whose gate is open; `join_request` in join-request mode), press
"I've joined" and get the content (`gate_passed`, `content_sent`); some go away, a few after
joining part of the channels, and meet the gate again for the rest on their next visit. Some
leave a channel later and meet the gate again for it, a few block the bot. The events, people
and per-minute send counts are the same rows the handlers write, so the panel shows them as it
would show real traffic. A story the end of the history cuts stops there: nothing is written
after it.

While a sponsor campaign runs in a bot (a `Window`), its channel is in that bot's gate: people
meeting the gate then are shown it too, most join it through the campaign's invite link, and
their first joins are the campaign's credits; some of them leave it, inside the retention
window or after.

Each person's life in a bot is made from a random generator of its own, so the lives a campaign
that ended earlier would have changed can be made again alone (`again`, for
campaigns.make_history), and the others stay as they were.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import accumulate
from typing import Any

import asyncpg
import orjson

from sponsorbot.db.citus_schema import SEQUENTIAL
from sponsorbot.db.pool import on_citus
from sponsorbot.demo.names import person_names
from sponsorbot.demo.setup import ProductBot
from sponsorbot.demo.world import HISTORY_DAYS, PEOPLE_PER_DAY
from sponsorbot.features.stats import rollup

DAYS = HISTORY_DAYS
PERSIAN_SHARE = 0.65

# Relative traffic by local hour (0 to 23): quiet before dawn, peaking at 21:00.
HOURLY = (
    0.55, 0.35, 0.22, 0.15, 0.12, 0.12, 0.18, 0.3, 0.5, 0.65, 0.75, 0.85,
    0.95, 1.0, 0.95, 0.9, 0.95, 1.15, 1.45, 1.85, 2.25, 2.5, 2.2, 1.3,
)  # fmt: skip
HOURLY_CUMULATIVE = tuple(accumulate(HOURLY))
# By weekday, Monday first: Thursday and Friday are the weekend in Iran.
WEEKLY = (0.92, 0.9, 0.95, 1.0, 1.22, 1.32, 1.05)
LOCAL_OFFSET = timedelta(hours=3, minutes=30)

EVENT_MONTH = "SELECT sponsorbot_events_month($1)"
EVENT_COLUMNS = ("bot_id", "at", "kind", "user_id", "content_id", "chat_id", "data")
PEOPLE = """
INSERT INTO people (bot_id, user_id, first_seen, last_seen, language, blocked_at,
                    username, first_name, last_name)
SELECT $1, p.user_id, p.first_seen, p.last_seen, p.language, p.blocked_at,
       p.username, p.first_name, p.last_name
FROM unnest($2::bigint[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6::timestamptz[],
            $7::text[], $8::text[], $9::text[])
     AS p (user_id, first_seen, last_seen, language, blocked_at, username, first_name, last_name)
ON CONFLICT (bot_id, user_id) DO NOTHING
"""
USERNAMES = "SELECT username FROM people WHERE username IS NOT NULL"
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

# (at, kind, user, content, chat, data): data is written as JSON by `write`.
Event = tuple[datetime, str, int, int | None, int | None, dict[str, Any] | None]
# (user, first seen, last seen, language, blocked at, username, first name, last name)
Person = tuple[int, datetime, datetime, str, datetime | None, str | None, str, str | None]

UNKNOWN_CODE = 0.02  # an old or mistyped link
GIVE_UP = 0.28  # of those shown the gate: go away without pressing "I've joined"
GIVE_UP_PART_WAY = 0.3  # of those: after joining some of the channels
# The worker's turn: the gate (or the content) follows the open by about this much.
ANSWER_S = (0.3, 2.5)
JOIN_S = (6.0, 40.0)  # from the gate, or the last join, to the next join
PRESS_S = (3.0, 20.0)  # from the last join to "I've joined"
CHECKS = (1, 1, 1, 2, 2, 3)  # presses of "I've joined" until it let them through
LEAVE_GATE = 0.12  # once through, leave one of the bot's channels later (once)
LEAVE_GATE_HOURS = 60.0
BLOCK = 0.04
# Events the bot answered with one message each (the gate, "I've joined", the content, "no
# such link"), for the per-minute send counts.
SENDS_ONE = frozenset({"gate_shown", "gate_passed", "content_sent", "unknown_code"})
# Far longer than a visit lasts (from the open to the content: a few minutes at most).
LONGEST_VISIT = timedelta(hours=1)
# The reason a gate channel whose bot lost its rights gives (the visitor is let through).
LOST_REASON = "Bad Request: member list is inaccessible"

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


@dataclass(frozen=True, slots=True)
class CampaignLink:
    """The invite link of a campaign in the bot at hand, in a join's data until `write` knows
    it: the campaigns are made through the product while their history is made here."""

    campaign_id: int


@dataclass
class Credit:
    """A person's record in a campaign: their join through the gate of `bot_id`, and leaves."""

    campaign_id: int
    user: int
    bot_id: int
    joined_at: datetime
    leaves: list[datetime] = field(default_factory=list)


@dataclass
class Life:
    """One person's rows in one bot: made from their own random generator (the `n`th of the
    bot's), so a life can be made again alone (`again`)."""

    n: int
    person: Person
    events: list[Event]
    credits: list[Credit]


@dataclass
class BotHistory:
    """The rows made for one bot: its people's lives, in the order they came."""

    lives: list[Life] = field(default_factory=list)

    @property
    def credits(self) -> list[Credit]:
        """Every campaign credit of this bot's people."""
        return [c for life in self.lives for c in life.credits]

    @property
    def events(self) -> list[Event]:
        """Every event of this bot's people, person by person."""
        return [e for life in self.lives for e in life.events]


@dataclass
class _Standing:
    """One person in the channels of one bot's gate and campaigns."""

    # Per channel: when they joined it (or asked to, where a request counts), and left it.
    chats: dict[int, tuple[datetime, datetime | None]] = field(default_factory=dict)
    credited: set[int] = field(default_factory=set)  # campaigns they were credited to
    left_once: bool = False

    def inside(self, chat: int, at: datetime) -> bool:
        """Whether they are in the channel (or asked to join it) at `at`."""
        place = self.chats.get(chat)
        return place is not None and place[0] <= at and (place[1] is None or place[1] > at)


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
        hour = rng.choices(range(24), cum_weights=HOURLY_CUMULATIVE)[0]
        visits.append(local - LOCAL_OFFSET + timedelta(hours=hour, seconds=rng.uniform(0, 3600)))
    return visits


def _seconds(rng: random.Random, span: tuple[float, float]) -> timedelta:
    return timedelta(seconds=rng.uniform(*span))


def _generator(*parts: int) -> random.Random:
    """A random generator of its own for these (non-negative) numbers: a seed, a bot, a
    person's place among the bot's newcomers."""
    seed = 0
    for part in parts:
        seed = (seed << 64) | part
    return random.Random(seed)


class _Story:
    """The making of one bot's history until `end`, life by life."""

    def __init__(
        self,
        seed: int,
        bot: ProductBot,
        end: datetime,
        windows: tuple[Window, ...],
        usernames: set[str],
    ) -> None:
        self.seed = seed
        self.bot_id = bot.sim.id
        self.end = end
        # The life being made.
        self.events: list[Event] = []
        self.credits: list[Credit] = []
        self.codes = [c.id for c in bot.contents]
        self.popular = list(accumulate(1 / (i + 1) ** 0.8 for i in range(len(self.codes))))
        self.gate = bot.gate
        # A channel whose bot lost its rights (3 days ago) is let through since: its members
        # cannot be checked.
        self.lost = [chat for chat, _ in bot.gate if _lost(bot, chat)]
        self.lost_since = end - timedelta(days=3)
        self.checked = [(chat, counts) for chat, counts in bot.gate if chat not in self.lost]
        self.windows = [w for w in windows if bot.sim.id in w.bot_ids and w.start < end]
        self.usernames = usernames  # taken, in every bot: Telegram's are unique

    def person(self, n: int, user: int, first: datetime) -> Life:
        """The life of the bot's `n`th newcomer: their visits from `first` on, and maybe their
        block of the bot."""
        rng = _generator(self.seed, self.bot_id, n)
        self.events, self.credits = [], []
        language = "fa" if rng.random() < PERSIAN_SHARE else "en"
        names = person_names(rng, language, self.usernames)
        standing = _Standing()
        last = first
        for at in [first, *(v for v in _later_visits(rng, first) if v < self.end)]:
            last = self._visit(rng, user, at, standing)
        blocked: datetime | None = None
        if rng.random() < BLOCK:
            at = last + timedelta(hours=rng.uniform(1, 72))
            if at < self.end:
                blocked = at
        return Life(n, (user, first, last, language, blocked, *names), self.events, self.credits)

    def add(
        self,
        at: datetime,
        kind: str,
        user: int,
        content: int | None = None,
        chat: int | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        """One event of the life being made."""
        self.events.append((at, kind, user, content, chat, data))

    def _visit(self, rng: random.Random, user: int, at: datetime, standing: _Standing) -> datetime:
        """One open of a content link; when the person was last seen in it (their last /start
        or press of "I've joined")."""
        if rng.random() < UNKNOWN_CODE:
            self.add(at, "started", user)
            self.add(at, "unknown_code", user, data={"code": "old-link"})
            return at
        content = rng.choices(self.codes, cum_weights=self.popular)[0]
        self.add(at, "started", user, content)
        opened = at
        lost = at >= self.lost_since
        gate = self.checked if lost else self.gate
        # (channel, a request counts, the campaign it is in the gate for)
        missing: list[tuple[int, bool, Window | None]] = [
            (chat, counts, None) for chat, counts in gate if not standing.inside(chat, at)
        ]
        missing += [
            (w.chat_id, False, w)
            for w in self.windows
            if w.start <= at < w.until and not standing.inside(w.chat_id, at)
        ]
        at += _seconds(rng, ANSWER_S)
        if at >= self.end:
            return opened
        if lost:
            for chat in self.lost:
                self.add(at, "channel_unknown", user, chat=chat, data={"reason": LOST_REASON})
        if not missing:
            self._pass(user, content, at, 1)
            return at
        listed = [chat for chat, _, _ in missing]
        self.add(at, "gate_shown", user, content, data={"missing": listed})
        shown = at
        # Most join every channel listed, one after another, and press "I've joined"; some go
        # away instead, a few of them after joining part of the channels.
        roll = rng.random()
        joining = len(missing)
        if roll < GIVE_UP:
            joining = rng.randrange(len(missing)) if roll < GIVE_UP * GIVE_UP_PART_WAY else 0
        for i, (chat, counts, window) in enumerate(missing[:joining]):
            at += _seconds(rng, JOIN_S)
            if at >= self.end or (window is not None and at >= window.until):
                return shown  # the history ends, or the campaign leaves the gate, meanwhile
            # As the handlers write it: the first join (or request) at the open gate names
            # its item, the funnel's "joined" step, once per gate.
            gated = content if i == 0 else None
            if counts:
                self.add(at, "join_request", user, gated, chat)
                standing.chats[chat] = (at, None)
            elif window is None:
                self.add(at, "joined", user, gated, chat)
                standing.chats[chat] = (at, None)
            else:
                self._join_campaign(rng, user, gated, window, at, standing)
        at += _seconds(rng, PRESS_S)
        if joining < len(missing) or at >= self.end:
            return shown
        # The check that showed the gate, then each press of "I've joined".
        self._pass(user, content, at, 1 + rng.choice(CHECKS))
        if not standing.left_once:
            standing.left_once = True
            self._maybe_leave(rng, user, at, gate, standing)
        return at

    def _pass(self, user: int, content: int, at: datetime, checks: int) -> None:
        """Through the gate: the content follows at once."""
        self.add(at, "gate_passed", user, content, data={"checks": checks})
        self.add(at, "content_sent", user, content)

    def _maybe_leave(
        self,
        rng: random.Random,
        user: int,
        since: datetime,
        gate: list[tuple[int, bool]],
        standing: _Standing,
    ) -> None:
        """Some leave one of the bot's channels a few days after getting through its gate:
        their next link meets the gate again, for that channel."""
        if rng.random() >= LEAVE_GATE:
            return
        gone = since + timedelta(hours=rng.expovariate(1 / LEAVE_GATE_HOURS))
        # A join request is not a membership to leave; a lost channel tells the bot nothing.
        chats = [chat for chat, counts in gate if not counts and chat not in self.lost]
        if not chats or gone >= self.end:
            return
        chat = rng.choice(chats)
        self.add(gone, "left", user, chat=chat, data={"status": "left"})
        standing.chats[chat] = (standing.chats[chat][0], gone)

    def _join_campaign(
        self,
        rng: random.Random,
        user: int,
        content: int | None,
        window: Window,
        at: datetime,
        standing: _Standing,
    ) -> None:
        """A join of a campaign's channel through its link in the gate: credited the first
        time only (a re-join after a leave is not a second credit); a first join may be
        followed by a leave."""
        link = {"link": CampaignLink(window.campaign_id)}
        self.add(at, "joined", user, content, window.chat_id, link)
        if window.campaign_id in standing.credited:
            standing.chats[window.chat_id] = (at, None)
            return
        standing.credited.add(window.campaign_id)
        credit = Credit(window.campaign_id, user, self.bot_id, at)
        self.credits.append(credit)
        roll = rng.random()
        gone: datetime | None = None
        if roll < LEAVE_INSIDE:
            gone = at + window.retention * rng.uniform(0.02, 0.95)
        elif roll < LEAVE_INSIDE + LEAVE_AFTER:
            gone = at + window.retention + timedelta(days=rng.expovariate(1 / LATER_LEAVE_DAYS))
        if gone is not None and gone < self.end:
            self.add(gone, "left", user, chat=window.chat_id, data={"status": "left"})
            credit.leaves.append(gone)
        else:
            gone = None
        standing.chats[window.chat_id] = (at, gone)


def bot_history(
    seed: int,
    bot: ProductBot,
    start: datetime,
    end: datetime,
    people: int,
    usernames: set[str],
    windows: tuple[Window, ...] = (),
    ids: Iterator[int] | None = None,
) -> BotHistory:
    """The history of one bot between `start` and `end`, with about `people` newcomers, and
    the campaigns whose `windows` put their channel in this bot's gate. The newcomers take
    the `ids` given (people of the simulator), then made-up ones, and usernames not among
    `usernames` (those are added to it)."""
    story = _Story(seed, bot, end, windows, usernames)
    out = BotHistory()
    used: set[int] = set()
    rng = _generator(seed, bot.sim.id)
    for n, first in enumerate(arrivals(rng, start, end, people), start=1):
        user = next(ids, None) if ids is not None else None
        if user is None:
            user = rng.randint(100_000_000, 7_999_999_999)
        if user in used:
            continue
        used.add(user)
        out.lives.append(story.person(n, user, first))
    return out


def again(
    history: BotHistory,
    seed: int,
    bot: ProductBot,
    end: datetime,
    windows: tuple[Window, ...],
    changed: list[tuple[datetime, datetime]],
    usernames: set[str],
) -> None:
    """Make again, with these `windows`, the lives of a bot's `history` that met its gate
    while the gate was `changed` (from, until) from the windows it was made with; the others
    would come out the same, each from its own random generator. `usernames` are those taken
    in every bot."""
    story = _Story(seed, bot, end, windows, usernames)

    def touched(life: Life) -> bool:
        # A visit that began a little before a change may still be at the gate when it comes.
        return any(
            e[1] == "started" and a - LONGEST_VISIT <= e[0] < b
            for e in life.events
            for a, b in changed
        )

    for i, life in enumerate(history.lives):
        if touched(life):
            usernames.discard(life.person[5] or "")
            history.lives[i] = story.person(life.n, life.person[0], life.person[1])


def _lost(bot: ProductBot, chat_id: int) -> bool:
    return any(c.chat_id == chat_id and c.plan.loses_rights for c in bot.sim.channels)


def make(
    bots: list[ProductBot],
    start: datetime,
    end: datetime,
    seed: int,
    windows: tuple[Window, ...] = (),
    newcomers: bool = False,
    taken: frozenset[str] = frozenset(),
) -> list[tuple[int, BotHistory]]:
    """Make the history of every bot for [start, end), campaigns included (nothing written);
    with `newcomers`, its people are the simulator's people of each bot (a fresh demo's: a
    kept demo's later days bring people the simulator does not have), and their usernames are
    not those `taken` already. The same arguments make the same history."""
    days = (end - start).total_seconds() / 86_400
    made: list[tuple[int, BotHistory]] = []
    usernames = set(taken)
    for bot in bots:
        if not bot.contents:
            continue
        people = int(PEOPLE_PER_DAY * days * bot.sim.plan.share)
        ids = iter(bot.sim.newcomers) if newcomers else None
        story = bot_history(seed, bot, start, end, people, usernames, windows, ids)
        made.append((bot.sim.id, story))
    return made


def _json(
    links: Mapping[tuple[int, int], str], bot_id: int
) -> Callable[[dict[str, Any] | None], str | None]:
    """Event data of one bot as JSON text (binary COPY's jsonb takes text), a CampaignLink as
    the campaign's link in that bot."""

    def link(value: object) -> str:
        if isinstance(value, CampaignLink):
            return links[(value.campaign_id, bot_id)]
        raise TypeError(f"{type(value).__name__} is not JSON")

    def text(data: dict[str, Any] | None) -> str | None:
        if data is None:
            return None
        # A CampaignLink goes to `link`, not out as the dataclass it is.
        return orjson.dumps(data, default=link, option=orjson.OPT_PASSTHROUGH_DATACLASS).decode()

    return text


async def usernames(pool: asyncpg.Pool) -> frozenset[str]:
    """The usernames the demo's people have (a kept demo's): new people take others."""
    return frozenset(r["username"] for r in await pool.fetch(USERNAMES))


async def months(conn: asyncpg.Connection, start: datetime, end: datetime) -> None:
    """Give each month from `start` to `end` its own events partition rather than the default
    one (0007_events_by_month.sql), before `write`'s transaction. On a Citus cluster each is
    made in sequential mode: the function's move out of the default partition and the new
    partition (DDL on every node) would otherwise go over different connections of one
    transaction, which Citus cancels as a distributed deadlock."""
    citus = await on_citus(conn)
    month = start
    while True:
        async with conn.transaction():
            if citus:
                await conn.execute(SEQUENTIAL)
            await conn.execute(EVENT_MONTH, min(month, end))
        if month >= end:
            return
        month += timedelta(days=28)


async def write(
    conn: asyncpg.Connection,
    made: list[tuple[int, BotHistory]],
    start: datetime,
    end: datetime,
    links: Mapping[tuple[int, int], str],
) -> int:
    """Write histories made by `make` (the caller holds the transaction, and made the months'
    partitions first, `months`); the events written.
    `links` are the campaigns' invite links by (campaign id of the windows, bot id).

    `conn` must be a plain connection (no JSON codecs): the events go in by binary COPY.
    The statistics' roll-ups are rewound to `start` first, so these hours, past as they are,
    reach every chart as a running installation's would.
    """
    await rollup.rewind(conn, start)
    total = 0
    for bot_id, history in made:
        events = history.events
        text = _json(links, bot_id)
        records = [
            (bot_id, at, kind, user, content, chat, text(data))
            for at, kind, user, content, chat, data in events
        ]
        await conn.copy_records_to_table("events", records=records, columns=EVENT_COLUMNS)
        people = [life.person for life in history.lives]
        await conn.execute(PEOPLE, bot_id, *([p[i] for p in people] for i in range(8)))
        sends = Counter(e[0].replace(second=0, microsecond=0) for e in events if e[1] in SENDS_ONE)
        await conn.execute(SENDS, bot_id, list(sends), list(sends.values()))
        requests: dict[int, list[tuple[int, datetime]]] = {}
        for at, kind, user, _, chat, _ in events:
            if kind == "join_request" and chat is not None:
                requests.setdefault(chat, []).append((user, at))
        for chat, asked in requests.items():
            await conn.execute(REQUESTS, bot_id, chat, [u for u, _ in asked], [a for _, a in asked])
        total += len(records)
    return total
