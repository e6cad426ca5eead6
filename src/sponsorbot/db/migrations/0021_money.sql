-- Money you can trust (docs/shop-payments.md).
--
-- Every open order asks for its own exact amount: the price (or what is left of it) plus a
-- tail of a few millionths that no other open order of the same address asks for. A transfer
-- is an order's because its amount is that order's, whoever sends its hash; a transfer that
-- matches no order waits for the owner. Credits are transfers: one row per transfer on the
-- chain, unique whatever races, and an order's paid amount is the sum of its transfers.

ALTER TABLE shop_orders
    ADD COLUMN due_usdt    numeric(18, 6),               -- the exact USDT asked for now
    ADD COLUMN due_trx     numeric(30, 6),               -- the exact TRX asked for now
    ADD COLUMN start_after timestamptz,                  -- a paid ad's next start attempt
    ADD COLUMN start_tries integer NOT NULL DEFAULT 0,
    ADD COLUMN rate_at     timestamptz;                  -- when the TRX rate was locked
UPDATE shop_orders SET rate_at = approved_at WHERE usdt_per_trx IS NOT NULL;

-- Each shop's TronGrid calls in the current hour, against its budget (a junk hash costs calls).
ALTER TABLE shop_settings
    ADD COLUMN calls_hour timestamptz,
    ADD COLUMN calls      integer NOT NULL DEFAULT 0;

-- Open orders of before this migration get distinct amounts the same way: what is left plus
-- 1, 2, 3... millionths in the order they were made (their request shows the new amount).
WITH open AS (
    SELECT id, bot_id, price_usdt - paid_usdt AS left_usdt, usdt_per_trx, accept_trx,
           row_number() OVER (PARTITION BY network, address ORDER BY id) AS tail
    FROM shop_orders WHERE state IN ('awaiting_payment', 'partly_paid')
)
UPDATE shop_orders o
SET due_usdt = open.left_usdt + open.tail * 0.000001,
    due_trx = CASE WHEN open.accept_trx AND open.usdt_per_trx > 0
                   THEN ceil(open.left_usdt / open.usdt_per_trx * 100) / 100
                        + open.tail * 0.000001 END
FROM open WHERE o.id = open.id AND o.bot_id = open.bot_id;

-- The database's own guard: two open orders of one shop never ask for one amount. (Shops of
-- several bots that share an address are kept apart when amounts are handed out.)
CREATE UNIQUE INDEX shop_orders_due_usdt ON shop_orders (bot_id, due_usdt)
    WHERE state IN ('awaiting_payment', 'partly_paid');
CREATE UNIQUE INDEX shop_orders_due_trx ON shop_orders (bot_id, due_trx)
    WHERE state IN ('awaiting_payment', 'partly_paid');

-- One row per transfer into a shop's address that the shop has seen (a hash sent by someone,
-- verified on the chain). The workspace's, not one bot's: two shops may share an address, and
-- a transfer pays once whatever bot's order claims it.
CREATE TABLE shop_transfers (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    network        text NOT NULL CHECK (network IN ('mainnet', 'nile', 'shasta')),
    tx_hash        text NOT NULL CHECK (tx_hash ~ '^[0-9a-f]{64}$'),
    coin           text NOT NULL CHECK (coin IN ('USDT', 'TRX')),
    amount         numeric(30, 6) NOT NULL CHECK (amount > 0),
    from_address   bytea,
    to_address     bytea NOT NULL CHECK (length(to_address) = 21),
    block_time     timestamptz NOT NULL,
    state          text NOT NULL DEFAULT 'unattributed'
                   CHECK (state IN ('credited', 'unattributed', 'returned')),
    -- Why it waits for the owner: no_match, ambiguous (two open orders), too_early.
    reason         text,
    order_bot_id   bigint,
    order_id       bigint,
    credited_usdt  numeric(18, 6),
    matched_by     text CHECK (matched_by IN ('amount', 'owner', 'hash')),
    seen_at        timestamptz NOT NULL DEFAULT now(),
    decided_at     timestamptz,
    decided_by     text,
    note           text,
    UNIQUE (network, tx_hash),
    CHECK ((state = 'credited') = (order_id IS NOT NULL AND credited_usdt IS NOT NULL))
);
CREATE INDEX shop_transfers_of_order ON shop_transfers (order_id) WHERE order_id IS NOT NULL;
CREATE INDEX shop_transfers_waiting ON shop_transfers (id) WHERE state = 'unattributed';

-- Credits made before this migration become transfers (matched by the hash that was sent).
INSERT INTO shop_transfers (network, tx_hash, coin, amount, from_address, to_address,
                            block_time, state, order_bot_id, order_id, credited_usdt,
                            matched_by, seen_at, decided_at, decided_by)
SELECT o.network, p.tx_hash, p.coin, p.amount, p.from_address, p.to_address,
       COALESCE(p.block_time, p.decided_at, p.submitted_at), 'credited', p.bot_id, p.order_id,
       p.credited_usdt, 'hash', p.submitted_at, p.decided_at, 'system'
FROM shop_payments p JOIN shop_orders o ON o.bot_id = p.bot_id AND o.id = p.order_id
WHERE p.status = 'credited' AND p.to_address IS NOT NULL AND p.coin IS NOT NULL
ON CONFLICT (network, tx_hash) DO NOTHING;

-- A hash sent for an order (a claim) may now also be held: the transfer is real but is not
-- this order's by its amount, so the owner decides.
ALTER TABLE shop_payments DROP CONSTRAINT shop_payments_status_check,
    ADD CONSTRAINT shop_payments_status_check
        CHECK (status IN ('checking', 'credited', 'rejected', 'held'));
