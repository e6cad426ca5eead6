"""The shop's SQL."""

from __future__ import annotations

SETTINGS = """
SELECT bot_id, enabled, network, address, accept_usdt, accept_trx, api_key, pay_within_h,
       updated_at,
       CASE WHEN calls_hour = date_trunc('hour', now()) THEN calls ELSE 0 END AS calls
FROM shop_settings WHERE bot_id = $1
"""
# Count $2 TronGrid calls against the shop's budget of $3 an hour; no row when it is spent.
# The hour comes from a subquery: Citus refuses now() inside the CASE of an UPDATE.
SPEND_CALLS = """
UPDATE shop_settings s
SET calls = CASE WHEN s.calls_hour = t.hour THEN s.calls + $2 ELSE $2 END, calls_hour = t.hour
FROM (SELECT date_trunc('hour', now()) AS hour) t
WHERE s.bot_id = $1 AND (s.calls_hour IS DISTINCT FROM t.hour OR s.calls + $2 <= $3)
RETURNING s.calls
"""
NEXT_HOUR = "SELECT date_trunc('hour', now()) + interval '1 hour'"
# The time from the row proposed (its column default): Citus refuses now() in DO UPDATE.
SAVE_SETTINGS = """
INSERT INTO shop_settings (bot_id, enabled, network, address, accept_usdt, accept_trx, api_key,
                           pay_within_h)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (bot_id) DO UPDATE
SET enabled = excluded.enabled, network = excluded.network, address = excluded.address,
    accept_usdt = excluded.accept_usdt, accept_trx = excluded.accept_trx,
    api_key = excluded.api_key, pay_within_h = excluded.pay_within_h,
    updated_at = excluded.updated_at
"""

PRODUCTS = """
SELECT id, bot_id, kind, title, description, price_usdt, joins, days, active, position,
       title_fa, description_fa
FROM shop_products WHERE bot_id = $1 AND ($2::boolean IS NOT TRUE OR active)
ORDER BY position, id
"""
PRODUCT = """
SELECT id, bot_id, kind, title, description, price_usdt, joins, days, active, position,
       title_fa, description_fa
FROM shop_products WHERE bot_id = $1 AND id = $2
"""
INSERT_PRODUCT = """
INSERT INTO shop_products (bot_id, kind, title, description, price_usdt, joins, days, active,
                           position, title_fa, description_fa)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
RETURNING id
"""
UPDATE_PRODUCT = """
UPDATE shop_products
SET kind = $3, title = $4, description = $5, price_usdt = $6, joins = $7, days = $8,
    active = $9, position = $10, title_fa = $11, description_fa = $12
WHERE bot_id = $1 AND id = $2
"""
DELETE_PRODUCT = "DELETE FROM shop_products WHERE bot_id = $1 AND id = $2"
# Before a product goes: its orders keep what they were sold as, without the link.
DETACH_PRODUCT = "UPDATE shop_orders SET product_id = NULL WHERE bot_id = $1 AND product_id = $2"

_ORDER_COLUMNS = """
o.id, o.bot_id, o.product_id, o.kind, o.title, o.joins, o.days, o.user_id, o.user_name,
o.language, o.material, o.price_usdt, o.state, o.note, o.network, o.address, o.accept_usdt,
o.accept_trx, o.approved_at, o.usdt_per_trx, o.rate_source, o.expires_at, o.due_at, o.reminded,
o.paid_usdt, o.qr_file_id, o.campaign_id, o.broadcast_id, o.started_at, o.ends_at, o.ended_at,
o.report, o.created_at, o.updated_at, o.due_usdt, o.due_trx, o.start_after, o.start_tries,
o.rate_at, (SELECT w.time_zone FROM workspace w WHERE w.id = 1) AS zone
"""
ORDER = f"SELECT {_ORDER_COLUMNS} FROM shop_orders o WHERE o.id = $1"
# An order is locked by its bot and id ($1, $2): Citus locks rows only within one shard, so a
# lock by id alone, which could be on any shard, is refused there. An order's bot never changes,
# so a caller that knows only the id reads the bot first (ORDER_BOT, ledger.lock_order).
ORDER_FOR_UPDATE = f"""
SELECT {_ORDER_COLUMNS} FROM shop_orders o WHERE o.bot_id = $1 AND o.id = $2 FOR UPDATE
"""
ORDER_BOT = "SELECT bot_id FROM shop_orders WHERE id = $1"
# A page of orders, newest first: one bot or all ($1 NULL), one state or all ($2 NULL),
# before an id ($3 NULL: from the newest).
ORDERS = f"""
SELECT {_ORDER_COLUMNS}, b.username AS bot_username,
       (SELECT count(*) FROM shop_payments p
        WHERE p.bot_id = o.bot_id AND p.order_id = o.id) AS payment_count
FROM shop_orders o JOIN bots b ON b.id = o.bot_id
WHERE ($1::bigint IS NULL OR o.bot_id = $1) AND ($2::text IS NULL OR o.state = $2)
  AND ($3::bigint IS NULL OR o.id < $3)
ORDER BY o.id DESC
LIMIT $4
"""
STATE_COUNTS = """
SELECT state, count(*) AS n FROM shop_orders
WHERE ($1::bigint IS NULL OR bot_id = $1)
GROUP BY state
"""
INSERT_ORDER = """
INSERT INTO shop_orders (bot_id, product_id, kind, title, joins, days, user_id, user_name,
                         language, material, price_usdt)
SELECT p.bot_id, p.id, p.kind,
       -- the title the advertiser read, in their language (Persian where the product has one)
       CASE WHEN $5 = 'fa' AND p.title_fa <> '' THEN p.title_fa ELSE p.title END,
       p.joins, p.days, $3, $4, $5, $6, p.price_usdt
FROM shop_products p WHERE p.bot_id = $1 AND p.id = $2 AND p.active
RETURNING id
"""
RESUBMIT = """
UPDATE shop_orders SET material = $3, state = 'submitted', updated_at = now()
WHERE bot_id = $1 AND id = $2 AND user_id = $4 AND state = 'in_review'
RETURNING id
"""
SET_STATE = """
UPDATE shop_orders SET state = $2, note = COALESCE($3, note), updated_at = now()
WHERE id = $1
"""
APPROVE = """
UPDATE shop_orders
SET state = 'awaiting_payment', network = $2, address = $3, accept_usdt = $4, accept_trx = $5,
    approved_at = $6, usdt_per_trx = $7, rate_source = $8, expires_at = $9, rate_at = $6,
    updated_at = now()
WHERE id = $1
"""
SET_QR = "UPDATE shop_orders SET qr_file_id = $2 WHERE id = $1"
REMINDED = "UPDATE shop_orders SET reminded = $2, updated_at = now() WHERE id = $1"
STARTED = """
UPDATE shop_orders
SET state = 'running', started_at = $2, campaign_id = $3, broadcast_id = $4, ends_at = $5,
    updated_at = now()
WHERE id = $1 AND state = 'paid'
"""
COMPLETED = """
UPDATE shop_orders SET state = 'completed', ended_at = $2, report = $3, updated_at = now()
WHERE id = $1 AND state = 'running'
"""
# Open orders of one advertiser in one bot, newest first.
OPEN_OF_USER = f"""
SELECT {_ORDER_COLUMNS} FROM shop_orders o
WHERE o.bot_id = $1 AND o.user_id = $2 AND o.state = ANY($3::text[])
ORDER BY o.id DESC LIMIT 1
"""

# An advertiser's latest orders in one bot (/orders).
ORDERS_OF_USER = f"""
SELECT {_ORDER_COLUMNS} FROM shop_orders o
WHERE o.bot_id = $1 AND o.user_id = $2
ORDER BY o.id DESC LIMIT 5
"""

# The order's bot is looked up by the order (the callers know only the order).
LOG = """
INSERT INTO shop_order_log (bot_id, order_id, kind, actor, data)
SELECT o.bot_id, o.id, $2, $3, $4 FROM shop_orders o WHERE o.id = $1
"""
TIMELINE = "SELECT at, kind, actor, data FROM shop_order_log WHERE order_id = $1 ORDER BY id"

_PAYMENT_COLUMNS = """
p.id, p.order_id, p.bot_id, p.tx_hash, p.source, p.status, p.reason, p.coin, p.amount,
p.from_address, p.to_address, p.credited_usdt, p.block_time, p.checks, p.last_error,
p.next_check_at, p.submitted_at, p.decided_at
"""
PAYMENTS_OF_ORDER = f"""
SELECT {_PAYMENT_COLUMNS} FROM shop_payments p WHERE p.order_id = $1 ORDER BY p.id
"""
PAYMENTS = f"""
SELECT {_PAYMENT_COLUMNS}, o.network, b.username AS bot_username
FROM shop_payments p JOIN shop_orders o ON o.bot_id = p.bot_id AND o.id = p.order_id
JOIN bots b ON b.id = p.bot_id
WHERE ($1::bigint IS NULL OR p.bot_id = $1) AND ($2::text IS NULL OR p.status = $2)
  AND ($3::bigint IS NULL OR p.id < $3)
ORDER BY p.id DESC
LIMIT $4
"""
PAYMENT_OF = f"""
SELECT {_PAYMENT_COLUMNS} FROM shop_payments p WHERE p.order_id = $1 AND p.tx_hash = $2
"""
INSERT_PAYMENT = """
INSERT INTO shop_payments (order_id, bot_id, tx_hash, source) VALUES ($1, $2, $3, $4)
ON CONFLICT (bot_id, order_id, tx_hash) DO NOTHING
RETURNING id
"""
# The runner's batch: hashes due for a (re)check, oldest due first, each claimed for a minute
# so that no other worker checks it meanwhile (a worker that dies lets the claim run out).
CLAIM_DUE = f"""
UPDATE shop_payments p SET next_check_at = now() + make_interval(secs => $2)
FROM (SELECT id, bot_id FROM shop_payments
      WHERE status = 'checking' AND next_check_at <= now()
      ORDER BY next_check_at LIMIT $1
      FOR UPDATE SKIP LOCKED) due
WHERE p.id = due.id AND p.bot_id = due.bot_id
RETURNING {_PAYMENT_COLUMNS}
"""
# The same on Citus (db/pool.on_citus), whose row locks do not span shards: the due hashes are
# found first, and the update takes only those still due, so of two runners one claims a hash.
CLAIM_DUE_CITUS = f"""
UPDATE shop_payments p SET next_check_at = now() + make_interval(secs => $2)
FROM (SELECT id, bot_id FROM shop_payments
      WHERE status = 'checking' AND next_check_at <= now()
      ORDER BY next_check_at LIMIT $1) due
WHERE p.id = due.id AND p.bot_id = due.bot_id
  AND p.status = 'checking' AND p.next_check_at <= now()
RETURNING {_PAYMENT_COLUMNS}
"""
# The verdict is written under the hash's own row lock, and only while it is still checking.
PAYMENT_LOCK = f"""
SELECT {_PAYMENT_COLUMNS} FROM shop_payments p WHERE p.id = $1 AND p.bot_id = $2 FOR UPDATE
"""
# The advertiser's side has limits: hashes sent by one person in the last hour (turned-down
# ones count), hashes of one order being checked at once, and in all.
HASHES_OF_USER = """
SELECT count(*) FROM shop_payments p
JOIN shop_orders o ON o.bot_id = p.bot_id AND o.id = p.order_id
WHERE p.bot_id = $1 AND o.user_id = $2 AND p.submitted_at > now() - interval '1 hour'
"""
HASHES_OF_ORDER = """
SELECT count(*) FILTER (WHERE status = 'checking') AS checking, count(*) AS total
FROM shop_payments WHERE bot_id = $1 AND order_id = $2
"""
OPEN_ORDERS_OF_USER = """
SELECT count(*) FROM shop_orders
WHERE bot_id = $1 AND user_id = $2
  AND state IN ('submitted', 'in_review', 'awaiting_payment', 'partly_paid')
"""
# A hash turned down for a reason time can change (the network had not seen it yet, TronGrid
# was down) is checked again when sent again, or when the owner asks.
REQUEUE = """
UPDATE shop_payments
SET status = 'checking', reason = NULL, checks = 0, last_error = NULL, next_check_at = now(),
    submitted_at = now(), decided_at = NULL
WHERE bot_id = $1 AND id = $2 AND status = 'rejected'
RETURNING id
"""
PAYMENT_RETRY = """
UPDATE shop_payments SET checks = checks + 1, last_error = $2, next_check_at = $3
WHERE id = $1 AND status = 'checking'
"""
# Put off without counting a check (the shop's TronGrid budget is spent).
PAYMENT_WAIT = """
UPDATE shop_payments SET last_error = $2, next_check_at = $3 WHERE id = $1 AND status = 'checking'
"""
PAYMENT_DECIDED = """
UPDATE shop_payments
SET status = $2, reason = $3, coin = $4, amount = $5, from_address = $6, to_address = $7,
    credited_usdt = $8, block_time = $9, checks = checks + 1, last_error = $10,
    decided_at = now()
WHERE id = $1 AND status = 'checking'
"""
# The clock's work: the orders due, each with its bot (for the lock).
# An order expires at its deadline; a hash still being checked holds it a little longer, never
# more than $1 seconds (the wait for an unconfirmed hash, and a margin).
TO_EXPIRE = """
SELECT id, bot_id FROM shop_orders o
WHERE (state = 'awaiting_payment' AND expires_at < now()
       OR state = 'partly_paid' AND due_at < now())
  AND (NOT EXISTS (SELECT 1 FROM shop_payments p
                   WHERE p.bot_id = o.bot_id AND p.order_id = o.id AND p.status = 'checking')
       OR COALESCE(due_at, expires_at) < now() - make_interval(secs => $1))
ORDER BY id LIMIT 100
"""
TO_REMIND = """
SELECT id, bot_id FROM shop_orders
WHERE state = 'partly_paid' AND reminded < 2 AND due_at - interval '24 hours' <= now()
ORDER BY id LIMIT 100
"""
# Orders waiting for payment in TRX at a rate locked too long ago ($1 seconds): re-quoted.
TO_REQUOTE = """
SELECT id, bot_id FROM shop_orders
WHERE state IN ('awaiting_payment', 'partly_paid') AND accept_trx AND usdt_per_trx IS NOT NULL
  AND rate_at < now() - make_interval(secs => $1)
ORDER BY id LIMIT 50
"""
REQUOTED = """
UPDATE shop_orders
SET usdt_per_trx = $2, rate_source = $3, rate_at = $4, due_trx = $5, updated_at = now()
WHERE id = $1
"""
# Paid orders whose ad may start now, each claimed for two minutes (a start is idempotent, the
# claim keeps two workers from doing it at once).
TO_START = """
UPDATE shop_orders o SET start_after = now() + interval '2 minutes', start_tries = start_tries + 1
FROM (SELECT id, bot_id FROM shop_orders
      WHERE state = 'paid' AND (start_after IS NULL OR start_after <= now())
      ORDER BY id LIMIT 20
      FOR UPDATE SKIP LOCKED) due
WHERE o.id = due.id AND o.bot_id = due.bot_id
RETURNING o.id, o.start_tries
"""
# The same on Citus, found first and claimed if still due (CLAIM_DUE_CITUS).
TO_START_CITUS = """
UPDATE shop_orders o SET start_after = now() + interval '2 minutes', start_tries = start_tries + 1
FROM (SELECT id, bot_id FROM shop_orders
      WHERE state = 'paid' AND (start_after IS NULL OR start_after <= now())
      ORDER BY id LIMIT 20) due
WHERE o.id = due.id AND o.bot_id = due.bot_id
  AND o.state = 'paid' AND (o.start_after IS NULL OR o.start_after <= now())
RETURNING o.id, o.start_tries
"""
START_LATER = "UPDATE shop_orders SET start_after = $2 WHERE id = $1 AND state = 'paid'"
RUNNING = """
SELECT o.id, o.bot_id, o.broadcast_id, o.kind, o.ends_at, c.status AS campaign_status,
       b.status AS broadcast_status
FROM shop_orders o
LEFT JOIN campaigns c ON c.id = o.campaign_id
LEFT JOIN broadcasts b ON b.bot_id = o.bot_id AND b.id = o.broadcast_id
WHERE o.state = 'running'
ORDER BY o.id LIMIT 200
"""
CAMPAIGN_JOINS = """
SELECT count(*) FROM campaign_members WHERE campaign_id = $1 AND gate_joined_at IS NOT NULL
"""
BROADCAST_REACHED = "SELECT sent FROM broadcasts WHERE id = $1"
# A running banner goes out after every content delivery of its bot: its showings are the
# deliveries of its period (no write per showing).
BANNER_SHOWN = """
SELECT count(*) FROM events
WHERE bot_id = $1 AND kind = 'content_sent' AND at >= $2 AND at < $3
"""

# Transfers, and apart the orders whose advertisers sent their hash (the claims): Citus cannot
# run a subquery over shop_payments (distributed) per row of shop_transfers (a reference table).
_TRANSFER = """
SELECT t.id, t.network, t.tx_hash, t.coin, t.amount, t.from_address, t.to_address, t.block_time,
       t.state, t.reason, t.order_bot_id, t.order_id, t.credited_usdt, t.matched_by, t.seen_at,
       t.decided_at, t.decided_by, t.note
FROM shop_transfers t
"""
TRANSFERS = (
    _TRANSFER
    + """
WHERE ($1::text IS NULL OR t.state = $1) AND ($2::bigint IS NULL OR t.id < $2)
ORDER BY t.id DESC
LIMIT $3
"""
)
TRANSFER = _TRANSFER + "WHERE t.id = $1"
CLAIMS = """
SELECT p.tx_hash, jsonb_build_object('order_id', p.order_id, 'bot_id', p.bot_id,
                                     'status', p.status, 'reason', p.reason,
                                     'submitted_at', p.submitted_at) AS claim
FROM shop_payments p WHERE p.tx_hash = ANY ($1::text[])
ORDER BY p.id
"""
RETURN_TRANSFER = """
UPDATE shop_transfers SET state = 'returned', note = $2, decided_by = $3, decided_at = now()
WHERE id = $1 AND state = 'unattributed'
RETURNING id
"""
PAYMENT_BY_ID = f"SELECT {_PAYMENT_COLUMNS} FROM shop_payments p WHERE p.id = $1"

# What needs the owner's eye: paid orders whose ad has not started for a while, running
# broadcast orders whose broadcast never went out, and transfers waiting to be assigned.
STUCK = """
SELECT o.id, o.bot_id, o.state, o.kind, o.start_tries, o.updated_at
FROM shop_orders o
LEFT JOIN broadcasts b ON b.bot_id = o.bot_id AND b.id = o.broadcast_id
WHERE (o.state = 'paid' AND o.updated_at < now() - make_interval(secs => $1))
   OR (o.state = 'running' AND o.kind = 'broadcast' AND (b.id IS NULL OR b.status = 'draft')
       AND o.started_at < now() - make_interval(secs => $1))
ORDER BY o.id
LIMIT 20
"""
WAITING_TRANSFERS = "SELECT count(*) FROM shop_transfers WHERE state = 'unattributed'"
