-- Retention for every table that grows (the security review, H2): the clean-up finds what is
-- past its time through these, a batch at a time, without scanning the table.
CREATE INDEX signin_failures_at ON signin_failures (at);
CREATE INDEX join_requests_declined ON join_requests (updated_at) WHERE status = 'declined';
CREATE INDEX inbox_dead_handled ON inbox (handled_at) WHERE status = 'dead';
-- A message reference a waiting row still needs is kept (engine/janitor.py DELETE_REFS): the
-- check is an index probe, not a scan of the bot's waiting outbox.
CREATE INDEX outbox_waiting_refs ON outbox (bot_id, uses_ref)
    WHERE status = 'pending' AND uses_ref IS NOT NULL;
