-- The workspace: one row holding the installation's own settings.
CREATE TABLE workspace (
    id               smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    name             text NOT NULL DEFAULT 'Sponsorbot',
    time_zone        text NOT NULL DEFAULT 'UTC',
    default_language text NOT NULL DEFAULT 'en' CHECK (default_language IN ('en', 'fa')),
    created_at       timestamptz NOT NULL DEFAULT now()
);

INSERT INTO workspace (id) VALUES (1);
