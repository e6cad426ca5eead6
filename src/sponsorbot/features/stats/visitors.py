"""The visitors page's queries: find people by Telegram id, username or name, and one person's
profile (gate state, campaigns joined, content received) and timeline.

A visitor lives per bot: the same Telegram account on two bots is two rows of `people`, and a
search over the workspace answers (bot, person) pairs. Ids, usernames and one person's
records are read through indexes; the two scans without one (a name, and everybody by last
seen) are bounded, as `search` says. Nothing here writes. Events are kept 13 months, so "passed
the gate", the content received and the timeline reach back that far and no further.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, NoReturn

import asyncpg

from sponsorbot.features.content.service import like_escape
from sponsorbot.features.errors import NotFound
from sponsorbot.features.stats.events import EventKind

GateState = Literal["at_gate", "passed", "never"]
JoinedVia = Literal["gate", "other_bot", "outside"]

MAX_QUERY = 100  # the longest search text read; the rest is cut
MAX_ID = 2**63 - 1  # PostgreSQL's bigint: a longer number is nobody's id
# The deepest page: one further down would keep most of the people in the top-N heap. A
# search narrows the list instead.
MAX_PAGE = 1000
# A name has no index to search by: only the MAX_NAME_SCAN newest people of the chosen bots
# (by first seen, through people_first_seen) are read, so a search costs the same on a bot of
# any size; ids and usernames reach everyone. Each branch of a text search stops after
# MAX_NAME_MATCHES matches, so a common word pages through at most that many.
MAX_NAME_SCAN = 100_000
MAX_NAME_MATCHES = 1000
MAX_RECEIVED_ITEMS = 100  # distinct content items listed on a profile (the counts cover all)
# Telegram usernames are 5-32 of these; a query with anything else cannot be one's prefix.
USERNAME_PREFIX = re.compile(r"[a-z0-9_]{1,32}")

# The title a content item is shown by: its caption, its first item's caption, or the start of
# its text (files without a caption have none, and are shown by their code).
CONTENT_TITLE = """coalesce(nullif(c.caption, ''), nullif(c.items -> 0 ->> 'caption', ''),
                  left(c.items -> 0 ->> 'text', 80))"""
PEOPLE_COLUMNS = """p.bot_id, p.user_id, p.username, p.first_name, p.last_name, p.language,
    p.first_seen, p.last_seen, p.blocked_at, p.gate_content_id, p.gate_checks"""
# Each search below picks a page of people (bots $1, limit $2, offset $3), most recently seen
# first; ROW_FIGURES then adds what a row of the list shows, for that page only, in statements
# of their own (on Citus a figure over events cannot hang off a page picked across shards).
PAGE_ORDER = "ORDER BY p.last_seen DESC, p.bot_id, p.user_id"
# The newest visitors first: people_first_seen walked backwards, however many people there
# are (last_seen changes on every visit, so it has no index to keep the hot update cheap).
RECENT = f"""
SELECT {PEOPLE_COLUMNS} FROM people p
WHERE ($1::bigint[] IS NULL OR p.bot_id = ANY($1))
ORDER BY p.first_seen DESC, p.bot_id, p.user_id LIMIT $2 OFFSET $3
"""
# $4 the Telegram id: one primary-key lookup per bot.
BY_ID = f"""
SELECT {PEOPLE_COLUMNS}
FROM bots b JOIN people p ON p.bot_id = b.id AND p.user_id = $4
WHERE ($1::bigint[] IS NULL OR b.id = ANY($1))
{PAGE_ORDER} LIMIT $2 OFFSET $3
"""
# Per (bot, person) of the page (bots $1, people $2; the pairs are picked out after): passed a
# gate, and how many items were sent, each an index lookup by (bot, person).
ROW_FIGURES = """
SELECT bot_id, user_id, bool_or(kind = 'gate_passed') AS passed,
       count(*) FILTER (WHERE kind = 'content_sent') AS received
FROM events
WHERE bot_id = ANY ($1::bigint[]) AND user_id = ANY ($2::bigint[])
  AND kind IN ('gate_passed', 'content_sent')
GROUP BY 1, 2
"""
BOT_NAMES = "SELECT id, username FROM bots WHERE id = ANY ($1::bigint[])"
# $4..$5 the username range [prefix, prefix with its last character raised): the
# people_by_username index's own operators, so the range is an index scan in any plan (NULL:
# no username can match). $6 the LIKE pattern for the names (NULL: names are not searched),
# $7 MAX_NAME_MATCHES, $8 MAX_NAME_SCAN. lower() and LIKE: ILIKE costs twice as much a row.
BY_TEXT = f"""
    SELECT {PEOPLE_COLUMNS} FROM people p
    WHERE (p.bot_id, p.user_id) IN (
        (SELECT q.bot_id, q.user_id FROM people q
         WHERE q.username IS NOT NULL
           AND lower(q.username) ~>=~ $4 AND lower(q.username) ~<~ $5
           AND ($1::bigint[] IS NULL OR q.bot_id = ANY($1))
         LIMIT $7)
        UNION
        (SELECT q.bot_id, q.user_id FROM (
             SELECT r.bot_id, r.user_id, r.first_name, r.last_name FROM people r
             WHERE $6::text IS NOT NULL AND ($1::bigint[] IS NULL OR r.bot_id = ANY($1))
             ORDER BY r.first_seen DESC LIMIT $8) q
         WHERE lower(coalesce(q.first_name, '') || ' ' || coalesce(q.last_name, ''))
               LIKE lower($6)
         LIMIT $7))
    {PAGE_ORDER} LIMIT $2 OFFSET $3
"""

PROFILE = f"""
SELECT p.bot_id, b.username AS bot_username, p.user_id, p.username, p.first_name, p.last_name,
       p.language, p.first_seen, p.last_seen, p.blocked_at, p.gate_content_id, p.gate_checks,
       {CONTENT_TITLE} AS gate_content_title, c.code AS gate_content_code
FROM people p
JOIN bots b ON b.id = p.bot_id
LEFT JOIN contents c ON c.bot_id = p.bot_id AND c.id = p.gate_content_id
WHERE p.bot_id = $1 AND p.user_id = $2
"""
# The gates the person passed: how many, and the last (a statement of its own, which Citus
# routes to the bot's shard as it does PROFILE).
PASSES = """
SELECT count(*) AS passes, max(at) AS last_passed_at FROM events
WHERE bot_id = $1 AND user_id = $2 AND kind = 'gate_passed'
"""
# What PROFILE reads of the gate, shown together under "gate".
GATE_COLUMNS = frozenset(
    {
        "gate_content_id",
        "gate_content_title",
        "gate_content_code",
        "gate_checks",
        "passes",
        "last_passed_at",
    }
)
BOT_EXISTS = "SELECT EXISTS (SELECT 1 FROM bots WHERE id = $1)"
PERSON_EXISTS = "SELECT EXISTS (SELECT 1 FROM people WHERE bot_id = $1 AND user_id = $2)"
# The campaigns of these bots ($1), then which of them ($1) these people ($2) joined: in two
# statements, because campaign_members is kept by campaign and the bots' tables by bot (on
# Citus, on different nodes: docs/scaling.md). Membership is per person, not per bot: a join
# credited to another bot's link, or made without one, shows as such.
BOT_CAMPAIGNS = """
SELECT cb.bot_id, k.id, k.name, k.chat_title
FROM campaign_bots cb JOIN campaigns k ON k.id = cb.campaign_id
WHERE cb.bot_id = ANY ($1::bigint[])
"""
JOINED = """
SELECT campaign_id, user_id, bot_id, gate_joined_at, outside_at, left_at
FROM campaign_members
WHERE campaign_id = ANY ($1::bigint[]) AND user_id = ANY ($2::bigint[])
  AND (gate_joined_at IS NOT NULL OR outside_at IS NOT NULL)
"""
# Per content item: how often it was sent and when last, with the totals over every item.
RECEIVED = f"""
SELECT e.content_id, {CONTENT_TITLE} AS title, c.code, count(*) AS times, max(e.at) AS last_at,
       sum(count(*)) OVER () AS total, count(*) OVER () AS distinct_items
FROM events e
LEFT JOIN contents c ON c.bot_id = e.bot_id AND c.id = e.content_id
WHERE e.bot_id = $1 AND e.user_id = $2 AND e.kind = 'content_sent'
GROUP BY e.content_id, c.id, c.bot_id
ORDER BY last_at DESC
LIMIT $3
"""
# The person's events newest first, with the content's title and the channel's; $3 the
# cursor's time and $4 its id in TIMELINE_BEFORE, the limit last. What campaigns name (a
# channel the bot no longer lists, the campaign a join's link belongs to) is read after, by
# CAMPAIGN_NAMES: on Citus the campaigns' tables are not beside the bot's events.
TIMELINE = f"""
SELECT e.id, e.at, e.kind, e.content_id, e.chat_id, e.data,
       {CONTENT_TITLE} AS content_title, c.code AS content_code, ch.title AS chat_title
FROM events e
LEFT JOIN contents c ON c.bot_id = e.bot_id AND c.id = e.content_id
LEFT JOIN channels ch ON ch.bot_id = e.bot_id AND ch.chat_id = e.chat_id
WHERE e.bot_id = $1 AND e.user_id = $2 {{after}}
ORDER BY e.at DESC, e.id DESC
LIMIT {{limit}}
"""
TIMELINE_FIRST = TIMELINE.format(after="", limit="$3")
TIMELINE_BEFORE = TIMELINE.format(after="AND e.at <= $3 AND (e.at < $3 OR e.id < $4)", limit="$5")
# The newest campaign's title of each chat ($2), and this bot's ($1) campaigns by invite link.
CAMPAIGN_TITLES = """
SELECT DISTINCT ON (chat_id) chat_id, chat_title FROM campaigns
WHERE chat_id = ANY ($1::bigint[]) ORDER BY chat_id, id DESC
"""
CAMPAIGN_LINKS = """
SELECT DISTINCT ON (cb.invite_link) cb.invite_link, k.id, k.name
FROM campaign_bots cb JOIN campaigns k ON k.id = cb.campaign_id
WHERE cb.bot_id = $1 AND cb.invite_link = ANY ($2::text[])
ORDER BY cb.invite_link, k.id
"""
CURSOR = "SELECT at FROM events WHERE id = $3 AND bot_id = $1 AND user_id = $2"


@dataclass(frozen=True, slots=True)
class Query:
    """What a search text asks for: a Telegram id, a username prefix, a name, or nothing."""

    user_id: int | None = None  # all digits: exactly this id
    username: str | None = None  # the prefix, lower case
    name: str | None = None  # the text a name must contain
    nobody: bool = False  # a number no id can be: nobody matches

    @property
    def empty(self) -> bool:
        """Nothing typed: the newest visitors."""
        return self == Query()


def parse_query(text: str) -> Query:
    """Read a search text: all digits (Persian ones too) is a Telegram id; "@name" a username
    prefix; anything else a username prefix or part of the first and last names."""
    # NUL is the one character PostgreSQL's text refuses; nobody means to search for it.
    text = text.replace("\x00", "").strip()[:MAX_QUERY]
    if text.isdecimal():
        number = int(text)
        return Query(user_id=number) if 0 < number <= MAX_ID else Query(nobody=True)
    at = text.startswith("@")
    bare = text.lstrip("@").strip()
    if not bare:
        return Query()
    prefix = bare.lower()
    username = prefix if USERNAME_PREFIX.fullmatch(prefix) else None
    if at:
        # "@" says it is a username: the names are not searched.
        return Query(username=username, nobody=username is None)
    return Query(username=username, name=bare)


def _username_range(prefix: str) -> tuple[str, str]:
    """The bounds of every text starting with `prefix` (ASCII) in byte order."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def gate_state(open_gate: int | None, passed: bool) -> GateState:
    """Where the person stands: at the open gate of a content item, through a gate once (in
    the 13 months events are kept), or never gated."""
    if open_gate is not None:
        return "at_gate"
    return "passed" if passed else "never"


async def search(
    pool: asyncpg.Pool, query: str, bot_ids: list[int] | None, page: int, per_page: int
) -> tuple[list[dict[str, Any]], bool]:
    """One page of visitors matching `query` in the bots `bot_ids` (None: every bot), and
    whether a next page exists: matches most recently seen first, the empty query newest first.

    An id is a primary-key lookup per bot and a username prefix a range of the
    `people_by_username` index: both reach every visitor. A name has no index, so its scan is
    bounded: names are searched among the MAX_NAME_SCAN newest visitors of these bots (by first
    seen), and each branch of a text search stops after MAX_NAME_MATCHES matches (a common word
    pages through that many at most). An empty query lists everybody, the newest first (by
    first seen, an index walk), down to page MAX_PAGE.
    """
    wanted = parse_query(query)
    if wanted.nobody:
        return [], False
    page = min(max(page, 1), MAX_PAGE)
    paging = (bot_ids, per_page + 1, (page - 1) * per_page)
    if wanted.empty:
        rows = await pool.fetch(RECENT, *paging)
    elif wanted.user_id is not None:
        rows = await pool.fetch(BY_ID, *paging, wanted.user_id)
    else:
        low, high = _username_range(wanted.username) if wanted.username else (None, None)
        pattern = f"%{like_escape(wanted.name)}%" if wanted.name else None
        rows = await pool.fetch(
            BY_TEXT, *paging, low, high, pattern, MAX_NAME_MATCHES, MAX_NAME_SCAN
        )
    return await _rows(pool, rows[:per_page]), len(rows) > per_page


async def _rows(pool: asyncpg.Pool, rows: list[asyncpg.Record]) -> list[dict[str, Any]]:
    """A page of people as the list shows them: with the bot's username, whether they passed
    a gate, how many items they were sent, and how many of the bot's campaigns they joined."""
    people = [(int(r["bot_id"]), int(r["user_id"])) for r in rows]
    bots = sorted({b for b, _ in people})
    users = sorted({u for _, u in people})
    names = {int(b["id"]): b["username"] for b in await pool.fetch(BOT_NAMES, bots)}
    figures = {
        (int(f["bot_id"]), int(f["user_id"])): f for f in await pool.fetch(ROW_FIGURES, bots, users)
    }
    joined = await _joined(pool, people)
    found = []
    for r, key in zip(rows, people, strict=True):
        passed = bool(figures[key]["passed"]) if key in figures else False
        found.append(
            {
                "bot_id": r["bot_id"],
                "bot_username": names.get(key[0]),
                **{k: v for k, v in r.items() if k != "bot_id"},
                "passed": passed,
                "received": int(figures[key]["received"]) if key in figures else 0,
                "campaigns": len(joined.get(key, [])),
                "gate": gate_state(r["gate_content_id"], passed),
            }
        )
    return found


async def visitor(
    pool: asyncpg.Pool, bot_id: int, user_id: int, timeline_limit: int, before: int | None = None
) -> dict[str, Any]:
    """One person of one bot: names, language, first and last seen, blocked, the gate state,
    the campaigns joined, the content received and a page of the timeline (the newest, or the
    one older than the event `before`, as `timeline` pages).

    NotFound when the bot or the person is unknown.
    """
    async with pool.acquire() as conn:
        person = await conn.fetchrow(PROFILE, bot_id, user_id)
        if person is None:
            await _missing(conn, bot_id)
        row = {**dict(person), **dict(await conn.fetchrow(PASSES, bot_id, user_id))}
        profile = {k: v for k, v in row.items() if k not in GATE_COLUMNS}
        profile["gate"] = {
            "state": gate_state(row["gate_content_id"], row["passes"] > 0),
            "content_id": row["gate_content_id"],
            "content_title": row["gate_content_title"],
            "content_code": row["gate_content_code"],
            "checks": row["gate_checks"],
            "passes": row["passes"],
            "last_passed_at": row["last_passed_at"],
        }
        profile["campaigns"] = (await _joined(conn, [(bot_id, user_id)])).get((bot_id, user_id), [])
        items = await conn.fetch(RECEIVED, bot_id, user_id, MAX_RECEIVED_ITEMS)
        profile["received"] = {
            "total": int(items[0]["total"]) if items else 0,
            "distinct_items": int(items[0]["distinct_items"]) if items else 0,
            "items": [
                {k: r[k] for k in ("content_id", "title", "code", "times", "last_at")}
                for r in items
            ],
        }
        events, next_before = await _timeline(conn, bot_id, user_id, before, timeline_limit)
    profile["timeline"] = {"items": events, "next_before": next_before}
    return profile


async def timeline(
    pool: asyncpg.Pool, bot_id: int, user_id: int, before: int | None, limit: int
) -> tuple[list[dict[str, Any]], int | None]:
    """A page of the person's events, newest first, older than the event `before` (None: the
    newest), and the `before` of the next page (None at the end).

    NotFound when the bot or the person is unknown; an event id that is not this person's (or
    has expired) gives an empty page.
    """
    async with pool.acquire() as conn:
        if not await conn.fetchval(PERSON_EXISTS, bot_id, user_id):
            await _missing(conn, bot_id)
        return await _timeline(conn, bot_id, user_id, before, limit)


async def _joined(
    db: asyncpg.Pool | asyncpg.Connection, people: list[tuple[int, int]]
) -> dict[tuple[int, int], list[dict[str, Any]]]:
    """Per (bot, person) of `people`: the campaigns of that bot the person joined, the latest
    join first, each with when, the first leave after, and how (`JoinedVia`)."""
    if not people:
        return {}
    bots = sorted({b for b, _ in people})
    campaigns: dict[int, list[asyncpg.Record]] = {}
    for c in await db.fetch(BOT_CAMPAIGNS, bots):
        campaigns.setdefault(int(c["id"]), []).append(c)
    if not campaigns:
        return {}
    users = sorted({u for _, u in people})
    wanted = set(people)
    out: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for m in await db.fetch(JOINED, sorted(campaigns), users):
        for c in campaigns[int(m["campaign_id"])]:
            key = (int(c["bot_id"]), int(m["user_id"]))
            if key not in wanted:
                continue
            via: JoinedVia = (
                "outside"
                if m["gate_joined_at"] is None
                else "gate"
                if m["bot_id"] == key[0]
                else "other_bot"
            )
            out.setdefault(key, []).append(
                {
                    "campaign_id": c["id"],
                    "name": c["name"],
                    "chat_title": c["chat_title"],
                    "joined_at": m["gate_joined_at"] or m["outside_at"],
                    "left_at": m["left_at"],
                    "via": via,
                }
            )
    for joins in out.values():
        joins.sort(key=lambda j: (j["joined_at"], j["campaign_id"]), reverse=True)
    return out


async def _missing(conn: asyncpg.Connection, bot_id: int) -> NoReturn:
    """Raise NotFound, naming what is missing: the bot, or the person in it."""
    if not await conn.fetchval(BOT_EXISTS, bot_id):
        raise NotFound(f"no bot {bot_id}", code="bot_missing")
    raise NotFound("this bot has never seen this person", code="visitor_missing")


async def _timeline(
    conn: asyncpg.Connection, bot_id: int, user_id: int, before: int | None, limit: int
) -> tuple[list[dict[str, Any]], int | None]:
    if before is None:
        rows = await conn.fetch(TIMELINE_FIRST, bot_id, user_id, limit + 1)
    else:
        at: datetime | None = await conn.fetchval(CURSOR, bot_id, user_id, before)
        if at is None:
            return [], None
        rows = await conn.fetch(TIMELINE_BEFORE, bot_id, user_id, at, before, limit + 1)
    events = [_event(r) for r in rows[:limit]]
    await _name_campaigns(conn, bot_id, events)
    return events, events[-1]["id"] if len(rows) > limit else None


async def _name_campaigns(
    conn: asyncpg.Connection, bot_id: int, events: list[dict[str, Any]]
) -> None:
    """Give each event its campaign names: a chat the bot no longer lists is named by the
    newest campaign on it, and a join through a campaign's link by that campaign."""
    chats = sorted({e["chat_id"] for e in events if e["chat_id"] and not e["chat_title"]})
    titles = (
        {r["chat_id"]: r["chat_title"] for r in await conn.fetch(CAMPAIGN_TITLES, chats)}
        if chats
        else {}
    )
    links = sorted({e["link"] for e in events if e["kind"] == EventKind.JOINED and e["link"]})
    campaigns = (
        {r["invite_link"]: r for r in await conn.fetch(CAMPAIGN_LINKS, bot_id, links)}
        if links
        else {}
    )
    for e in events:
        if not e["chat_title"]:
            e["chat_title"] = titles.get(e["chat_id"])
        found = campaigns.get(e.pop("link")) if e["kind"] == EventKind.JOINED else None
        e["campaign_id"] = found["id"] if found else None
        e["campaign_name"] = found["name"] if found else None


def _event(row: asyncpg.Record) -> dict[str, Any]:
    """An event with the details its kind keeps in `data` read out, for the page's words."""
    event = dict(row)
    data = event["data"]
    details = data if isinstance(data, dict) else {}
    # A gate lists the channels it asked for; rows older than that list keep only their count.
    shown = details.get("missing") if details else data
    count = len(shown) if isinstance(shown, list) else _int(shown)
    event["missing"] = count if event["kind"] == EventKind.GATE_SHOWN else None
    event["checks"] = _int(details.get("checks"))
    event["code"] = _str(details.get("code"))
    event["reason"] = _str(details.get("reason"))
    event["link"] = _str(details.get("link"))
    return event


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class Visitors:
    """The visitors page's and the owner API's read side, over the process's pool."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def search(
        self, query: str, bot_ids: list[int] | None, page: int, per_page: int
    ) -> tuple[list[dict[str, Any]], bool]:
        """See `search`."""
        return await search(self.pool, query, bot_ids, page, per_page)

    async def visitor(
        self, bot_id: int, user_id: int, timeline_limit: int, before: int | None = None
    ) -> dict[str, Any]:
        """See `visitor`."""
        return await visitor(self.pool, bot_id, user_id, timeline_limit, before)

    async def timeline(
        self, bot_id: int, user_id: int, before: int | None, limit: int
    ) -> tuple[list[dict[str, Any]], int | None]:
        """See `timeline`."""
        return await timeline(self.pool, bot_id, user_id, before, limit)
