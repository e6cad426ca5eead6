-- Conversation state per (bot, person): which step of a dialogue the person is at (an
-- uploader's open batch, later the shop's order dialogue). Read only when a handler asks, written
-- with the update that changes it. Expired rows read as "no conversation"; the janitor drops them.
CREATE TABLE conversations (
    bot_id     bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    user_id    bigint NOT NULL,
    state      text NOT NULL CHECK (length(state) BETWEEN 1 AND 64),
    data       jsonb NOT NULL DEFAULT '{}',
    expires_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bot_id, user_id)
);
CREATE INDEX conversations_expiry ON conversations (expires_at);

-- An open upload batch is now the conversation 'upload:batch'.
INSERT INTO conversations (bot_id, user_id, state, data, expires_at, updated_at)
SELECT bot_id, user_id, 'upload:batch', jsonb_build_object('items', items),
       now() + interval '1 day', started_at
FROM upload_batches
ON CONFLICT (bot_id, user_id) DO NOTHING;
DROP TABLE upload_batches;
