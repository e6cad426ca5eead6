-- Events only grow: one partition per month (UTC) keeps each month's index small and lets a
-- whole month be archived or dropped at once. Rows outside the prepared months land in the
-- default partition; sponsorbot_events_month() moves them out when their month is made.
-- A daily job makes this month's and next month's partitions ahead of time.
ALTER TABLE events RENAME TO events_unpartitioned;
ALTER INDEX events_pkey RENAME TO events_unpartitioned_pkey;
ALTER INDEX events_by_bot RENAME TO events_unpartitioned_by_bot;

CREATE TABLE events (
    -- Named as in 0003: the old table still holds those names while this one is made.
    id         bigint CONSTRAINT events_id_not_null NOT NULL GENERATED ALWAYS AS IDENTITY,
    bot_id     bigint CONSTRAINT events_bot_id_not_null NOT NULL
               CONSTRAINT events_bot_id_fkey REFERENCES bots (id) ON DELETE CASCADE
               DEFERRABLE INITIALLY DEFERRED,
    at         timestamptz CONSTRAINT events_at_not_null NOT NULL DEFAULT now(),
    kind       text CONSTRAINT events_kind_not_null NOT NULL
               CONSTRAINT events_kind_check CHECK (kind IN (
                   'started', 'gate_shown', 'gate_passed', 'content_sent', 'unknown_code',
                   'joined', 'left', 'join_request', 'channel_unknown')),
    user_id    bigint,
    content_id bigint,
    chat_id    bigint,
    data       jsonb,
    CONSTRAINT events_pkey PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
CREATE INDEX events_by_bot ON events (bot_id, at);
CREATE TABLE events_default PARTITION OF events DEFAULT;

CREATE FUNCTION sponsorbot_events_month(day timestamptz) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    first timestamptz := date_trunc('month', day AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    after timestamptz := (date_trunc('month', day AT TIME ZONE 'UTC') + interval '1 month')
                         AT TIME ZONE 'UTC';
    name  text := 'events_' || to_char(day AT TIME ZONE 'UTC', 'YYYYMM');
BEGIN
    IF to_regclass(name) IS NOT NULL THEN
        RETURN name;
    END IF;
    -- The new partition may not be made while the default one holds rows of its month.
    CREATE TEMP TABLE events_moving (LIKE events) ON COMMIT DROP;
    WITH moved AS (
        DELETE FROM events_default WHERE at >= first AND at < after RETURNING *
    )
    INSERT INTO events_moving SELECT * FROM moved;
    EXECUTE format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
                   name, first, after);
    INSERT INTO events OVERRIDING SYSTEM VALUE SELECT * FROM events_moving;
    DROP TABLE events_moving;
    RETURN name;
END
$$;

SELECT sponsorbot_events_month(m)
FROM (SELECT DISTINCT date_trunc('month', at) AS m FROM events_unpartitioned
      UNION SELECT now() UNION SELECT now() + interval '1 month') months;

INSERT INTO events OVERRIDING SYSTEM VALUE
SELECT id, bot_id, at, kind, user_id, content_id, chat_id, data FROM events_unpartitioned;
SELECT setval(pg_get_serial_sequence('events', 'id'), max(id)) FROM events HAVING max(id) > 0;
DROP TABLE events_unpartitioned;
