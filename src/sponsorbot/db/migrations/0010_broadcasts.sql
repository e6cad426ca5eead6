-- Broadcasts: one message to a chosen part of a bot's audience, sent in the background.

-- Background outbox rows (priority 10 and up) are claimed by the sender just before it sends
-- them. Until then a feature may withdraw them (a paused or cancelled broadcast); a row claimed
-- by a sender that stopped without recording an outcome is never sent again (it may have gone).
ALTER TABLE outbox ADD COLUMN taken_at timestamptz;

CREATE TABLE broadcasts (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bot_id        bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE,
    title         text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    method        text NOT NULL,                 -- sendMessage, sendPhoto, sendVideo, sendDocument
    params        jsonb NOT NULL,                -- the call without chat_id, checked before saving
    post          jsonb NOT NULL,                -- the post as the owner wrote it (for editing)
    audience      jsonb NOT NULL,                -- the filters, as chosen
    paid          boolean NOT NULL DEFAULT false,-- allow_paid_broadcast: above the free limit
    status        text NOT NULL DEFAULT 'draft'
                  CHECK (status IN ('draft', 'scheduled', 'sending', 'paused', 'cancelled', 'done')),
    pause_reason  text,                          -- 'owner' or 'token_refused'
    scheduled_at  timestamptz,
    started_at    timestamptz,
    finished_at   timestamptz,
    cursor        bigint,                        -- the last person looked at while choosing
    queued_to     bigint NOT NULL DEFAULT 0,     -- every waiting recipient is after this one
    chosen        boolean NOT NULL DEFAULT false,-- every recipient is chosen
    estimated     integer NOT NULL DEFAULT 0,    -- the audience counted at the start
    recipients    integer NOT NULL DEFAULT 0,    -- chosen so far
    sent          integer NOT NULL DEFAULT 0,
    blocked       integer NOT NULL DEFAULT 0,
    failed        integer NOT NULL DEFAULT 0,
    unknown       integer NOT NULL DEFAULT 0,
    created_by    text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX broadcasts_by_bot ON broadcasts (bot_id, id);
CREATE INDEX broadcasts_live ON broadcasts (status) WHERE status IN ('scheduled', 'sending', 'paused');

-- One row per (broadcast, person): nobody is queued twice. waiting -> queued (an outbox row)
-- -> sent | blocked | failed | unknown; a withdrawn row goes back to waiting.
CREATE TABLE broadcast_recipients (
    broadcast_id bigint NOT NULL REFERENCES broadcasts (id) ON DELETE CASCADE,
    user_id      bigint NOT NULL,
    status       text NOT NULL DEFAULT 'waiting'
                 CHECK (status IN ('waiting', 'queued', 'sent', 'blocked', 'failed', 'unknown')),
    outbox_id    bigint,
    error        text,
    done_at      timestamptz,
    PRIMARY KEY (broadcast_id, user_id)
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02);
CREATE INDEX broadcast_recipients_waiting ON broadcast_recipients (broadcast_id, user_id)
    WHERE status = 'waiting';
CREATE INDEX broadcast_recipients_queued ON broadcast_recipients (broadcast_id, outbox_id)
    WHERE status = 'queued';

-- "Passed the gate at least once", for an audience filter, without reading every event.
CREATE INDEX events_passed ON events (bot_id, user_id) WHERE kind = 'gate_passed';

-- The member's own Telegram id, for previews.
ALTER TABLE users ADD COLUMN telegram_id bigint;

-- A broadcast's (or any object's) own history in the audit log.
CREATE INDEX audit_log_target ON audit_log (target, id DESC) WHERE target IS NOT NULL;
