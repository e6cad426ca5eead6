-- Retries bounded by age, not by count (the security review, H3).
--
-- `attempts` stays the claim counter that fences a handler's commit. `failures` counts only the
-- real errors (a handler's bug, a refusal); `max_attempts` of those make an update dead.
-- Transient failures (Telegram's 5xx and 429, the network, the database) are retried with
-- capped backoff until the update is `retry_for_h` old, counted from `retry_since` when the
-- owner re-drove it and from its receipt otherwise.
ALTER TABLE inbox ADD COLUMN failures integer NOT NULL DEFAULT 0,
                  ADD COLUMN retry_since timestamptz;

-- A re-drive looks for what failed, by bot and time; both tables keep these rows for days.
DROP INDEX inbox_dead;
CREATE INDEX inbox_dead ON inbox (bot_id, received_at) WHERE status = 'dead';
CREATE INDEX outbox_failed ON outbox (bot_id, created_at) WHERE status = 'failed';
