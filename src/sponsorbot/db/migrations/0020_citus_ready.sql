-- Ready for Citus, distributed by bot_id (docs/scaling.md): every table that carries bot_id
-- has it in its primary key and unique constraints, and every foreign key between two such
-- tables includes it on both sides, so all of them can be distributed by bot_id, colocated,
-- with each key kept whole on one node. tests/integration/test_citus_ready.py checks this and
-- the SQL (no statement joins two bots' rows).
--
-- The primary keys keep id first: a lookup by id alone still uses them, and new ids (always
-- increasing) still land at the right-hand end of the index. Rebuilding them reads each table
-- once; on a large installation run this migration at a quiet hour.

-- Rows keyed only by their parent's id get the parent's bot_id.
ALTER TABLE broadcast_recipients ADD COLUMN bot_id bigint;
UPDATE broadcast_recipients r SET bot_id = b.bot_id FROM broadcasts b WHERE b.id = r.broadcast_id;
ALTER TABLE broadcast_recipients ALTER COLUMN bot_id SET NOT NULL;

ALTER TABLE shop_order_log ADD COLUMN bot_id bigint;
UPDATE shop_order_log l SET bot_id = o.bot_id FROM shop_orders o WHERE o.id = l.order_id;
ALTER TABLE shop_order_log ALTER COLUMN bot_id SET NOT NULL;

-- The foreign keys on the old one-column keys go first.
ALTER TABLE broadcast_recipients DROP CONSTRAINT broadcast_recipients_broadcast_id_fkey;
ALTER TABLE shop_orders DROP CONSTRAINT shop_orders_product_id_fkey,
                        DROP CONSTRAINT shop_orders_broadcast_id_fkey;
ALTER TABLE shop_payments DROP CONSTRAINT shop_payments_order_id_fkey;
ALTER TABLE shop_order_log DROP CONSTRAINT shop_order_log_order_id_fkey;

ALTER TABLE inbox DROP CONSTRAINT inbox_pkey, ADD PRIMARY KEY (id, bot_id);
ALTER TABLE outbox DROP CONSTRAINT outbox_pkey, ADD PRIMARY KEY (id, bot_id);
ALTER TABLE contents DROP CONSTRAINT contents_pkey, ADD PRIMARY KEY (id, bot_id);
-- events is partitioned by `at`: its key holds the partition key as well.
ALTER TABLE events DROP CONSTRAINT events_pkey, ADD PRIMARY KEY (id, at, bot_id);
ALTER TABLE broadcasts DROP CONSTRAINT broadcasts_pkey, ADD PRIMARY KEY (id, bot_id);
ALTER TABLE broadcast_recipients DROP CONSTRAINT broadcast_recipients_pkey,
                                 ADD PRIMARY KEY (broadcast_id, user_id, bot_id);
ALTER TABLE shop_products DROP CONSTRAINT shop_products_pkey, ADD PRIMARY KEY (id, bot_id);
ALTER TABLE shop_orders DROP CONSTRAINT shop_orders_pkey, ADD PRIMARY KEY (id, bot_id);
ALTER TABLE shop_order_log DROP CONSTRAINT shop_order_log_pkey, ADD PRIMARY KEY (id, bot_id);
ALTER TABLE shop_payments DROP CONSTRAINT shop_payments_pkey, ADD PRIMARY KEY (id, bot_id),
                          DROP CONSTRAINT shop_payments_order_id_tx_hash_key,
                          ADD UNIQUE (bot_id, order_id, tx_hash);
-- shop_payments_credit_once (tx_hash) stays as it is: a hash pays one order once in the whole
-- workspace, across bots (two shops may share an address); docs/scaling.md says what it needs.

ALTER TABLE broadcast_recipients ADD CONSTRAINT broadcast_recipients_broadcast_id_fkey
    FOREIGN KEY (bot_id, broadcast_id) REFERENCES broadcasts (bot_id, id) ON DELETE CASCADE;
ALTER TABLE shop_payments ADD CONSTRAINT shop_payments_order_id_fkey
    FOREIGN KEY (bot_id, order_id) REFERENCES shop_orders (bot_id, id) ON DELETE CASCADE;
ALTER TABLE shop_order_log ADD CONSTRAINT shop_order_log_order_id_fkey
    FOREIGN KEY (bot_id, order_id) REFERENCES shop_orders (bot_id, id) ON DELETE CASCADE;
-- These were ON DELETE SET NULL, which Citus refuses on a key holding the distribution column:
-- removing a product now clears it from its orders first (features/shop), and a broadcast an
-- order refers to has started, so it cannot be deleted (only drafts can). Checked at commit,
-- so that removing a bot, which cascades to both sides, does not trip over the order.
ALTER TABLE shop_orders
    ADD CONSTRAINT shop_orders_product_id_fkey FOREIGN KEY (bot_id, product_id)
        REFERENCES shop_products (bot_id, id) DEFERRABLE INITIALLY DEFERRED,
    ADD CONSTRAINT shop_orders_broadcast_id_fkey FOREIGN KEY (bot_id, broadcast_id)
        REFERENCES broadcasts (bot_id, id) DEFERRABLE INITIALLY DEFERRED;
