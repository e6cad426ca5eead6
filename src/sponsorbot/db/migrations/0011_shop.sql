-- The ad shop: advertisers book products inside a bot, the owner approves, the advertiser pays
-- in USDT or TRX on TRON and sends the transaction hash, a runner verifies it on TronGrid.
-- The bot never holds a private key: it only reads the chain.

CREATE TABLE shop_settings (
    bot_id        bigint PRIMARY KEY REFERENCES bots (id) ON DELETE CASCADE,
    enabled       boolean NOT NULL DEFAULT false,
    network       text NOT NULL DEFAULT 'mainnet' CHECK (network IN ('mainnet', 'nile', 'shasta')),
    address       bytea CHECK (length(address) = 21),   -- the 21 bytes behind the Base58 form
    accept_usdt   boolean NOT NULL DEFAULT true,
    accept_trx    boolean NOT NULL DEFAULT true,
    api_key       bytea,                                 -- TronGrid key, sealed like bot tokens
    pay_within_h  integer NOT NULL DEFAULT 24 CHECK (pay_within_h BETWEEN 1 AND 720),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (accept_usdt OR accept_trx),
    CHECK (NOT enabled OR address IS NOT NULL)
);

CREATE TABLE shop_products (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bot_id      bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('gate_slot', 'broadcast', 'banner')),
    title       text NOT NULL CHECK (length(title) BETWEEN 1 AND 100),
    description text NOT NULL DEFAULT '' CHECK (length(description) <= 1000),
    price_usdt  numeric(18, 6) NOT NULL CHECK (price_usdt > 0),
    joins       integer CHECK (joins > 0),               -- gate slot: the joins it delivers
    days        integer CHECK (days > 0),                -- banner: how long it is shown
    active      boolean NOT NULL DEFAULT true,
    position    integer NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (kind <> 'gate_slot' OR joins IS NOT NULL),
    CHECK (kind <> 'banner' OR days IS NOT NULL)
);
CREATE INDEX shop_products_by_bot ON shop_products (bot_id, position, id);

-- States after BTCPay Server's invoices: submitted (waiting for the owner), in_review (the owner
-- asked for a change; the advertiser is sending it), awaiting_payment, partly_paid, paid,
-- running, completed, rejected, expired, cancelled, refunded (by hand).
CREATE TABLE shop_orders (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bot_id        bigint NOT NULL REFERENCES bots (id) ON DELETE CASCADE,
    product_id    bigint REFERENCES shop_products (id) ON DELETE SET NULL,
    kind          text NOT NULL CHECK (kind IN ('gate_slot', 'broadcast', 'banner')),
    title         text NOT NULL,                         -- the product's, when ordered
    joins         integer,
    days          integer,
    user_id       bigint NOT NULL,                       -- the advertiser's Telegram id
    user_name     text NOT NULL DEFAULT '',
    language      text NOT NULL DEFAULT 'en',
    material      jsonb NOT NULL DEFAULT '{}',
    price_usdt    numeric(18, 6) NOT NULL CHECK (price_usdt > 0),
    state         text NOT NULL DEFAULT 'submitted' CHECK (state IN (
                      'submitted', 'in_review', 'awaiting_payment', 'partly_paid', 'paid',
                      'running', 'completed', 'rejected', 'expired', 'cancelled', 'refunded')),
    note          text,                                  -- the last reason or request given
    network       text,                                  -- locked at approval, with the rest
    address       bytea,
    accept_usdt   boolean,
    accept_trx    boolean,
    approved_at   timestamptz,
    usdt_per_trx  numeric(24, 12),
    rate_source   text,
    expires_at    timestamptz,                           -- awaiting payment until
    due_at        timestamptz,                           -- partly paid: the rest until
    reminded      integer NOT NULL DEFAULT 0,            -- reminders sent for due_at
    paid_usdt     numeric(18, 6) NOT NULL DEFAULT 0,
    qr_file_id    text,
    campaign_id   bigint REFERENCES campaigns (id) ON DELETE SET NULL,
    broadcast_id  bigint REFERENCES broadcasts (id) ON DELETE SET NULL,
    started_at    timestamptz,
    ends_at       timestamptz,                           -- a banner's end
    ended_at      timestamptz,
    report        jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX shop_orders_by_bot ON shop_orders (bot_id, state, id DESC);
CREATE INDEX shop_orders_by_user ON shop_orders (bot_id, user_id, id DESC);
-- The runner's work: orders whose clock runs (expiry, reminders, the ad's end).
CREATE INDEX shop_orders_live ON shop_orders (state)
    WHERE state IN ('awaiting_payment', 'partly_paid', 'paid', 'running');

-- One row per hash submitted for an order; the verdict fills in as the runner checks it.
CREATE TABLE shop_payments (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id       bigint NOT NULL REFERENCES shop_orders (id) ON DELETE CASCADE,
    bot_id         bigint NOT NULL,
    tx_hash        text NOT NULL CHECK (tx_hash ~ '^[0-9a-f]{64}$'),
    source         text NOT NULL DEFAULT 'bot',          -- bot, panel, api
    status         text NOT NULL DEFAULT 'checking'
                   CHECK (status IN ('checking', 'credited', 'rejected')),
    reason         text,
    coin           text CHECK (coin IN ('USDT', 'TRX')),
    amount         numeric(30, 6),
    from_address   bytea,
    to_address     bytea,
    credited_usdt  numeric(18, 6),
    block_time     timestamptz,
    checks         integer NOT NULL DEFAULT 0,
    last_error     text,                                 -- TronGrid's last failure, for the owner
    next_check_at  timestamptz NOT NULL DEFAULT now(),
    submitted_at   timestamptz NOT NULL DEFAULT now(),
    decided_at     timestamptz,
    UNIQUE (order_id, tx_hash)
);
-- A hash pays one order once: whatever races, the database refuses a second credit.
CREATE UNIQUE INDEX shop_payments_credit_once ON shop_payments (tx_hash) WHERE status = 'credited';
CREATE INDEX shop_payments_due ON shop_payments (next_check_at) WHERE status = 'checking';
CREATE INDEX shop_payments_by_bot ON shop_payments (bot_id, id DESC);

-- An order's timeline: every step the owner may need to explain to the advertiser.
CREATE TABLE shop_order_log (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id  bigint NOT NULL REFERENCES shop_orders (id) ON DELETE CASCADE,
    at        timestamptz NOT NULL DEFAULT now(),
    kind      text NOT NULL,
    actor     text NOT NULL DEFAULT 'system',
    data      jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX shop_order_log_by_order ON shop_order_log (order_id, id);
