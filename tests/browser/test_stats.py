"""Statistics and visitors in a real browser, over 75 days of three bots written straight
into the database in the shapes the gate's handlers write (opens, gates with the channels they
listed, joins, passes, deliveries, leaves, a sponsor campaign's joins, per-minute sends).

Statistics in English: the 30-day tab, a figure and its change against the period before, the
series chart (bars, time labels apart), a metric tab, one bot, custom dates and a range too
long, today by the hour, a CSV download. In Persian: right to left, Persian digits, Jalali
dates, the scale left of the bars, the week from Saturday. Visitors: search by the start of a
@username, by a Persian name and for nobody; one visitor's gate state and timeline, paged to
the end and back.

Three tests keep what an earlier version got wrong: the page scrolled sideways (a hidden data
table wider than the screen), the funnel and heat map were too small to read, and numbers in
the Persian page's sentences kept Latin digits.

Set SPONSORBOT_SCREENSHOTS=1 to also write stats-en, stats-fa, visitors-en and visitor-fa in
docs/screenshots/.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
import orjson
import pytest
from playwright.async_api import Browser, Page, ViewportSize

from sponsorbot.features.stats.hours import Span, local_day
from sponsorbot.features.stats.rollup import SETTLE
from tests.browser.kit import NEEDS_CHROMIUM, shot, sign_in
from tests.browser.test_panel import serve
from tests.integration.panel_kit import PASSWORD, add_member
from tests.kit import eventually

pytestmark = [
    pytest.mark.browser,
    NEEDS_CHROMIUM,
]

ZONE = "Asia/Tehran"
TEHRAN = ZoneInfo(ZONE)
# Days of history: the 30-day range, the 30 days it is compared with, and some before those,
# so that the earlier period has returning visitors too.
DAYS = 75
DESKTOP: ViewportSize = {"width": 1280, "height": 860}  # the other screenshots' viewport
PHONE: ViewportSize = {"width": 390, "height": 844}
PERSIAN_DIGITS = "۰۱۲۳۴۵۶۷۸۹"
TO_LATIN = str.maketrans(PERSIAN_DIGITS, "0123456789")
TO_PERSIAN = str.maketrans("0123456789", PERSIAN_DIGITS)

BOTS = {7101: "cinema_vault_bot", 7102: "study_notes_bot", 7103: "music_box_bot"}
PEOPLE = {7101: 260, 7102: 170, 7103: 110}
CHANNELS: dict[int, list[tuple[int, str, str | None]]] = {
    7101: [(-1001001, "Cinema Vault News", "cinema_vault_news"), (-1001002, "فیلم روز", None)],
    7102: [(-1002001, "Study Notes", "study_notes"), (-1002002, "باشگاه کنکور", "konkur_club")],
    7103: [(-1003001, "Music Box", "music_box_fm")],
}
CONTENTS = {
    7101: ["Episode 1: the pilot", "Episode 2: the storm", "قسمت سوم: بازگشت", "Season 2 trailer"],
    7102: ["Calculus notes, chapter 1", "جزوهٔ فیزیک", "Chemistry flash cards"],
    7103: ["Top 10 of the week", "آلبوم تازه", "Live at the hall"],
}
# A sponsor's channel, in the gates of two bots for two weeks of the month shown.
CAMPAIGN = ("Winter sponsor: Film Club", -1009001, "Film Club", (7101, 7102), 20, 6)
# Tehran's hours (more in the evening) and weekdays, Monday first (more at the weekend).
HOURLY = (5, 3, 2, 1, 1, 1, 2, 3, 5, 6, 7, 8, 9, 10, 9, 9, 9, 11, 14, 18, 22, 25, 22, 13)
WEEKLY = (0.9, 0.9, 0.95, 1.25, 1.3, 1.0, 0.95)
FA_FIRST = ("مریم", "علی", "زهرا", "رضا", "سارا", "حسین", "فاطمه", "محمد", "نگار", "امیر")
FA_LAST = ("احمدی", "کریمی", "محمدی", "حسینی", "رضایی", None)
EN_FIRST = ("Sara", "David", "Lena", "Omid", "Nika", "Reza", "Mina", "Tom")
EN_LAST = ("Smith", "Karimi", "Novak", None)
HANDLES = ("sara", "reza", "mina", "ali", "david", "nika", "omid", "lena")
# One visitor of two bots with a long timeline, at the gate again at the end.
BUSY = 990001
BUSY_BOT = 7101
BUSY_NAME = ("پریسا", "رحیمی", "parisa_rahimi")
SENDING = frozenset({"gate_shown", "gate_passed", "content_sent", "unknown_code"})

# Elements sticking out of the viewport's width that no scrolling box of theirs clips (the
# page itself would scroll sideways), as "tag.class left..right".
WIDER_THAN_VIEWPORT = """() => [...document.querySelectorAll("body *")]
  .filter((e) => {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || (r.right <= innerWidth + 1 && r.left >= -1)) return false;
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible") return false;
    }
    return true;
  })
  .map((e) => {
    const r = e.getBoundingClientRect();
    const name = e.tagName + "." + (e.className.baseVal ?? e.className);
    return name + " " + Math.round(r.left) + ".." + Math.round(r.right);
  })
  .slice(0, 8)"""
# Per chart, its smallest text as drawn on the page: the font size times the svg's scale.
SMALLEST_TEXT = """(selector) => [...document.querySelectorAll(selector)].map((svg) => {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const sizes = [...svg.querySelectorAll("text")]
    .map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
  return Math.round(Math.min(...sizes) * 10) / 10;
})"""
READABLE_PX = 9
# The main column's texts holding Latin digits, leaving out what is not the panel's own words:
# names, ids and titles (in <bdi>), and form fields.
LATIN_DIGITS = """() => {
  const main = document.querySelector("main").cloneNode(true);
  main.querySelectorAll("bdi, input, select, option").forEach((e) => e.remove());
  const found = [];
  const walk = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const text = walk.currentNode.textContent.trim();
    if (/[0-9]/.test(text)) found.push(text.slice(0, 80));
  }
  return found;
}"""
SCROLLS_SIDEWAYS = "() => document.scrollingElement.scrollWidth > innerWidth + 1"
# [left, right, top, bottom] of every element matching a selector, in page order.
BOXES = """(selector) => [...document.querySelectorAll(selector)].map((e) => {
  const r = e.getBoundingClientRect();
  return [r.left, r.right, r.top, r.bottom];
})"""

BOT = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, status, webhook_path,
                  webhook_secret_hash)
VALUES ($1, $2, '', 'xxxx', 'polling', 'paused', $2, '')
"""
# The roll-up has folded every hour that ended SETTLE ($1) before the last one, in the
# workspace's zone.
CAUGHT_UP = """
SELECT coalesce(r.done_until >= now() - $1::interval - interval '1 hour'
                AND r.zone = w.time_zone, false)
FROM stats_rollup r, workspace w WHERE r.id = 1 AND w.id = 1
"""
CHANNEL = """
INSERT INTO channels (bot_id, chat_id, title, username, chat_type)
VALUES ($1, $2, $3, $4, 'channel')
"""
CONTENT = """
INSERT INTO contents (bot_id, code, kind, items, caption, created_by, created_at)
VALUES ($1, $2, 'document', $3, $4, 'api:test', $5) RETURNING id
"""
CAMPAIGN_ROW = """
INSERT INTO campaigns (name, chat_id, chat_title, starts_at, ends_at, status, status_at,
                       created_by)
VALUES ($1, $2, $3, $4, $5, 'ended', $5, 'api:test') RETURNING id
"""
# Ended, its links revoked: the campaign job has nothing left to do with it.
CAMPAIGN_BOT = """
INSERT INTO campaign_bots (campaign_id, bot_id, invite_link, revoked_at) VALUES ($1, $2, $3, $4)
"""
EVENTS = """
INSERT INTO events (bot_id, at, kind, user_id, content_id, chat_id, data)
SELECT e.bot_id, e.at, e.kind, e.user_id, e.content_id, e.chat_id, e.data::jsonb
FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::bigint[], $5::bigint[],
            $6::bigint[], $7::text[]) AS e (bot_id, at, kind, user_id, content_id, chat_id, data)
"""
PEOPLE_ROWS = """
INSERT INTO people (bot_id, user_id, first_seen, last_seen, language, blocked_at, username,
                    first_name, last_name, gate_content_id, gate_ref, gate_checks)
SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[], $4::timestamptz[],
                     $5::text[], $6::timestamptz[], $7::text[], $8::text[], $9::text[],
                     $10::bigint[], $11::text[], $12::integer[])
"""
SENDS = """
INSERT INTO send_stats (bot_id, minute, sent, throttled)
SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::integer[], $4::integer[])
"""
MEMBERS = """
INSERT INTO campaign_members (campaign_id, user_id, bot_id, gate_joined_at, leaves)
SELECT $1, m.user_id, m.bot_id, m.at, CASE WHEN m.gone IS NULL THEN '{}' ELSE ARRAY[m.gone] END
FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[], $5::timestamptz[])
     AS m (user_id, bot_id, at, gone)
"""
# A visitor of the campaign's first bot whose whole timeline fits one page, through the gate.
TYPICAL = """
SELECT p.user_id, (SELECT count(*) FROM events e
                   WHERE e.bot_id = p.bot_id AND e.user_id = p.user_id) AS events
FROM people p JOIN campaign_members m ON m.user_id = p.user_id AND m.bot_id = p.bot_id
WHERE p.bot_id = $1 AND p.user_id <> $2 AND p.language = 'fa' AND p.gate_content_id IS NULL
  AND p.blocked_at IS NULL AND p.last_name IS NOT NULL
ORDER BY abs((SELECT count(*) FROM events e
              WHERE e.bot_id = p.bot_id AND e.user_id = p.user_id) - 14), p.user_id
LIMIT 1
"""
COUNT = """
SELECT count(*) FROM events
WHERE kind = $1 AND at >= $2 AND at < $3 AND ($4::bigint IS NULL OR bot_id = $4)
"""


@dataclass
class Person:
    """One visitor of one bot while their life is made: where they stand and their row."""

    bot_id: int
    user_id: int
    language: str
    username: str | None
    first_name: str
    last_name: str | None
    # Per channel: when they joined it and when they left it (None: still in).
    chats: dict[int, tuple[datetime, datetime | None]] = field(default_factory=dict)
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    gate: int | None = None  # the content whose gate they left open
    checks: int = 0
    blocked_at: datetime | None = None

    def inside(self, chat: int, at: datetime) -> bool:
        place = self.chats.get(chat)
        return place is not None and place[0] <= at and (place[1] is None or place[1] > at)


@dataclass
class Month:
    """The history written, and what the pages are checked against."""

    now: datetime
    campaign_id: int = 0
    campaign_window: tuple[datetime, datetime] = (datetime.min, datetime.min)
    links: dict[int, str] = field(default_factory=dict)
    contents: dict[int, list[int]] = field(default_factory=dict)
    events: list[tuple[int, datetime, str, int, int | None, int | None, Any]] = field(
        default_factory=list
    )
    people: list[Person] = field(default_factory=list)
    credits: dict[int, tuple[int, datetime, datetime | None]] = field(default_factory=dict)

    @property
    def end(self) -> datetime:
        # Everything settled a few minutes before the test starts.
        return self.now - timedelta(minutes=5)

    def add(
        self,
        person: Person,
        at: datetime,
        kind: str,
        content: int | None = None,
        chat: int | None = None,
        data: Any = None,
    ) -> None:
        self.events.append((person.bot_id, at, kind, person.user_id, content, chat, data))

    def gate_of(self, bot_id: int, at: datetime) -> list[int]:
        chats = [c for c, _, _ in CHANNELS[bot_id]]
        start, until = self.campaign_window
        if bot_id in CAMPAIGN[3] and start <= at < until:
            chats.append(CAMPAIGN[1])
        return chats

    def visit(self, rng: random.Random, p: Person, at: datetime, give_up: bool = False) -> None:
        """One open of a content link: the gate for the channels missing, joins, the pass."""
        p.first_seen = p.first_seen or at
        p.last_seen = at
        if not give_up and rng.random() < 0.02:
            self.add(p, at, "started")
            self.add(p, at, "unknown_code", data={"code": "old-link"})
            return
        content = rng.choice(self.contents[p.bot_id])
        self.add(p, at, "started", content)
        missing = [c for c in self.gate_of(p.bot_id, at) if not p.inside(c, at)]
        at += timedelta(seconds=rng.uniform(0.3, 2.5))
        if not missing:
            self.add(p, at, "gate_passed", content, data={"checks": 1})
            self.add(p, at, "content_sent", content)
            p.gate, p.checks = None, 0
            return
        self.add(p, at, "gate_shown", content, data={"missing": missing})
        if give_up or rng.random() < 0.25:
            p.gate, p.checks = content, p.checks + 1
            return
        for i, chat in enumerate(missing):
            at += timedelta(seconds=rng.uniform(6, 40))
            if at >= self.end:
                return
            link = self.links.get(p.bot_id) if chat == CAMPAIGN[1] else None
            # As the handler writes it: the first join at an open gate names its content.
            gated = content if i == 0 else None
            self.add(p, at, "joined", gated, chat, {"link": link} if link else None)
            p.chats[chat] = (at, None)
            if link and p.user_id not in self.credits:
                self.credits[p.user_id] = (p.bot_id, at, None)
        at += timedelta(seconds=rng.uniform(3, 20))
        if at >= self.end:
            return
        self.add(p, at, "gate_passed", content, data={"checks": rng.choice((2, 2, 3, 4))})
        self.add(p, at, "content_sent", content)
        p.gate, p.checks, p.last_seen = None, 0, at
        if rng.random() < 0.1:
            self.leave(p, rng.choice(missing), at + timedelta(hours=rng.uniform(2, 120)))

    def leave(self, p: Person, chat: int, at: datetime) -> None:
        if at >= self.end or chat not in p.chats:
            return
        self.add(p, at, "left", chat=chat, data={"status": "left"})
        p.chats[chat] = (p.chats[chat][0], at)
        credit = self.credits.get(p.user_id)
        if chat == CAMPAIGN[1] and credit and credit[0] == p.bot_id and credit[2] is None:
            self.credits[p.user_id] = (credit[0], credit[1], at)


def _moment(rng: random.Random, now: datetime, end: datetime) -> datetime:
    """A moment of the last DAYS days on Tehran's clock: more lately, in the evening and at the
    Iranian weekend."""
    today = now.astimezone(TEHRAN).date()
    while True:
        back = rng.choices(range(DAYS), weights=[1.4 - 0.7 * d / DAYS for d in range(DAYS)])[0]
        day = today - timedelta(days=back)
        if rng.random() * max(WEEKLY) > WEEKLY[day.weekday()]:
            continue
        hour = rng.choices(range(24), weights=HOURLY)[0]
        local = datetime.combine(day, time(hour), tzinfo=TEHRAN)
        moment = (local + timedelta(seconds=rng.randrange(3600))).astimezone(UTC)
        if moment < end:
            return moment


def _person(rng: random.Random, bot_id: int, user_id: int) -> Person:
    if rng.random() < 0.65:
        language, first, last = "fa", rng.choice(FA_FIRST), rng.choice(FA_LAST)
    else:
        language, first, last = "en", rng.choice(EN_FIRST), rng.choice(EN_LAST)
    handle = f"{rng.choice(HANDLES)}_{user_id % 10000}" if rng.random() < 0.6 else None
    return Person(bot_id, user_id, language, handle, first, last)


async def write_month(pool: asyncpg.Pool) -> Month:
    """Three bots, their channels and content, a campaign, and DAYS days of visitors."""
    rng = random.Random(14)
    month = Month(now=datetime.now(UTC))
    now, end = month.now, month.end
    await pool.execute("UPDATE workspace SET name = 'Cinema & Co.', time_zone = $1", ZONE)
    for m in range(DAYS // 28 + 2):
        await pool.execute("SELECT sponsorbot_events_month($1)", now - timedelta(days=28 * m))
    for bot_id, username in BOTS.items():
        await pool.execute(BOT, bot_id, username)
        for chat_id, title, handle in CHANNELS[bot_id]:
            await pool.execute(CHANNEL, bot_id, chat_id, title, handle)
        month.contents[bot_id] = []
        for n, caption in enumerate(CONTENTS[bot_id]):
            items = [{"kind": "document", "file_id": f"BQAC-{bot_id}-{n}", "caption": caption}]
            code = f"{username[:3]}{n}x{bot_id}"
            made = now - timedelta(days=DAYS + 5)
            month.contents[bot_id].append(
                await pool.fetchval(CONTENT, bot_id, code, items, caption, made)
            )
    name, chat_id, title, bots, since, until = CAMPAIGN
    window = (now - timedelta(days=since), now - timedelta(days=until))
    month.campaign_window = window
    month.campaign_id = await pool.fetchval(CAMPAIGN_ROW, name, chat_id, title, *window)
    for bot_id in bots:
        # Starting a campaign adds its channel to each bot's channels (not to the gate).
        await pool.execute(CHANNEL, bot_id, chat_id, title, None)
        month.links[bot_id] = f"https://t.me/+filmClub{bot_id}"
        await pool.execute(CAMPAIGN_BOT, month.campaign_id, bot_id, month.links[bot_id], window[1])

    user_id = 10_000_000
    for bot_id, count in PEOPLE.items():
        for _ in range(count):
            user_id += 1
            person = _person(rng, bot_id, user_id)
            at = _moment(rng, now, end)
            while at < end:
                month.visit(rng, person, at)
                at += timedelta(hours=rng.expovariate(1 / 60) + 0.1)
                if rng.random() < 0.45:
                    break
            if rng.random() < 0.04 and person.last_seen is not None:
                blocked = person.last_seen + timedelta(hours=rng.uniform(1, 48))
                person.blocked_at = blocked if blocked < end else None
            month.people.append(person)
    # The busy visitor: a visit every two or three days, then, having left a channel, the gate.
    first, last, handle = BUSY_NAME
    for bot_id, visits in ((BUSY_BOT, 24), (7102, 3)):
        busy = Person(bot_id, BUSY, "fa", handle, first, last)
        for k in range(visits):
            at = end - timedelta(days=DAYS - 2) + timedelta(days=(DAYS - 3) * k / visits)
            if bot_id == BUSY_BOT and k == visits - 1:
                month.leave(busy, CHANNELS[bot_id][0][0], at - timedelta(hours=3))
            month.visit(rng, busy, at, give_up=bot_id == BUSY_BOT and k == visits - 1)
        month.people.append(busy)

    month.events.sort(key=lambda e: e[1])
    columns = list(zip(*month.events, strict=True))
    data = [None if d is None else orjson.dumps(d).decode() for d in columns[6]]
    await pool.execute(EVENTS, *(list(c) for c in columns[:6]), data)
    rows = [
        (
            p.bot_id,
            p.user_id,
            p.first_seen,
            p.last_seen,
            p.language,
            p.blocked_at,
            p.username,
            p.first_name,
            p.last_name,
            p.gate,
            f"gate:{p.user_id}:test" if p.gate else None,
            p.checks,
        )
        for p in month.people
        if p.first_seen is not None
    ]
    await pool.execute(PEOPLE_ROWS, *(list(c) for c in zip(*rows, strict=True)))
    sends: Counter[tuple[int, datetime]] = Counter(
        (e[0], e[1].replace(second=0, microsecond=0)) for e in month.events if e[2] in SENDING
    )
    throttled = [1 if rng.random() < 0.01 else 0 for _ in sends]
    await pool.execute(
        SENDS, [b for b, _ in sends], [m for _, m in sends], list(sends.values()), throttled
    )
    credits = sorted(month.credits.items())
    await pool.execute(
        MEMBERS,
        month.campaign_id,
        [u for u, _ in credits],
        [c[0] for _, c in credits],
        [c[1] for _, c in credits],
        [c[2] for _, c in credits],
    )
    return month


async def count(
    pool: asyncpg.Pool, kind: str, first: date, last: date, bot_id: int | None = None
) -> int:
    """Events of `kind` on the days `first` to `last` of Tehran's clock."""
    start, end = Span(first, last).bounds(ZONE)
    return int(await pool.fetchval(COUNT, kind, start, end, bot_id))


def number(text: str) -> int:
    """A figure as the page writes it, in either language's digits and separators."""
    return int(text.strip().translate(TO_LATIN).replace(",", "").replace("٬", ""))


async def boxes(page: Any, selector: str) -> list[list[float]]:
    found: list[list[float]] = await page.evaluate(BOXES, selector)
    return found


async def scale_left_of_plot(page: Any) -> None:
    """The series chart's scale is written left of its plot, not over the bars."""
    scale = await boxes(page, "#series svg text.scale")
    grid = await boxes(page, "#series svg line.grid")
    bars = await boxes(page, "#series svg rect.bar")
    assert scale and grid and bars
    plot_left = min(min(b[0] for b in grid), min(b[0] for b in bars))
    assert max(s[1] for s in scale) <= plot_left, (scale, plot_left)


def apart(found: list[list[float]]) -> list[tuple[list[float], list[float]]]:
    """The neighbouring boxes (left to right) that overlap side to side."""
    ordered = sorted(found)
    return [(a, b) for a, b in pairwise(ordered) if a[1] > b[0]]


async def sideways(page: Any, url: str) -> list[tuple[str, int, list[str]]]:
    """[(the page, its viewport's width, what sticks out)] if `url` scrolls sideways."""
    await page.goto(url)
    if not await page.evaluate(SCROLLS_SIDEWAYS):
        return []
    width = int(await page.evaluate("innerWidth"))
    return [(url.split("/", 3)[-1], width, await page.evaluate(WIDER_THAN_VIEWPORT))]


@asynccontextmanager
async def month_in_browser(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser, viewport: ViewportSize
) -> AsyncIterator[tuple[Page, str]]:
    """The panel over a written month, and a page in a new context signed in as its owner."""
    # Written before the engine starts: a roll-up that ran first would mark the hours up to
    # now as folded with nothing in them, and the pages would show zeros for the month
    # (seen on a busy machine, where the writing took longer than the job took to start).
    await write_month(pool)
    async with serve(pool, db_dsn, tmp_path) as app:
        # The pages are read once the roll-up has caught up: a figure read while a day is
        # being folded can count some of its hours twice (seen: 581 links opened against
        # 562), which is the statistics' own problem to solve, not these tests'.
        await eventually(lambda: pool.fetchval(CAUGHT_UP, SETTLE), timeout=90)
        email = await add_member(pool, "owner", "sara@example.com")
        context = await chromium.new_context(viewport=viewport)
        try:
            page = await context.new_page()
            await sign_in(page, app.url, email, PASSWORD)
            yield page, app.url
        finally:
            await context.close()


async def test_statistics_in_english_ranges_metrics_custom_dates_and_csv(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    from playwright.async_api import expect

    async with month_in_browser(pool, db_dsn, tmp_path, chromium, DESKTOP) as (page, _base):
        today = local_day(datetime.now(UTC), ZONE)
        await page.click("nav.nav >> text=Statistics")
        await expect(page.locator("h1")).to_have_text("Statistics")
        ranges = page.locator("nav.filter-tabs[aria-label=Range]")
        await expect(ranges.locator("[aria-current=page]")).to_have_text("7 days")

        # The 30-day tab: the month's figure, and its change against the 30 days before.
        await ranges.locator("text=30 days").click()
        await expect(ranges.locator("[aria-current=page]")).to_have_text("30 days")
        assert "range=30d" in page.url
        opened = page.locator("[data-figure=started]")
        await expect(opened.locator("dt")).to_have_text("Links opened")
        now = number(await opened.locator("dd").first.inner_text())
        shown = await opened.locator("dd.change .muted").inner_text()
        assert shown.startswith("before: "), shown
        before = number(shown.removeprefix("before: "))
        first, earlier = today - timedelta(days=29), today - timedelta(days=59)
        assert now > 0 and now == await count(pool, "started", first, today)
        assert before == await count(pool, "started", earlier, first - timedelta(days=1))
        change = f"{100 * (now - before) / before:+.1f}%"
        await expect(opened.locator(".delta")).to_have_text(change)

        # The series: a slot a day, bars, and time labels that do not run into each other.
        series = page.locator("#series")
        await expect(series.locator("svg rect.hit")).to_have_count(30)
        assert await series.locator("svg rect.bar").count() > 20
        labels = await boxes(page, "#series svg text.tick")
        assert len(labels) >= 3 and not apart(labels), labels
        await scale_left_of_plot(page)
        await expect(series.locator("figcaption")).to_contain_text(f"Links opened: {now:,}")
        await shot(page, "stats-en")

        # A metric tab: the heading, the tab and the chart's total follow.
        delivered = page.locator("[data-figure=content_sent] dd").first
        sent = number(await delivered.inner_text())
        await series.locator("nav a", has_text="Content delivered").click()
        await expect(series.locator("h2")).to_have_text("Content delivered")
        await expect(series.locator("nav [aria-current=page]")).to_have_text("Content delivered")
        assert "metric=content_sent" in page.url and "range=30d" in page.url
        await expect(series.locator("figcaption")).to_contain_text(f"Content delivered: {sent:,}")

        # One bot: its own figure, part of all of them.
        await page.select_option("#f-bot", str(7103))
        await page.click("#stats-filters button")
        await expect(page.locator("#f-bot")).to_have_value("7103")
        small = number(await page.locator("[data-figure=started] dd").first.inner_text())
        assert 0 < small < now
        assert small == await count(pool, "started", first, today, 7103)
        await page.select_option("#f-bot", "")

        # Custom dates: a week ending three days ago, the metric kept.
        start, stop = today - timedelta(days=9), today - timedelta(days=3)
        await page.select_option("#f-range", "custom")
        await page.fill("#f-from", start.isoformat())
        await page.fill("#f-to", stop.isoformat())
        await page.click("#stats-filters button")
        await expect(page.locator(".head p.muted")).to_contain_text(
            f"{start.isoformat()} – {stop.isoformat()}"
        )
        await expect(page.locator("#f-range")).to_have_value("custom")
        await expect(series.locator("svg rect.hit")).to_have_count(7)
        await expect(series.locator("h2")).to_have_text("Content delivered")
        assert f"from={start.isoformat()}" in page.url
        week = number(await page.locator("[data-figure=started] dd").first.inner_text())
        assert week == await count(pool, "started", start, stop)
        await expect(page.locator("p.error")).to_have_count(0)

        # Too long a range: said, and the last 7 days shown instead.
        await page.fill("#f-from", (today - timedelta(days=500)).isoformat())
        await page.fill("#f-to", today.isoformat())
        await page.click("#stats-filters button")
        await expect(page.locator("p.error[role=alert]")).to_have_text(
            "Choose both dates of the range, at most 400 days apart."
        )
        await expect(page.locator("#f-range")).to_have_value("7d")
        await expect(series.locator("svg rect.hit")).to_have_count(7)

        # Today: a slot an hour (Tehran keeps no summer time), the labels still apart.
        await ranges.locator("text=Today").click()
        await expect(ranges.locator("[aria-current=page]")).to_have_text("Today")
        await expect(series.locator("svg rect.hit")).to_have_count(24)
        await expect(series.locator("svg text.tick").first).to_have_text(re.compile(r"\d\d:00"))
        labels = await boxes(page, "#series svg text.tick")
        assert len(labels) >= 3 and not apart(labels), labels

        # The CSV of the figures: a byte-order mark, then the header row.
        await ranges.locator("text=30 days").click()
        async with page.expect_download() as info:
            await page.locator("#figures header a", has_text="CSV").click()
        download = await info.value
        assert download.suggested_filename == (
            f"stats-summary-{first.isoformat()}-{today.isoformat()}.csv"
        )
        raw = Path(await download.path()).read_bytes()
        assert raw.startswith(b"\xef\xbb\xbf")
        lines = raw[3:].decode().splitlines()
        assert lines[0] == "figure,value,previous"
        assert f"started,{now},{before}" in lines


async def test_statistics_in_persian_read_right_to_left_with_jalali_dates(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    from playwright.async_api import expect

    async with month_in_browser(pool, db_dsn, tmp_path, chromium, DESKTOP) as (page, base):
        today = local_day(datetime.now(UTC), ZONE)
        await page.goto(f"{base}/stats")
        await page.click("header >> text=فارسی")
        await expect(page.locator("html")).to_have_attribute("dir", "rtl")
        await expect(page.locator("h1")).to_have_text("آمار")
        await page.locator("nav.filter-tabs").first.locator("text=۳۰ روز").click()
        assert "range=30d" in page.url

        # Persian digits in the figures, Jalali dates (1404 and on) over them.
        figures = page.locator("#figures [data-figure] dd:first-of-type")
        await expect(figures).to_have_count(11)
        for text in await figures.all_inner_texts():
            assert re.fullmatch(f"[{PERSIAN_DIGITS}٬]+", text.strip()), text
        opened = page.locator("[data-figure=started] dd").first
        first = today - timedelta(days=29)
        assert number(await opened.inner_text()) == await count(pool, "started", first, today)
        assert "٬" in await page.locator("[data-figure=sent] dd").first.inner_text()
        dates = re.findall(
            f"۱۴[{PERSIAN_DIGITS}]{{2}}/[{PERSIAN_DIGITS}]{{2}}/[{PERSIAN_DIGITS}]{{2}}",
            await page.locator(".head p.muted").inner_text(),
        )
        assert len(dates) == 2, dates
        assert dates[1] == _jalali(today), dates

        # Custom dates are typed in the Jalali calendar, in Persian digits, with no script:
        # the fields are text, and what the server read comes back in the heading.
        start, stop = today - timedelta(days=9), today - timedelta(days=3)
        await page.select_option("#f-range", "custom")
        await expect(page.locator("#f-from")).to_have_attribute("type", "text")
        await page.fill("#f-from", _jalali(start))
        await page.fill("#f-to", _jalali(stop))
        await page.click("#stats-filters button")
        await expect(page.locator(".head p.muted")).to_contain_text(_jalali(start))
        await expect(page.locator("#f-to")).to_have_value(_jalali(stop))
        assert number(await opened.inner_text()) == await count(pool, "started", start, stop)
        await page.locator("nav.filter-tabs").first.locator("text=۳۰ روز").click()

        # The chart: the scale left of the plot, not over the bars; time labels apart.
        await scale_left_of_plot(page)
        ticks = page.locator("#series svg text.tick")
        labels = await boxes(page, "#series svg text.tick")
        assert len(labels) >= 3 and not apart(labels), labels
        for tick in await ticks.all_text_contents():
            assert re.fullmatch(f"[{PERSIAN_DIGITS}/]+", tick), tick

        # The heat map's week starts on Saturday, its names left of the cells.
        heat = page.locator("#heat")
        await expect(heat.locator("svg text.scale").first).to_have_text("شنبه")
        await expect(heat.locator("table tr").nth(1).locator("th")).to_have_text("شنبه")
        names = await boxes(page, "#heat svg text.scale")
        cells = await boxes(page, "#heat svg rect")
        assert len(names) == 7 and max(n[1] for n in names) <= min(c[0] for c in cells)

        # The funnel's lines of text are whole inside the chart.
        [frame] = await boxes(page, "#funnel svg")
        for line in await boxes(page, "#funnel svg text"):
            assert frame[0] <= line[0] and line[1] <= frame[1], (line, frame)
        await shot(page, "stats-fa")


# The charts' hidden tables for screen readers (templates/_stats_charts.html) carry the class
# .visually-hidden themselves: a table is never narrower than its cells, so the heat map's
# 25 columns stand out far to the side, and the page scrolls sideways even at 1280 px.
async def test_statistics_fit_the_width_of_a_phone_and_a_desktop_in_both_languages(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    from playwright.async_api import expect

    async with month_in_browser(pool, db_dsn, tmp_path, chromium, PHONE) as (page, base):
        wide = []
        for language in ("en", "fa"):
            if language == "fa":
                await page.click("header >> text=فارسی")
                await expect(page.locator("html")).to_have_attribute("dir", "rtl")
            for viewport in (PHONE, DESKTOP):
                await page.set_viewport_size(viewport)
                for query in ("range=30d", "range=today", "range=7d&metric=content_sent"):
                    wide += await sideways(page, f"{base}/stats?{query}")
                await page.set_viewport_size(PHONE)
        assert not wide, wide


# The funnel and the heat map sit in .grid (auto-fill, 320 px columns): each chart, drawn for
# 720 units of width, is scaled to under half, and its 11-12 px texts come out about 5 px high.
async def test_statistics_charts_are_drawn_at_a_readable_size(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    async with month_in_browser(pool, db_dsn, tmp_path, chromium, DESKTOP) as (page, base):
        await page.goto(f"{base}/stats?range=30d")
        sizes = await page.evaluate(SMALLEST_TEXT, "#series svg, #funnel svg, #heat svg")
        assert len(sizes) == 3
        assert min(sizes) >= READABLE_PX, sizes


# jinja2.ext.i18n formats a template's _("… %(n)s", n=…) itself, with the plain number: only
# what goes through |num is in Persian digits (ngettext is, as i18n.ngettext formats it).
async def test_statistics_in_persian_have_no_latin_digits(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    from playwright.async_api import expect

    async with month_in_browser(pool, db_dsn, tmp_path, chromium, DESKTOP) as (page, base):
        await page.click("header >> text=فارسی")
        await expect(page.locator("html")).to_have_attribute("dir", "rtl")
        latin = []
        for query in ("range=30d", "range=today"):
            await page.goto(f"{base}/stats?{query}")
            latin += await page.evaluate(LATIN_DIGITS)
        assert not latin, latin


def _jalali(day: date) -> str:
    import jdatetime

    return str(jdatetime.date.fromgregorian(date=day).strftime("%Y/%m/%d")).translate(TO_PERSIAN)


async def test_visitors_search_and_one_visitors_timeline_paged(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    from playwright.async_api import expect

    async with month_in_browser(pool, db_dsn, tmp_path, chromium, DESKTOP) as (page, base):
        await page.click("nav.nav >> text=Visitors")
        await expect(page.locator("h1")).to_have_text("Visitors")
        rows = page.locator("table.list tbody tr")
        await expect(rows).to_have_count(50)

        # The start of a @username: everyone whose username starts so, and only them.
        await page.fill("#f-q", "@mina")
        await page.click("form[role=search] button")
        expected = await pool.fetchval("SELECT count(*) FROM people WHERE username LIKE 'mina%'")
        assert 0 < expected <= 50
        await expect(rows).to_have_count(expected)
        for row in await rows.all_inner_texts():
            assert "@mina_" in row, row
        # ... in one bot.
        await page.select_option("#f-bot", str(7103))
        await page.click("form[role=search] button")
        in_bot = await pool.fetchval(
            "SELECT count(*) FROM people WHERE username LIKE 'mina%' AND bot_id = 7103"
        )
        assert 0 < in_bot < expected
        await expect(rows).to_have_count(in_bot)
        for row in await rows.all_inner_texts():
            assert "@mina_" in row and f"@{BOTS[7103]}" in row, row
        await shot(page, "visitors-en")
        await page.select_option("#f-bot", "")

        # A Persian first name: the busy visitor, once for each bot that knows them.
        await page.fill("#f-q", BUSY_NAME[0])
        await page.click("form[role=search] button")
        await expect(rows).to_have_count(2)
        for row in await rows.all_inner_texts():
            assert f"{BUSY_NAME[0]} {BUSY_NAME[1]}" in row and f"@{BUSY_NAME[2]}" in row, row
        await expect(rows.filter(has_text=f"@{BOTS[7102]}")).to_have_count(1)

        # Nobody: said so, with what to try.
        await page.fill("#f-q", "zzqx")
        await page.click("form[role=search] button")
        await expect(page.locator(".card.empty")).to_contain_text("No one matches “zzqx”")
        await expect(rows).to_have_count(0)

        # The busy visitor in the cinema bot: at the gate again, the timeline in pages.
        await page.fill("#f-q", f"@{BUSY_NAME[2]}")
        await page.click("form[role=search] button")
        await rows.filter(has_text=f"@{BOTS[BUSY_BOT]}").locator("a").click()
        await expect(page).to_have_url(f"{base}/visitors/{BUSY_BOT}/{BUSY}")
        await expect(page.locator("h1")).to_have_text(f"{BUSY_NAME[0]} {BUSY_NAME[1]}")
        await expect(page.locator("#gate-state")).to_have_text("At the gate")
        await expect(page.locator("#gate")).to_contain_text("At the gate for")
        await expect(page.locator("#profile")).to_contain_text(f"@{BUSY_NAME[2]}")
        await expect(page.locator("#campaigns")).to_contain_text(CAMPAIGN[0])
        timeline = page.locator("#timeline table.list tbody tr")
        total = await pool.fetchval(
            "SELECT count(*) FROM events WHERE bot_id = $1 AND user_id = $2", BUSY_BOT, BUSY
        )
        assert total > 50
        await expect(timeline).to_have_count(50)
        newest = await timeline.first.locator("td").first.inner_text()
        await expect(timeline.first.locator("[data-kind]")).to_have_attribute(
            "data-kind", "gate_shown"
        )
        seen, pages = 0, 0
        while True:
            seen += await timeline.count()
            pages += 1
            older = page.locator("#timeline .pager a", has_text="Older")
            if not await older.count():
                break
            await older.click()
            await expect(page.locator("#timeline .pager a", has_text="Newest")).to_be_visible()
        assert (seen, pages) == (total, -(-total // 50))
        await page.locator("#timeline .pager a", has_text="Newest").click()
        await expect(timeline).to_have_count(50)
        await expect(timeline.first.locator("td").first).to_have_text(newest)

        # In Persian: the gate state and Jalali dates.
        await page.click("header >> text=فارسی")
        await expect(page.locator("html")).to_have_attribute("dir", "rtl")
        await expect(page.locator("#gate-state")).to_have_text("پشت دروازه")
        await expect(timeline.first.locator("td").first).to_contain_text("۱۴۰")

        # An everyday visitor (a page, not 50 rows long, for the screenshot): credited to
        # the campaign, through the gate, every event on the one page.
        person = await pool.fetchrow(TYPICAL, BUSY_BOT, BUSY)
        await page.goto(f"{base}/visitors/{BUSY_BOT}/{person['user_id']}")
        await expect(page.locator("#gate-state")).to_have_text("گذشته از دروازه")
        await expect(page.locator("#campaigns")).to_contain_text(CAMPAIGN[0])
        await expect(timeline).to_have_count(person["events"])
        await expect(page.locator("#timeline .pager")).to_have_count(0)
        await shot(page, "visitor-fa")
