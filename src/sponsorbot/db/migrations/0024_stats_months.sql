-- Statistics over long ranges read whole months (features/stats/months.py): a year's content
-- funnel summed a million rows of stats_daily, its heat map 90,000 hours of stats_hourly.
--   stats_monthly     per (bot, month, kind, dimension): stats_daily summed over the month;
--   stats_week_hours  per (bot, month, kind, weekday, hour of the day): stats_hourly summed
--                     over the month, by weekday and hour on the workspace's clock.
-- A month is the first day of a month of local days (the days stats_daily holds). The roll-up
-- job writes them in the same statement as the days and hours they sum, so they always equal
-- those sums; a page reads a partly covered month as the month less the days outside the span,
-- or as its days, whichever reads fewer days.

CREATE TABLE stats_monthly (
    bot_id bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    month  date NOT NULL,
    kind   text NOT NULL,
    dim    text NOT NULL DEFAULT '',
    n      bigint NOT NULL,
    PRIMARY KEY (bot_id, month, kind, dim)
);
CREATE INDEX stats_monthly_by_month ON stats_monthly (month, kind) INCLUDE (bot_id, dim, n);

CREATE TABLE stats_week_hours (
    bot_id  bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    month   date NOT NULL,
    kind    text NOT NULL,
    weekday smallint NOT NULL,  -- 0 is Monday
    hour    smallint NOT NULL,  -- of the day, on the workspace's clock
    n       bigint NOT NULL,
    PRIMARY KEY (bot_id, month, kind, weekday, hour)
);
CREATE INDEX stats_week_hours_by_month ON stats_week_hours (month, kind)
    INCLUDE (bot_id, weekday, hour, n);

INSERT INTO stats_monthly (bot_id, month, kind, dim, n)
SELECT bot_id, date_trunc('month', day)::date, kind, dim, sum(n)
FROM stats_daily GROUP BY 1, 2, 3, 4;

INSERT INTO stats_week_hours (bot_id, month, kind, weekday, hour, n)
SELECT h.bot_id, date_trunc('month', h.hour AT TIME ZONE r.zone)::date, h.kind,
       extract(isodow FROM h.hour AT TIME ZONE r.zone)::int - 1,
       extract(hour FROM h.hour AT TIME ZONE r.zone)::int, sum(h.n)
FROM stats_hourly h, stats_rollup r WHERE r.id = 1
GROUP BY 1, 2, 3, 4, 5;

-- A live visitor is looked up among the span's rolled visits by person, then day.
CREATE INDEX stats_visits_by_user ON stats_visits (bot_id, user_id, day);
