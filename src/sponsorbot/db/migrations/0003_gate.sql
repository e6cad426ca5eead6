-- Bots, channels, content and the forced-join gate; the owner API's tokens; events.
-- Every growing table carries bot_id (the shard key); no query joins across bots.

-- Owner API tokens: only the sha256 of the token is kept, the token is shown once.
CREATE TABLE api_tokens (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         text NOT NULL,
    role         text NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'analyst')),
    token_hash   bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);

-- Per-bot settings of the gate feature.
CREATE TABLE bot_settings (
    bot_id          bigint PRIMARY KEY REFERENCES bots (id) ON DELETE CASCADE
                    DEFERRABLE INITIALLY DEFERRED,
    storage_chat_id bigint,                         -- where API uploads are posted for a file_id
    texts           jsonb NOT NULL DEFAULT '{}',    -- {"en": {"key": "text"}, "fa": {...}}
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- Channels (or supergroups) the bot administers, with the result of the last rights check.
CREATE TABLE channels (
    bot_id           bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE
                     DEFERRABLE INITIALLY DEFERRED,
    chat_id          bigint NOT NULL,
    title            text NOT NULL,
    username         text,
    chat_type        text NOT NULL,
    invite_link      text,                          -- made once by the bot for private chats
    invite_requests  boolean NOT NULL DEFAULT false, -- the link creates join requests
    status           text NOT NULL DEFAULT 'ok'
                     CHECK (status IN ('ok', 'missing_rights', 'unreachable')),
    missing          text[] NOT NULL DEFAULT '{}',  -- the rights to grant when missing_rights
    last_error       text,
    checked_at       timestamptz NOT NULL DEFAULT now(),
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bot_id, chat_id)
);

-- The gate: an ordered list of channels per bot.
CREATE TABLE gate_channels (
    bot_id         bigint NOT NULL,
    chat_id        bigint NOT NULL,
    position       integer NOT NULL,
    request_counts boolean NOT NULL DEFAULT false,  -- a pending join request counts as joined
    PRIMARY KEY (bot_id, chat_id),
    FOREIGN KEY (bot_id, chat_id) REFERENCES channels (bot_id, chat_id) ON DELETE CASCADE
        DEFERRABLE INITIALLY DEFERRED
);

-- Join requests the bot has seen (chat_join_request) and what became of them.
CREATE TABLE join_requests (
    bot_id       bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE
                 DEFERRABLE INITIALLY DEFERRED,
    chat_id      bigint NOT NULL,
    user_id      bigint NOT NULL,
    status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'declined')),
    requested_at timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bot_id, user_id, chat_id)
);

CREATE TABLE contents (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bot_id        bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE
                  DEFERRABLE INITIALLY DEFERRED,
    code          text NOT NULL,                   -- random base62, the start payload
    kind          text NOT NULL CHECK (kind IN ('document', 'video', 'photo', 'text', 'batch')),
    items         jsonb NOT NULL,                  -- [{"kind", "file_id" | "text", "caption"}]
    caption       text,
    protect       boolean NOT NULL DEFAULT true,
    auto_delete_s integer NOT NULL DEFAULT 0 CHECK (auto_delete_s >= 0),
    enabled       boolean NOT NULL DEFAULT true,
    created_by    text NOT NULL,                   -- "api:<token name>" or "tg:<user id>"
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (bot_id, code)
);
CREATE INDEX contents_by_bot ON contents (bot_id, id);

-- Telegram users allowed to upload by sending files to the bot.
CREATE TABLE uploaders (
    bot_id   bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    user_id  bigint NOT NULL,
    note     text,
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bot_id, user_id)
);

-- An uploader's open /batch: the items gathered so far.
CREATE TABLE upload_batches (
    bot_id     bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    user_id    bigint NOT NULL,
    items      jsonb NOT NULL DEFAULT '[]',
    started_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bot_id, user_id)
);

-- The visitor's open gate message, so a second link replaces it instead of piling up.
ALTER TABLE people
    ADD COLUMN gate_content_id bigint,
    ADD COLUMN gate_ref        text,
    ADD COLUMN gate_checks     integer NOT NULL DEFAULT 0;

-- Statistics: one row per thing that happened.
CREATE TABLE events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bot_id     bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    at         timestamptz NOT NULL DEFAULT now(),
    kind       text NOT NULL CHECK (kind IN (
                   'started', 'gate_shown', 'gate_passed', 'content_sent', 'unknown_code',
                   'joined', 'left', 'join_request', 'channel_unknown')),
    user_id    bigint,
    content_id bigint,
    chat_id    bigint,
    data       jsonb
);
CREATE INDEX events_by_bot ON events (bot_id, at);
