-- Fast failover (engine/liveness.py): each worker process registers here and holds a
-- session-level advisory lock (NAMESPACE, lock_key); PostgreSQL releases it the moment the
-- session ends, which is how the others know the worker is gone.
CREATE TABLE workers (
    lock_key   integer PRIMARY KEY,
    owner      text NOT NULL UNIQUE,                     -- the owner name of its leases
    started_at timestamptz NOT NULL DEFAULT now(),
    seen_at    timestamptz NOT NULL DEFAULT now()
);

-- The lock key of the worker holding an update in hand: a gone worker's updates go back to
-- the queue at once instead of after the lock time.
ALTER TABLE inbox ADD COLUMN claimed_by integer;
