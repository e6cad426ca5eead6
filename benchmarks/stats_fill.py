"""The statistics benchmark's data: a year of visits to several bots, written in set-based SQL
one UTC month at a time (visits with an evening rhythm on the workspace's clock, gates, joins
through campaign links, leaves, people, the sender's per-minute counts), in the shapes the
gate's handlers write. `benchmarks/stats.py` runs it, then the roll-up and the pages."""

from __future__ import annotations

import argparse
import hashlib
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from sponsorbot.engine.token_box import TokenBox

Log = Callable[[str], None]

CONTENTS_PER_BOT = 50
FIXED_CHANNELS = 3  # per bot, always in its gate; a running campaign's channel comes first
# A throwaway installation's key: the bots' tokens are sealed with it, nothing else.
SECRET = "stats-benchmark-secret-key-not-for-anything-real"

# Visits per hour of the workspace's clock, relative: quiet at dawn, busiest late evening.
RHYTHM = [
    0.55, 0.35, 0.22, 0.14, 0.10, 0.09, 0.12, 0.20, 0.32, 0.42, 0.50, 0.56,
    0.60, 0.62, 0.62, 0.66, 0.72, 0.82, 0.98, 1.15, 1.35, 1.50, 1.45, 0.95,
]  # fmt: skip
# What a visit is (cumulative shares): a code nobody knows, a gate left unpassed, a gate
# passed after joining, or content at once (the visitor is in every channel already).
P_UNKNOWN, P_ABANDON, P_GATED = 0.04, 0.12, 0.60
P_NEW = 0.35  # a visit by someone the bot has not seen before
P_CAMPAIGN = 0.75  # a running campaign's channel is among the ones a gate asks for
P_LEFT = 0.12  # a join undone later
P_BLOCKED = 0.07  # people who block the bot after their last visit


def events_per_visit(campaign_share: float) -> float:
    """The events one visit makes on average (to size the visits for `--events`)."""
    k = (1 + FIXED_CHANNELS) / 2 + P_CAMPAIGN * campaign_share  # channels a gate asks for
    abandon_joins = (FIXED_CHANNELS - 1) / 2 * 0.5 + P_CAMPAIGN * campaign_share * 0.3
    joins = (P_GATED - P_ABANDON) * k + (P_ABANDON - P_UNKNOWN) * abandon_joins
    return (
        P_UNKNOWN * 2
        + (P_ABANDON - P_UNKNOWN) * 2
        + (P_GATED - P_ABANDON) * 4
        + (1 - P_GATED) * 3
        + joins * (1 + P_LEFT)
    )


# --- the fill -------------------------------------------------------------------------------

BOT_ROW = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash,
                  created_at)
VALUES ($1, $2, $3, $4, 'webhook', $5, $6, $7)
"""
BENCH_TABLES = """
CREATE UNLOGGED TABLE bench_bots (idx int, id bigint, weight float8, chats bigint[],
                                  private_link text);
CREATE UNLOGGED TABLE bench_content (bot_id bigint, idx int, id bigint);
CREATE UNLOGGED TABLE bench_campaigns (campaign_id bigint, bot_id bigint, starts timestamptz,
                                       ends timestamptz, chat bigint, link text);
"""
CHANNELS = """
INSERT INTO channels (bot_id, chat_id, title, username, chat_type, invite_link, created_at)
SELECT b.id, b.chats[j], format('Channel %s of @bench%s_bot', j, b.idx),
       CASE WHEN j < $2 THEN format('bench%s_ch%s', b.idx, j) END, 'channel',
       CASE WHEN j = $2 THEN b.private_link END, $1::timestamptz
FROM bench_bots b, generate_series(1, $2) j
"""
GATE = """
INSERT INTO gate_channels (bot_id, chat_id, position)
SELECT b.id, b.chats[j], j FROM bench_bots b, generate_series(1, $1) j
"""
CONTENTS = """
WITH made AS (
    INSERT INTO contents (bot_id, code, kind, items, caption, created_by, created_at)
    SELECT b.id,
           format('b%sc%s%s', b.idx, lpad(j::text, 3, '0'), substr(md5(random()::text), 1, 8)),
           (ARRAY['document', 'video', 'photo', 'text', 'batch'])[1 + j % 5],
           CASE WHEN j % 5 = 3
                THEN jsonb_build_array(jsonb_build_object('kind', 'text',
                         'text', format('متن شماره %s — text number %s', j, j)))
                ELSE jsonb_build_array(jsonb_build_object(
                         'kind',
                         (ARRAY['document', 'video', 'photo', 'text', 'document'])[1 + j % 5],
                         'file_id', 'BQACAgIAAx' || md5(b.idx || '-' || j))) END,
           CASE WHEN j % 3 <> 0 THEN format('قسمت %s — episode %s', j, j) END,
           'api:bench', $1::timestamptz + (j * interval '1 day')
    FROM bench_bots b, generate_series(0, $2 - 1) j
    ORDER BY b.idx, j
    RETURNING id, bot_id
)
INSERT INTO bench_content (bot_id, idx, id)
SELECT bot_id, (row_number() OVER (PARTITION BY bot_id ORDER BY id) - 1)::int, id FROM made
"""
CAMPAIGN_ROW = """
INSERT INTO campaigns (name, chat_id, chat_title, chat_username, goal_joins, starts_at, ends_at,
                       status, status_at, created_by, created_at)
VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7::timestamptz, $8, coalesce($7, $6), 'api:bench',
        $6)
RETURNING id
"""
CAMPAIGN_BOTS = """
WITH cb AS (
    INSERT INTO campaign_bots (campaign_id, bot_id, invite_link)
    SELECT $1, b.id, format('https://t.me/+camp%sbot%s%s', $1::bigint, b.idx,
                            substr(md5(random()::text), 1, 6))
    FROM bench_bots b WHERE b.idx = ANY ($2::int[])
    RETURNING campaign_id, bot_id, invite_link
), ch AS (
    INSERT INTO channels (bot_id, chat_id, title, username, chat_type, created_at)
    SELECT bot_id, $3::bigint, $4::text, $5::text, 'channel', $6::timestamptz FROM cb
)
INSERT INTO bench_campaigns (campaign_id, bot_id, starts, ends, chat, link)
SELECT campaign_id, bot_id, $6, coalesce($7::timestamptz, 'infinity'), $3, invite_link FROM cb
"""
RUNNING_IN_GATE = """
INSERT INTO gate_channels (bot_id, chat_id, position)
SELECT bot_id, chat, 0 FROM bench_campaigns WHERE ends = 'infinity'
"""
# Expected visits per bot and hour: bot size x hour of the local day x a busier Thursday and
# Friday x a year of growth; rounded at random so that the sum stays near $2.
HOURS = """
CREATE UNLOGGED TABLE bench_hours AS
WITH w AS (
    SELECT b.id AS bot_id, h AS hour,
           b.weight
           * ($4::float8[])[extract(hour FROM h AT TIME ZONE $3::text)::int + 1]
           * CASE WHEN extract(isodow FROM h AT TIME ZONE $3) IN (4, 5) THEN 1.2 ELSE 1.0 END
           * (0.6 + 0.8 * extract(epoch FROM h - $1::timestamptz)
                  / greatest(extract(epoch FROM $5::timestamptz - $1::timestamptz), 1))
           AS w
    FROM bench_bots b,
         generate_series(date_trunc('hour', $1::timestamptz), $5::timestamptz, interval '1 hour') h
)
SELECT bot_id, hour, floor($2::float8 * w / sum(w) OVER () + random())::int AS n FROM w
"""
# One row per visit: who (a new person, or one seen before, recent ones more likely), which
# content (a few items get most opens), what happened, and the channels the gate asked for.
VISITS = f"""
CREATE UNLOGGED TABLE bench_visits AS
WITH raw AS (
    SELECT h.bot_id, h.hour + random() * interval '1 hour' AS at,
           random() AS r_kind, random() AS r_content, random() AS r_new, random() AS r_who,
           random() AS r_k, random() AS r_rot, random() AS r_camp, random() AS r_join
    FROM bench_hours h, generate_series(1, h.n)
), firsts AS (
    SELECT raw.*, row_number() OVER (PARTITION BY bot_id ORDER BY at) = 1 OR r_new < {P_NEW}
           AS is_new
    FROM raw WHERE at < $1
), counted AS (
    SELECT firsts.*, count(*) FILTER (WHERE is_new) OVER (
               PARTITION BY bot_id ORDER BY at ROWS UNBOUNDED PRECEDING) AS known
    FROM firsts
), typed AS (
    SELECT c.bot_id, c.at,
           1000000000 + CASE WHEN c.is_new THEN c.known
                             ELSE greatest(1, c.known - floor(c.known * c.r_who * c.r_who)::bigint)
                        END AS user_id,
           c.is_new,
           bc.id AS content_id,
           CASE WHEN c.r_kind < {P_UNKNOWN} THEN 'unknown'
                WHEN c.r_kind < {P_ABANDON} THEN 'abandon'
                WHEN c.r_kind < {P_GATED} THEN 'gated'
                ELSE 'direct' END AS kind,
           ARRAY(SELECT b.chats[(floor(c.r_rot * {FIXED_CHANNELS})::int + i)
                                % {FIXED_CHANNELS} + 1]
                 FROM generate_series(0, floor(c.r_k * {FIXED_CHANNELS})::int) i) AS fixed,
           CASE WHEN c.r_camp < {P_CAMPAIGN} THEN cw.chat END AS camp_chat,
           cw.link AS camp_link, b.chats[{FIXED_CHANNELS}] AS private_chat,
           b.private_link, c.r_join
    FROM counted c
    JOIN bench_bots b ON b.id = c.bot_id
    JOIN bench_content bc
      ON bc.bot_id = c.bot_id AND bc.idx = floor({CONTENTS_PER_BOT} * c.r_content ^ 2.2)::int
    LEFT JOIN bench_campaigns cw ON cw.bot_id = c.bot_id AND c.at >= cw.starts AND c.at < cw.ends
)
SELECT bot_id, at, user_id, is_new, content_id, kind,
       CASE WHEN kind IN ('gated', 'abandon')
            THEN CASE WHEN camp_chat IS NULL THEN fixed ELSE camp_chat || fixed END END
           AS missing,
       camp_chat, camp_link, private_chat, private_link,
       CASE WHEN kind = 'abandon' THEN floor(r_join * (cardinality(fixed) + 1))::int END
           AS abandon_joins
FROM typed
"""
# One row per join: every channel of a passed gate, some of an abandoned one; the first join
# names the gate's content (a gate counts once in its funnel), one through a campaign's link
# names the link. Some leave again, mostly soon.
JOINS = f"""
CREATE UNLOGGED TABLE bench_joins AS
SELECT j.*, CASE WHEN random() < {P_LEFT}
                 THEN j.at + interval '1 minute' * (5 + 43200 * random() ^ 3) END AS left_at
FROM (
    SELECT v.bot_id, v.at + m.o * interval '15 seconds' AS at, v.user_id, m.chat AS chat_id,
           CASE WHEN m.o = 1 THEN v.content_id END AS content_id,
           CASE WHEN m.chat = v.camp_chat THEN v.camp_link
                WHEN m.chat = v.private_chat THEN v.private_link END AS link
    FROM bench_visits v, unnest(v.missing) WITH ORDINALITY AS m (chat, o)
    WHERE v.kind = 'gated' OR (v.kind = 'abandon' AND m.o <= v.abandon_joins)
) j
"""
STAGING_INDEXES = """
CREATE INDEX ON bench_visits (at);
CREATE INDEX ON bench_joins (at);
CREATE INDEX ON bench_joins (left_at) WHERE left_at IS NOT NULL;
ANALYZE bench_visits;
ANALYZE bench_joins;
"""
# The events of one UTC month [$1, $2), in time order as they arrive; none after $3 (now).
MONTH_EVENTS = """
INSERT INTO events (bot_id, at, kind, user_id, content_id, chat_id, data)
SELECT bot_id, at, kind, user_id, content_id, chat_id, data FROM (
    SELECT bot_id, at, 'started' AS kind, user_id,
           CASE WHEN kind <> 'unknown' THEN content_id END AS content_id,
           NULL::bigint AS chat_id, NULL::jsonb AS data
    FROM v
  UNION ALL
    SELECT bot_id, at + interval '1 millisecond', 'unknown_code', user_id, NULL, NULL,
           jsonb_build_object('code', 'x' || substr(md5(user_id::text || at::text), 1, 11))
    FROM v WHERE kind = 'unknown'
  UNION ALL
    SELECT bot_id, at + interval '1 second', 'gate_shown', user_id, content_id, NULL,
           jsonb_build_object('missing', to_jsonb(missing))
    FROM v WHERE kind IN ('gated', 'abandon')
  UNION ALL
    SELECT bot_id, CASE WHEN kind = 'gated'
                        THEN at + (cardinality(missing) + 1) * interval '15 seconds'
                        ELSE at + interval '2 milliseconds' END,
           'gate_passed', user_id, content_id, NULL,
           jsonb_build_object('checks', CASE WHEN kind = 'gated' THEN 2 ELSE 1 END)
    FROM v WHERE kind IN ('gated', 'direct')
  UNION ALL
    SELECT bot_id, CASE WHEN kind = 'gated'
                        THEN at + (cardinality(missing) + 1) * interval '15 seconds'
                             + interval '1 second'
                        ELSE at + interval '1 second' END,
           'content_sent', user_id, content_id, NULL, NULL
    FROM v WHERE kind IN ('gated', 'direct')
  UNION ALL
    SELECT bot_id, at, 'joined', user_id, content_id, chat_id,
           CASE WHEN link IS NOT NULL THEN jsonb_build_object('link', link) END
    FROM bench_joins WHERE at >= $1 AND at < $2
  UNION ALL
    SELECT bot_id, left_at, 'left', user_id, NULL, chat_id, '{"status": "left"}'::jsonb
    FROM bench_joins WHERE left_at >= $1 AND left_at < $2
) e
WHERE at >= $1::timestamptz AND at < $2::timestamptz AND at < $3::timestamptz
ORDER BY at
"""
MONTH_VISITS = (
    "WITH v AS MATERIALIZED (SELECT * FROM bench_visits"
    " WHERE at >= $1::timestamptz - interval '1 hour' AND at < $2::timestamptz)"
)
# The sender's minutes of that month: each gate, delivery and unknown-code answer is a message;
# now and then a 429.
MONTH_SENDS = """
INSERT INTO send_stats (bot_id, minute, sent, failed, throttled)
SELECT bot_id, date_trunc('minute', at),
       count(*) FILTER (WHERE kind IN ('gate_shown', 'content_sent', 'unknown_code')),
       0, CASE WHEN random() < 0.02 THEN 1 + floor(random() * 3)::int ELSE 0 END
FROM events WHERE at >= $1 AND at < $2
GROUP BY 1, 2
HAVING count(*) FILTER (WHERE kind IN ('gate_shown', 'content_sent', 'unknown_code')) > 0
ORDER BY 2, 1
"""
PEOPLE = f"""
INSERT INTO people (bot_id, user_id, first_seen, last_seen, language, blocked_at,
                    username, first_name, last_name)
SELECT bot_id, user_id, first_seen, last_seen, language,
       CASE WHEN random() < {P_BLOCKED} AND blocked < $1 THEN blocked END,
       CASE WHEN random() < 0.6 THEN lower(latin) || '_' || (user_id % 100000) END,
       CASE WHEN language = 'fa' THEN persian ELSE latin END,
       CASE WHEN random() < 0.5
            THEN (ARRAY['احمدی', 'محمدی', 'حسینی', 'رضایی', 'کریمی', 'Ahmadi', 'Karimi',
                        'Rahimi', 'Moradi', 'Jafari'])[1 + floor(random() * 10)::int] END
FROM (
    SELECT bot_id, user_id, min(at) AS first_seen, max(at) AS last_seen,
           max(at) + random() * interval '20 days' AS blocked,
           CASE WHEN random() < 0.8 THEN 'fa' ELSE 'en' END AS language,
           (ARRAY['علی', 'محمد', 'زهرا', 'فاطمه', 'رضا', 'مریم', 'حسین', 'سارا', 'امیر',
                  'نگار'])[1 + (user_id % 10)::int] AS persian,
           (ARRAY['Ali', 'Mohammad', 'Zahra', 'Fatemeh', 'Reza', 'Maryam', 'Hossein', 'Sara',
                  'Amir', 'Negar'])[1 + (user_id % 10)::int] AS latin
    FROM bench_visits GROUP BY bot_id, user_id
) p
ORDER BY first_seen  -- a person's row is written at the first visit
"""
CAMPAIGN_MEMBERS = """
INSERT INTO campaign_members (campaign_id, user_id, bot_id, gate_joined_at, leaves)
SELECT c.campaign_id, j.user_id, (array_agg(j.bot_id ORDER BY j.at))[1], min(j.at),
       coalesce((array_agg(j.left_at ORDER BY j.left_at)
                 FILTER (WHERE j.left_at IS NOT NULL AND j.left_at < $1))[1:3], '{}')
FROM bench_joins j JOIN bench_campaigns c ON c.bot_id = j.bot_id AND c.link = j.link
WHERE j.at < $1
GROUP BY c.campaign_id, j.user_id
"""
BUSIEST_VISITOR = """
SELECT user_id FROM bench_visits WHERE bot_id = $1 GROUP BY user_id
ORDER BY count(*) DESC, user_id LIMIT 1
"""
DROP_STAGING = """
DROP TABLE IF EXISTS bench_hours, bench_visits, bench_joins, bench_bots, bench_content,
                     bench_campaigns
"""
COUNTED = ("events", "people", "send_stats", "contents", "channels", "campaign_members")


def month_starts(first: datetime, last: datetime) -> list[datetime]:
    """The UTC months from the one holding `first` to the one holding `last`."""
    month = first.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    months = []
    while month <= last:
        months.append(month)
        month = (month + timedelta(days=32)).replace(day=1)
    return months


def bot_weights(count: int) -> list[float]:
    """Bots of different sizes: the first is the busiest."""
    return [1 / (i + 1) ** 0.6 for i in range(count)]


async def fill(conn: asyncpg.Connection, args: argparse.Namespace, log: Log) -> dict[str, Any]:
    """Fill the database; returns the fill's figures and what the pages need to know."""
    began = time.perf_counter()
    now: datetime = await conn.fetchval("SELECT now()")
    start = now - timedelta(days=args.days)
    superuser = await conn.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    await conn.execute(
        "SET synchronous_commit = off; SET work_mem = '256MB'; SET maintenance_work_mem = '512MB'"
    )
    await conn.execute("SELECT setseed($1)", args.seed)
    for month in month_starts(start, now + timedelta(days=31)):
        await conn.execute("SELECT sponsorbot_events_month($1)", month)
    box = TokenBox(SECRET.encode())
    bot_ids = [7_000_000_001 + i for i in range(args.bots)]
    for i, bot_id in enumerate(bot_ids):
        token = f"{bot_id}:AA{secrets.token_urlsafe(24)}"
        await conn.execute(
            BOT_ROW,
            bot_id,
            f"bench{i}_bot",
            box.seal(token),
            token[-4:],
            f"bench-{i}-{secrets.token_hex(8)}",
            hashlib.sha256(secrets.token_bytes(16)).digest(),
            start,
        )
    await conn.execute(BENCH_TABLES)
    weights = bot_weights(args.bots)
    await conn.executemany(
        "INSERT INTO bench_bots VALUES ($1, $2, $3, $4, $5)",
        [
            (
                i,
                bot_id,
                weights[i],
                [-1001000000000 - i * 10 - j for j in range(1, FIXED_CHANNELS + 1)],
                f"https://t.me/+private{i}{secrets.token_hex(4)}",
            )
            for i, bot_id in enumerate(bot_ids)
        ],
    )
    await conn.execute(CHANNELS, start, FIXED_CHANNELS)
    await conn.execute(GATE, FIXED_CHANNELS)
    await conn.execute(CONTENTS, start, CONTENTS_PER_BOT)
    campaign_share = await make_campaigns(conn, args.bots, start, now)
    await conn.execute(RUNNING_IN_GATE)
    visits = round(args.events / events_per_visit(campaign_share))
    await conn.execute(HOURS, start, visits, args.zone, RHYTHM, now)
    await conn.execute(VISITS, now)
    await conn.execute(JOINS)
    await conn.execute(STAGING_INDEXES)
    log(f"staged {visits:,} visits in {time.perf_counter() - began:.1f} s")
    if superuser:
        # Every row refers to the bots made above: no need to check each one's foreign key.
        await conn.execute("SET session_replication_role = replica")
    months = month_starts(start, now)
    for month in months:
        after = (month + timedelta(days=32)).replace(day=1)
        await conn.execute(MONTH_VISITS + MONTH_EVENTS, month, after, now)
        await conn.execute(MONTH_SENDS, month, after)
        log(f"  {month:%Y-%m}: {time.perf_counter() - began:.1f} s")
    await conn.execute(PEOPLE, now)
    await conn.execute("RESET session_replication_role")
    await conn.execute(CAMPAIGN_MEMBERS, now)
    busiest = await conn.fetchval(BUSIEST_VISITOR, bot_ids[0])
    await conn.execute(DROP_STAGING)
    fill_s = time.perf_counter() - began
    log(f"filled in {fill_s:.1f} s; vacuum and analyze")
    began = time.perf_counter()
    # What autovacuum would have done over the year: statistics and the visibility map.
    await conn.execute("VACUUM (ANALYZE)")
    vacuum_s = time.perf_counter() - began
    rows = {t: int(await conn.fetchval(f"SELECT count(*) FROM {t}")) for t in COUNTED}
    return {
        "fill_s": round(fill_s, 1),
        "vacuum_s": round(vacuum_s, 1),
        "rows": rows,
        "events": rows["events"],
        "data_from": start.isoformat(),
        "data_until": now.isoformat(),
        "bot": bot_ids[0],
        "visitor": int(busiest) if busiest is not None else None,
    }


async def make_campaigns(
    conn: asyncpg.Connection, bots: int, start: datetime, now: datetime
) -> float:
    """Sponsor campaigns one after another over the span, each on about two bots in three, the
    last still running; returns the share of bot-time a campaign runs (for sizing)."""
    count = max(1, min(6, (now - start).days // 20))
    length = (now - start) / count
    covered = 0.0
    for c in range(count):
        starts = start + length * c + timedelta(days=1 if c else 0)
        last = c == count - 1
        ends = None if last else start + length * (c + 1) - timedelta(days=1)
        on = [i for i in range(bots) if (i + c) % 3 != 0] or [0]
        chat = -1009000000000 - c
        campaign_id = await conn.fetchval(
            CAMPAIGN_ROW,
            f"Sponsor {c + 1}",
            chat,
            f"اسپانسر {c + 1} — Sponsor {c + 1}",
            f"sponsor{c + 1}",
            5000,
            starts,
            ends,
            "running" if last else "ended",
        )
        await conn.execute(
            CAMPAIGN_BOTS,
            campaign_id,
            on,
            chat,
            f"Sponsor {c + 1}",
            f"sponsor{c + 1}",
            starts,
            ends,
        )
        covered += ((ends or now) - starts) / (now - start) * len(on) / bots
    return covered


# --- the roll-up ----------------------------------------------------------------------------

# The roll-up's tables, whichever the schema has (stats_rollup is its progress, not a roll-up).
