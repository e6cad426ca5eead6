-- Signing in, hardened: failures counted per (e-mail, address) pair and per kind of step
-- instead of a lock on the account, replay protection for authenticator codes, and
-- one-time password reset links made by the owner.

-- The lock lived on the users row, so it told which e-mails have accounts and let anyone
-- lock the owner out; delays and refusals now derive from signin_failures alone.
ALTER TABLE users DROP COLUMN locked_until;

-- The last authenticator time step used to sign in: a code at or below it is refused,
-- so an observed code cannot be replayed within its validity window.
ALTER TABLE users ADD COLUMN totp_last_step bigint;

-- 'password' failures are counted per pair and per address; 'two_step' ones per account,
-- and a correct password does not forget them.
ALTER TABLE signin_failures
    ADD COLUMN kind text NOT NULL DEFAULT 'password' CHECK (kind IN ('password', 'two_step'));

-- A link the owner gives a member who forgot their password (sha256 only, like invitations).
CREATE TABLE password_resets (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_hash bytea NOT NULL UNIQUE,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_by bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX password_resets_user ON password_resets (user_id);
