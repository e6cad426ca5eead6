-- Engine hardening: what a bot's state shows beside its status, the time of its last update,
-- the installation key's check value, and dedupe that a restarted update_id sequence survives.

-- A problem that does not stop the bot by itself but needs the owner's eye (shown beside the
-- status): 'conflict' while another program polls the same token, 'token_unreadable' when the
-- token cannot be decrypted with this installation's key.
ALTER TABLE bots
    ADD COLUMN problem    text CHECK (problem IN ('conflict', 'token_unreadable')),
    ADD COLUMN problem_at timestamptz,
    -- When the poller last received an update: after a week without any, Telegram restarts
    -- update ids at random, possibly below the stored offset.
    ADD COLUMN last_update_at timestamptz;

-- One row: a known text sealed with the key. A process whose key cannot open it refuses to
-- start, instead of failing on every bot's token.
CREATE TABLE token_key_check (
    only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    sealed     bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
