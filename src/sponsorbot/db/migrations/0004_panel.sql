-- The panel: team members, their sessions, invitations, sign-in attempts, the audit log.
-- Secrets are stored only as hashes (sessions, invitations, setup codes, recovery codes).

CREATE TABLE users (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email          text NOT NULL,
    name           text NOT NULL,
    password_hash  text NOT NULL,                       -- argon2id
    role           text NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'analyst')),
    language       text CHECK (language IN ('en', 'fa')),  -- null: the workspace default
    totp_secret    text,                                -- set once two-step sign-in is on
    recovery_codes bytea[] NOT NULL DEFAULT '{}',       -- sha256 of each unused code
    locked_until   timestamptz,
    disabled_at    timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email ON users (lower(email));
-- One owner at most: /setup is closed for good once this row exists.
CREATE UNIQUE INDEX users_one_owner ON users (role) WHERE role = 'owner';

-- Server-side sessions; the cookie holds a random id, the table its sha256.
CREATE TABLE panel_sessions (
    id_hash     bytea PRIMARY KEY,
    user_id     bigint REFERENCES users (id) ON DELETE CASCADE,
    -- 'active', or 'two_step' while the second step of sign-in is pending
    state       text NOT NULL CHECK (state IN ('active', 'two_step')),
    csrf_token  text NOT NULL,
    address     text,
    user_agent  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX panel_sessions_user ON panel_sessions (user_id);
CREATE INDEX panel_sessions_expiry ON panel_sessions (expires_at);

-- First-run setup codes (sha256 only; the code itself is only ever printed to a console).
CREATE TABLE setup_codes (
    code_hash  bytea PRIMARY KEY,
    expires_at timestamptz NOT NULL
);

CREATE TABLE invitations (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_hash  bytea NOT NULL UNIQUE,
    email       text NOT NULL,
    role        text NOT NULL CHECK (role IN ('admin', 'editor', 'analyst')),
    invited_by  bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz,
    revoked_at  timestamptz
);

-- Failed sign-ins, per account (email) and per address, for slow-down and lockout.
CREATE TABLE signin_failures (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email      text NOT NULL,
    address    text NOT NULL,
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX signin_failures_email ON signin_failures (lower(email), at);
CREATE INDEX signin_failures_address ON signin_failures (address, at);

CREATE TABLE audit_log (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT now(),
    user_id    bigint REFERENCES users (id) ON DELETE SET NULL,
    actor      text NOT NULL,                           -- name/e-mail at the time, or 'system'
    address    text,
    kind       text NOT NULL,                           -- e.g. 'signin.failed', 'bot.added'
    target     text,
    before     jsonb,
    after      jsonb
);
CREATE INDEX audit_log_at ON audit_log (at DESC);
CREATE INDEX audit_log_kind ON audit_log (kind, at DESC);
CREATE INDEX audit_log_user ON audit_log (user_id, at DESC);
