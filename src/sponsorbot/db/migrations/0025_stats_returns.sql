-- Two parts of a long span's statistics page that grew with the span (features/stats):
--   stats_returns         per (bot, local day, the day of the person's visit before): how many
--                         visits of that day came back from that day ('-infinity': a first
--                         visit). A span's distinct visitors are its visits whose visit before
--                         was before the span: a sum over this table, exact, instead of hashing
--                         every (bot, day, person) of stats_visits.
--   stats_campaign_days   per (campaign, bot, local day): the credited joins and the leaves that
--                         cost a credit (inside the campaign's retention, noted on the row),
--                         counted from campaign_members by the roll-up job for the days before
--                         stats_rollup.campaigns_until. Pages count the rows after that day, and
--                         a campaign whose retention changed since, from campaign_members.

CREATE TABLE stats_returns (
    bot_id   bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    day      date NOT NULL,
    prev_day date NOT NULL,
    n        bigint NOT NULL,
    PRIMARY KEY (bot_id, day, prev_day)
);

INSERT INTO stats_returns (bot_id, day, prev_day, n)
SELECT bot_id, day, prev_day, count(*) FROM (
    SELECT bot_id, day,
           lag(day, 1, '-infinity'::date) OVER (PARTITION BY bot_id, user_id ORDER BY day)
               AS prev_day
    FROM stats_visits
) v GROUP BY 1, 2, 3;

CREATE TABLE stats_campaign_days (
    campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    bot_id      bigint NOT NULL
                REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    day         date NOT NULL,
    retention   interval NOT NULL,  -- the campaign's when the leaves were counted
    joined      bigint NOT NULL,
    "left"      bigint NOT NULL,
    PRIMARY KEY (bot_id, campaign_id, day)
);
CREATE INDEX stats_campaign_days_by_campaign ON stats_campaign_days (campaign_id, day);

-- Days before this (local, in stats_rollup.zone) are in stats_campaign_days; NULL: none yet.
ALTER TABLE stats_rollup ADD COLUMN campaigns_until date;
