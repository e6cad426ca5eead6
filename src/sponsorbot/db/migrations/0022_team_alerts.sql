-- The team's Telegram (features/alerts): a member links their own chat through one of the
-- workspace's bots and is told there what needs them, with buttons that act.
--
-- None of these tables holds a bot_id: they are the workspace's, kept on the coordinator on
-- Citus (db/citus_schema.py), so they point at bots by a plain column and clean up after a
-- removed bot themselves.

-- A member's linked chat: the bot they talk to and their Telegram id there.
CREATE TABLE team_links (
    user_id    bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    via_bot    bigint NOT NULL,
    chat_id    bigint NOT NULL,
    tg_name    text NOT NULL DEFAULT '',
    linked_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX team_links_chat ON team_links (via_bot, chat_id);

-- One-time codes a member sends to a bot to link their chat (sha256 of the code).
CREATE TABLE team_link_codes (
    code_hash   bytea PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    via_bot     bigint NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX team_link_codes_user ON team_link_codes (user_id);

-- What each member wants: kinds turned off, quiet hours (minutes of the day in the
-- workspace's zone; from > to wraps midnight), the daily digest and the last day it went.
CREATE TABLE alert_prefs (
    user_id     bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    muted       text[] NOT NULL DEFAULT '{}',
    quiet_from  smallint CHECK (quiet_from BETWEEN 0 AND 1439),
    quiet_to    smallint CHECK (quiet_to BETWEEN 0 AND 1439),
    digest      boolean NOT NULL DEFAULT false,
    digest_on   date,
    CHECK ((quiet_from IS NULL) = (quiet_to IS NULL))
);

-- The bot every member links through, when the owner picks one (NULL: any of the bots).
ALTER TABLE workspace ADD COLUMN control_bot bigint;

-- What the team is told about. `once` alerts are about one thing and never repeat (an order
-- submitted, a campaign ended); the others gather repeats while they wait to go out (twenty
-- dead updates of one bot are one alert with count 20).
CREATE TABLE alerts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text NOT NULL,
    key         text NOT NULL,
    once        boolean NOT NULL,
    about_bot   bigint,
    -- One member's alone: what waited for them when they linked their chat.
    only_user   bigint REFERENCES users (id) ON DELETE CASCADE,
    -- What it is about (an order's submission, a transfer): a member told of it once, by
    -- whichever alert came first, is not told again.
    subject     text,
    data        jsonb NOT NULL DEFAULT '{}',
    count       integer NOT NULL DEFAULT 1 CHECK (count > 0),
    created_at  timestamptz NOT NULL DEFAULT now(),
    due_at      timestamptz NOT NULL DEFAULT now(),
    fanned_at   timestamptz
);
CREATE UNIQUE INDEX alerts_once ON alerts (key) WHERE once;
CREATE UNIQUE INDEX alerts_gathering ON alerts (key) WHERE NOT once AND fanned_at IS NULL;
CREATE INDEX alerts_due ON alerts (due_at) WHERE fanned_at IS NULL;
CREATE INDEX alerts_created ON alerts (created_at);

-- Each member's copy of an alert: due now, or when their quiet hours end.
CREATE TABLE alert_deliveries (
    alert_id  bigint NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
    user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    due_at    timestamptz NOT NULL,
    sent_at   timestamptz,
    PRIMARY KEY (alert_id, user_id)
);
CREATE INDEX alert_deliveries_due ON alert_deliveries (due_at) WHERE sent_at IS NULL;

-- Where the collector has read to (the order log's last id, dead updates counted per bot)
-- and the conditions it has told about that still hold (a bot's token refused).
CREATE TABLE alert_marks (
    name   text PRIMARY KEY,
    value  bigint NOT NULL
);

-- When TronGrid last refused a shop's API key (the shop's runner and watcher set it).
ALTER TABLE shop_settings ADD COLUMN key_refused_at timestamptz;
