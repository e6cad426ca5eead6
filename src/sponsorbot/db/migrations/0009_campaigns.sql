-- Sponsor campaigns: a channel put into the gate of one or more bots until a goal or a date,
-- with an invite link of its own per bot so that joins through the gate are attributed.

CREATE TABLE campaigns (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    chat_id         bigint NOT NULL,
    chat_title      text NOT NULL,
    chat_username   text,
    join_requests   boolean NOT NULL DEFAULT false, -- the links create join requests
    goal_joins      integer CHECK (goal_joins > 0),
    goal_kind       text NOT NULL DEFAULT 'kept' CHECK (goal_kind IN ('kept', 'joins')),
    starts_at       timestamptz NOT NULL DEFAULT now(),
    ends_at         timestamptz,
    retention       interval NOT NULL DEFAULT interval '24 hours'
                    CHECK (retention >= interval '1 hour'),
    position        text NOT NULL DEFAULT 'first' CHECK (position IN ('first', 'last')),
    status          text NOT NULL DEFAULT 'running'
                    CHECK (status IN ('scheduled', 'running', 'paused', 'reached', 'ended')),
    status_at       timestamptz NOT NULL DEFAULT now(),   -- when the status last changed
    report_token    text UNIQUE,                           -- /r/<token>; NULL when revoked
    created_by      text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- The periodic job and the gate read the campaigns that may still change.
CREATE INDEX campaigns_live ON campaigns (status) WHERE status IN ('scheduled', 'running', 'paused');

-- The bots of a campaign, each with its own invite link into the channel.
CREATE TABLE campaign_bots (
    campaign_id  bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    bot_id       bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    invite_link  text NOT NULL,
    revoked_at   timestamptz,
    PRIMARY KEY (campaign_id, bot_id)
);
CREATE INDEX campaign_bots_by_bot ON campaign_bots (bot_id);

-- One row per (campaign, person), for ever: the first join through one of the campaign's links
-- by someone the bot knows (through the gate), the first join any other way (outside the gate),
-- and the earliest leaves. Every column is a minimum or a set, so updates that arrive in any
-- order, or twice, give the same row (features/campaigns/rules.py is the same fold in Python).
CREATE TABLE campaign_members (
    campaign_id     bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    user_id         bigint NOT NULL,
    bot_id          bigint,                 -- the bot whose link the credited join came through
    gate_joined_at  timestamptz,
    outside_at      timestamptz,
    leaves          timestamptz[] NOT NULL DEFAULT '{}',   -- the earliest few, sorted
    left_at         timestamptz,            -- the first leave after the join (kept by trigger)
    PRIMARY KEY (campaign_id, user_id)
);
CREATE INDEX campaign_members_joins ON campaign_members (campaign_id, gate_joined_at)
    WHERE gate_joined_at IS NOT NULL;

CREATE FUNCTION campaign_member_left() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.left_at := (
        SELECT min(l) FROM unnest(NEW.leaves) AS l
        WHERE l >= COALESCE(NEW.gate_joined_at, NEW.outside_at)
    );
    RETURN NEW;
END
$$;
CREATE TRIGGER campaign_member_left BEFORE INSERT OR UPDATE ON campaign_members
    FOR EACH ROW EXECUTE FUNCTION campaign_member_left();
