-- Statistics roll-ups in the workspace's time zone, and what the visitors page searches by.
--
-- Every figure a statistics page shows is a count of "facts" (sponsorbot_stat_facts below):
-- the events, plus what they imply (the channels a gate listed, the campaign a join's link
-- belongs to), plus people first seen or blocked, plus the sender's per-minute counts. A
-- periodic job (features/stats/rollup.py) folds the facts of each finished hour, in the
-- workspace's zone, into two tables:
--   stats_hourly  per (bot, hour, kind): the hour-by-hour charts and the heat map;
--   stats_days    per (bot, local day, kind): range totals and the daily series;
--   stats_daily   per (bot, local day, kind, dimension): funnels and top lists;
--   stats_totals  per (bot, kind, dimension), all time: the content list's counts;
-- and the (bot, local day, person) pairs of who was active into stats_visits, for distinct
-- visitor counts. A page reads the roll-ups before stats_rollup.done_until and the facts from
-- there on, so its figures are exact whatever the job's progress.

ALTER TABLE people
    ADD COLUMN username   text,
    ADD COLUMN first_name text,
    ADD COLUMN last_name  text,
    -- A channel was joined while the open gate showed: the content funnel's "joined" counts
    -- a gate once, however many of its channels the person joins.
    ADD COLUMN gate_joined boolean NOT NULL DEFAULT false;
-- New visitors and blocks of the hours not rolled up yet; the visitors page's search.
CREATE INDEX people_first_seen ON people (first_seen);
CREATE INDEX people_blocked ON people (blocked_at) WHERE blocked_at IS NOT NULL;
CREATE INDEX people_by_username ON people (lower(username) text_pattern_ops)
    WHERE username IS NOT NULL;
-- The facts of a span of time, for every bot at once (the roll-up, the live tail): events
-- arrive in time order, so a BRIN index finds a span for almost nothing on every insert.
CREATE INDEX events_by_time ON events USING brin (at);
-- One visitor's timeline.
CREATE INDEX events_by_user ON events (bot_id, user_id, at) WHERE user_id IS NOT NULL;

CREATE TABLE stats_hourly (
    bot_id bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    hour   timestamptz NOT NULL,       -- the start of an hour in the roll-up's zone
    kind   text NOT NULL,
    n      bigint NOT NULL,
    PRIMARY KEY (bot_id, hour, kind)
);
CREATE INDEX stats_hourly_by_hour ON stats_hourly (hour, kind) INCLUDE (n);

CREATE TABLE stats_daily (
    bot_id bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    day    date NOT NULL,              -- a day in the roll-up's zone
    kind   text NOT NULL,
    dim    text NOT NULL DEFAULT '',   -- content id, channel id, campaign id or language
    n      bigint NOT NULL,
    PRIMARY KEY (bot_id, day, kind, dim)
);
CREATE INDEX stats_daily_by_day ON stats_daily (day, kind) INCLUDE (bot_id, dim, n);

CREATE TABLE stats_days (
    bot_id bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    day    date NOT NULL,
    kind   text NOT NULL,
    n      bigint NOT NULL,
    PRIMARY KEY (bot_id, day, kind)
);
CREATE INDEX stats_days_by_day ON stats_days (day) INCLUDE (bot_id, kind, n);

-- All time, whatever the zone: a change of zone re-buckets hours and days, not these.
CREATE TABLE stats_totals (
    bot_id bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    kind   text NOT NULL,
    dim    text NOT NULL DEFAULT '',
    n      bigint NOT NULL,
    PRIMARY KEY (bot_id, kind, dim)
);

CREATE TABLE stats_visits (
    bot_id  bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    day     date NOT NULL,
    user_id bigint NOT NULL,
    PRIMARY KEY (bot_id, day, user_id)
);
CREATE INDEX stats_visits_by_day ON stats_visits (day) INCLUDE (bot_id, user_id);

-- The job's progress: every fact before done_until is in the roll-ups, bucketed in `zone`.
-- A zone other than the workspace's means a rebuild is under way (or due).
CREATE TABLE stats_rollup (
    id          integer PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    zone        text NOT NULL DEFAULT 'UTC',
    done_until  timestamptz,
    totals_until timestamptz,  -- stats_totals holds every fact before this (kept on rezone)
    rebuilt_at  timestamptz
);
INSERT INTO stats_rollup (id) VALUES (1);

-- The facts of [a, b) for the bots `bots` (NULL: every bot). Kinds: every event kind, with the
-- dimension its kind has, plus gate_listed (a channel a shown gate asked for), gate_joined (the
-- first join or join request while the person's gate for a content was open), gate_cleared
-- (a pass after being shown the gate: more than one check), campaign_joined (a join through a
-- campaign's link), visitor_new (by language), blocked, sent and throttled (n of them).
CREATE FUNCTION sponsorbot_stat_facts(a timestamptz, b timestamptz, bots bigint[])
RETURNS TABLE (bot_id bigint, at timestamptz, kind text, dim text, user_id bigint, n bigint)
LANGUAGE sql STABLE AS $$
    SELECT e.bot_id, e.at, e.kind,
           CASE WHEN e.kind IN ('joined', 'left', 'join_request', 'channel_unknown')
                THEN coalesce(e.chat_id::text, '')
                ELSE coalesce(e.content_id::text, '') END,
           e.user_id, 1::bigint
    FROM events e
    WHERE e.at >= a AND e.at < b AND (bots IS NULL OR e.bot_id = ANY (bots))
  UNION ALL
    SELECT e.bot_id, e.at, 'gate_listed', m.chat, e.user_id, 1
    FROM events e, jsonb_array_elements_text(e.data -> 'missing') AS m (chat)
    WHERE e.at >= a AND e.at < b AND (bots IS NULL OR e.bot_id = ANY (bots))
      AND e.kind = 'gate_shown' AND jsonb_typeof(e.data -> 'missing') = 'array'
  UNION ALL
    SELECT e.bot_id, e.at, 'gate_joined', e.content_id::text, e.user_id, 1
    FROM events e
    WHERE e.at >= a AND e.at < b AND (bots IS NULL OR e.bot_id = ANY (bots))
      AND e.kind IN ('joined', 'join_request') AND e.content_id IS NOT NULL
  UNION ALL
    SELECT e.bot_id, e.at, 'gate_cleared', e.content_id::text, e.user_id, 1
    FROM events e
    WHERE e.at >= a AND e.at < b AND (bots IS NULL OR e.bot_id = ANY (bots))
      AND e.kind = 'gate_passed' AND (e.data ->> 'checks')::int > 1
  UNION ALL
    SELECT e.bot_id, e.at, 'campaign_joined', cb.campaign_id::text, e.user_id, 1
    FROM events e JOIN campaign_bots cb
      ON cb.bot_id = e.bot_id AND cb.invite_link = e.data ->> 'link'
    WHERE e.at >= a AND e.at < b AND (bots IS NULL OR e.bot_id = ANY (bots))
      AND e.kind = 'joined'
  UNION ALL
    SELECT p.bot_id, p.first_seen, 'visitor_new', coalesce(p.language, ''), p.user_id, 1
    FROM people p
    WHERE p.first_seen >= a AND p.first_seen < b AND (bots IS NULL OR p.bot_id = ANY (bots))
  UNION ALL
    SELECT p.bot_id, p.blocked_at, 'blocked', '', p.user_id, 1
    FROM people p
    WHERE p.blocked_at >= a AND p.blocked_at < b AND (bots IS NULL OR p.bot_id = ANY (bots))
  UNION ALL
    SELECT s.bot_id, s.minute, k.kind, '', NULL, k.n
    FROM send_stats s,
         LATERAL (VALUES ('sent', s.sent::bigint), ('throttled', s.throttled::bigint)) AS k (kind, n)
    WHERE s.minute >= a AND s.minute < b AND (bots IS NULL OR s.bot_id = ANY (bots)) AND k.n > 0
$$;

-- Minutes of sends are kept as long as events (the roll-up job deletes both), so a change of
-- zone can re-bucket them; a BRIN-like range scan by minute needs this index.
CREATE INDEX send_stats_by_minute ON send_stats (minute);
