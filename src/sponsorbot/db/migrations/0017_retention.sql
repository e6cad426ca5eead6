-- Retention for every table that grows (the security review, H2): the clean-up finds what is
-- past its time through these, a batch at a time, without scanning the table.
CREATE INDEX signin_failures_at ON signin_failures (at);
CREATE INDEX join_requests_declined ON join_requests (updated_at) WHERE status = 'declined';
CREATE INDEX inbox_dead_handled ON inbox (handled_at) WHERE status = 'dead';
