-- The engine: bots, the inbox of updates, the outbox of Bot API calls, leases, people.
-- Every table that grows carries bot_id (the shard key) and no query joins across bots.

CREATE TABLE bots (
    id                  bigint PRIMARY KEY,            -- Telegram's id of the bot
    username            text NOT NULL,
    token_enc           bytea NOT NULL,                -- Fernet, key from SPONSORBOT_SECRET_KEY
    token_tail          text NOT NULL,                 -- last 4 characters, for display
    mode                text NOT NULL CHECK (mode IN ('webhook', 'polling')),
    status              text NOT NULL DEFAULT 'active'
                        CHECK (status IN ('active', 'paused', 'token_refused')),
    webhook_path        text NOT NULL UNIQUE,          -- unguessable URL part
    webhook_secret_hash bytea NOT NULL,                -- sha256 of the secret_token
    poll_offset         bigint NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE inbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bot_id          bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE
                    DEFERRABLE INITIALLY DEFERRED,
    update_id       bigint NOT NULL,
    kind            text NOT NULL,
    chat_key        bigint NOT NULL,                   -- the person the update is about
    payload         jsonb NOT NULL,
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'processing', 'done', 'dead')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    locked_until    timestamptz,
    received_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    handled_at      timestamptz,
    error           text,
    UNIQUE (bot_id, update_id)
) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 0);

-- The claim reads waiting rows in id order and stops after a few: O(batch), not O(queue).
CREATE INDEX inbox_pending ON inbox (id) WHERE status = 'pending';
-- "Does this person have an earlier update still waiting?"
CREATE INDEX inbox_person_pending ON inbox (bot_id, chat_key, id) WHERE status = 'pending';
-- At most one update per person in hand, whatever any query does.
CREATE UNIQUE INDEX inbox_in_hand ON inbox (bot_id, chat_key) WHERE status = 'processing';
CREATE INDEX inbox_lock_expiry ON inbox (locked_until) WHERE status = 'processing';
CREATE INDEX inbox_done ON inbox (handled_at) WHERE status = 'done';
CREATE INDEX inbox_dead ON inbox (bot_id) WHERE status = 'dead';

CREATE TABLE outbox (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bot_id            bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE
                      DEFERRABLE INITIALLY DEFERRED,
    chat_id           bigint NOT NULL,
    method            text NOT NULL,
    params            jsonb NOT NULL,
    priority          smallint NOT NULL DEFAULT 0,     -- lower first: replies 0, broadcasts 10
    not_before        timestamptz NOT NULL DEFAULT now(),
    ref               text,                            -- remember the sent message_id under this key
    uses_ref          text,                            -- fill params.message_id from this key
    inbox_id          bigint,                          -- the update that caused it
    status            text NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'sent', 'failed')),
    attempts          integer NOT NULL DEFAULT 0,
    error             text,
    result_message_id bigint,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    sent_at           timestamptz
) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 0);

CREATE INDEX outbox_pending ON outbox (bot_id, priority, id) WHERE status = 'pending';
CREATE INDEX outbox_finished ON outbox (sent_at) WHERE status <> 'pending';
CREATE INDEX outbox_recent ON outbox (bot_id, sent_at) WHERE status = 'sent';

-- message_id of sent messages by reference key, so a later row can edit or delete them.
CREATE TABLE message_refs (
    bot_id     bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    ref        text NOT NULL,
    chat_id    bigint NOT NULL,
    message_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bot_id, ref)
);
CREATE INDEX message_refs_created ON message_refs (created_at);

CREATE TABLE leases (
    name       text PRIMARY KEY,
    owner      text NOT NULL,
    expires_at timestamptz NOT NULL
);

-- One row per (bot, Telegram user); features add their own columns.
CREATE TABLE people (
    bot_id     bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    user_id    bigint NOT NULL,
    first_seen timestamptz NOT NULL DEFAULT now(),
    last_seen  timestamptz NOT NULL DEFAULT now(),
    language   text,
    blocked_at timestamptz,
    PRIMARY KEY (bot_id, user_id)
);

-- Per bot and minute: messages sent and 429s received (status, metrics, dashboard).
CREATE TABLE send_stats (
    bot_id    bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    minute    timestamptz NOT NULL,
    sent      integer NOT NULL DEFAULT 0,
    failed    integer NOT NULL DEFAULT 0,
    throttled integer NOT NULL DEFAULT 0,
    PRIMARY KEY (bot_id, minute)
);
