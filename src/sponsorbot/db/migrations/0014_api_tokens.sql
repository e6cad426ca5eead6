-- Owner API tokens belong to a person and may expire (review finding M14).
--
-- created_by_user_id: the panel member who made the token, directly or through a token of
-- theirs; NULL for tokens made by `sponsorbot token create` (whoever runs the CLI owns the
-- server). Removing the member revokes their tokens; a disabled creator's token is refused.
-- expires_at: NULL never expires; otherwise the token is refused from that moment on.
ALTER TABLE api_tokens
    ADD COLUMN created_by_user_id bigint REFERENCES users (id) ON DELETE SET NULL,
    ADD COLUMN expires_at         timestamptz;

CREATE INDEX api_tokens_created_by ON api_tokens (created_by_user_id)
    WHERE created_by_user_id IS NOT NULL AND revoked_at IS NULL;
