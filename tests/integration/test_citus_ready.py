"""The schema is ready for Citus with `bot_id` as the distribution column (docs/scaling.md).

Citus spreads a table's rows over nodes by one column and can only keep a primary key, a unique
constraint or a foreign key whole on one node when it includes that column; a join is done on
one node only when both sides are tied to the same value of it. Checked here over the migrated
schema (pg_catalog) and over every statement the product sends:

- every table with `bot_id` has it in its primary key and in every unique index;
- every foreign key between two such tables includes `bot_id` at the same place on both sides,
  without ON DELETE SET NULL/SET DEFAULT (which Citus refuses on such a key);
- the tables without `bot_id` are listed, each classed as a reference table (copied to every
  node) or a coordinator table, and the list is pinned: a new table must be classed on purpose;
- no statement joins two bots' rows: every join between two bot tables, in a FROM list or a
  correlated subquery, has their `bot_id`s equal (directly, or both equal to one parameter).
  The statements are parsed with libpg_query (pglast), the parser of PostgreSQL itself, which
  reads `$1` placeholders as parameters; SQL assembled at run time is listed by place;
- the statements of a visitor's path each stay within one bot (a router query under Citus);
- PostgreSQL prepares every statement against the migrated schema (no query leans on an old key);
- the functions and triggers are listed with what they touch.

Exceptions are listed below with their reason, and described in docs/scaling.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
import pglast
import pytest

from sponsorbot.db.citus_schema import CROSS_BOT_UNIQUE, NOT_BY_BOT, WORKSPACE_TABLES
from sponsorbot.engine import inbox, outbox
from sponsorbot.features.shop import queries as shop_queries
from sponsorbot.features.shop.queries import LOG as INSERT_LOG
from sponsorbot.loadtest import statements
from tests.citus_sql import (
    DIST,
    Schema,
    cross_bot_joins,
    function_statements,
    product_sql,
    unpinned,
)

# Where each table goes (reference, coordinator, distributed by another column) and the unique
# indexes left without bot_id: one classification in src/, read by `sponsorbot migrate` on a
# Citus coordinator too (sponsorbot.db.citus_schema), so the two cannot disagree.

# Statements that join two bot tables without tying their bot_ids, by where they are.
CROSS_BOT_JOINS: dict[str, str] = {
    "0020_citus_ready.sql#2": "fills broadcast_recipients.bot_id from the broadcast, once,"
    " on a single server (before any distribution)",
    "0020_citus_ready.sql#5": "fills shop_order_log.bot_id from the order, likewise",
}

# What each function and trigger touches, checked against the schema so a new one is looked at.
FUNCTIONS: dict[str, str] = {
    "sponsorbot_claim_lost": "raises SB001; touches no table",
    "sponsorbot_events_month": (
        "creates a month's partition of events and moves that month's rows of every bot out of"
        " the default partition: DDL, run on the coordinator"
    ),
    "sponsorbot_stat_facts": (
        "reads events, people, send_stats and campaign_bots of the bots given (NULL: all):"
        " a multi-shard read, each part filtered and joined by bot_id"
    ),
    "campaign_member_left": "row trigger function of campaign_members; reads only NEW",
}
TRIGGERS: dict[str, str] = {
    "campaign_members.campaign_member_left": "BEFORE INSERT OR UPDATE, one row",
}

# SQL built at run time from fixed fragments: what the fragments can change, and why no join
# across bots can come of it.
DYNAMIC_SQL: dict[str, str] = {
    "sponsorbot.features.content.service:ContentService.list": (
        "one table (contents); the WHERE is chosen among fixed conditions"
    ),
    "sponsorbot.features.content.service:ContentService.update": (
        "one table (contents); the SET list is chosen among fixed columns"
    ),
    # Rows of VALUES, as many as the statement carries: each built statement is checked in
    # test_the_statements_built_row_by_row_are_one_bot_each.
    "sponsorbot.engine.outbox:enqueue_values": "rows of VALUES, up to outbox.VALUES_MOST",
    "sponsorbot.engine.inbox:insert_text_values": "rows of VALUES, up to outbox.VALUES_MOST",
    "sponsorbot.engine.outbox:refs_values": "rows of VALUES, up to outbox.VALUES_MOST",
    "sponsorbot.engine.outbox:blocked_values": "rows of VALUES, up to outbox.VALUES_MOST",
}

# Module-level pieces of statements that start like one (each statement made of them is
# checked whole).
FRAGMENTS: dict[str, str] = {}

# Statements that are only ever sent after another piece (prepared there, as part of it).
NOT_ALONE: dict[str, str] = {
    "sponsorbot.engine.outbox:ENQUEUE_IF_DONE": "follows the `done` CTE of DONE_AND_ENQUEUE",
    "sponsorbot.engine.inbox:_LOST_CHECK": "ends done_with(), after the `done` CTE",
    "sponsorbot.features.gate.visitor:START_AHEAD": (
        "a read-ahead: a subquery of the claim's (inbox.claim_with), over the claimed row `c`"
    ),
}

# Modules whose statements call Citus's functions or read its catalog: they run only on a
# Citus coordinator, where tests/integration/test_citus_cluster.py runs them.
CITUS_ONLY = ("sponsorbot.db.citus_schema:", "sponsorbot.ops.citus:")

# The engine's statements on a visitor's path, each about one bot: under Citus each goes whole
# to that bot's node (a router query). Not among them (docs/scaling.md says what they need): the
# claim, which covers all of a worker's bots at once, and the sender's outcome write and
# background claim, which find their rows by id (with `bot_id = $1` added to both, a broadcast
# went on sending after its pause in 2 runs of 4 of test_broadcasts; the cause was not found,
# so they were left as they are).
ONE_BOT_EACH = (
    "engine.inbox:INSERT",
    "engine.inbox:INSERT_MANY",
    "engine.inbox:DONE_AND_ENQUEUE",
    "engine.outbox:ENQUEUE",
    "engine.outbox:FETCH",
    "engine.outbox:ABANDONED",
    "engine.conversation:READ",
    "engine.conversation:SET",
    "features.people:SEEN",
    "features.gate.visitor:BY_CODE",
    "features.gate.visitor:SET_GATE",
    "features.gate.visitor:SEEN_WITH_GATE",
    # The commit and the record in single-shard steps, as they run on Citus.
    "engine.inbox:MARK_DONE",
    "engine.inbox:BEFORE_STEP",
    "engine.inbox:NEXT_STEP",
    "engine.outbox:FINISH_STEP",
    "engine.outbox:COUNT_STEP",
)

TABLES = """
SELECT c.relname AS name,
       ARRAY(SELECT a.attname::text FROM pg_attribute a
             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
       ARRAY(SELECT a.attname::text
             FROM pg_partitioned_table t
             CROSS JOIN LATERAL unnest(t.partattrs::int2[]) AS k (n)
             JOIN pg_attribute a ON a.attrelid = t.partrelid AND a.attnum = k.n
             WHERE t.partrelid = c.oid) AS partition_key
FROM pg_class c
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
  AND NOT c.relispartition
"""
UNIQUE_INDEXES = """
SELECT t.relname AS tbl, i.relname AS name,
       ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k (n, o)
             JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.n
             WHERE k.o <= x.indnkeyatts ORDER BY k.o) AS columns
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
WHERE t.relnamespace = 'public'::regnamespace AND x.indisunique AND NOT t.relispartition
"""
FOREIGN_KEYS = """
SELECT k.conname AS name, c.relname AS tbl, f.relname AS ref, k.confdeltype AS on_delete,
       ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY AS u (n, o)
             JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n
             ORDER BY u.o) AS columns,
       ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY AS u (n, o)
             JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n
             ORDER BY u.o) AS ref_columns
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class f ON f.oid = k.confrelid
WHERE k.contype = 'f' AND c.relnamespace = 'public'::regnamespace AND NOT c.relispartition
  AND k.conparentid = 0
"""
FUNCTION_DEFS = """
SELECT p.proname AS name, pg_get_functiondef(p.oid) AS definition
FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
"""
TRIGGER_NAMES = """
SELECT c.relname || '.' || t.tgname AS name
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal AND NOT c.relispartition
"""


@dataclass
class Catalog:
    """What the checks need of the migrated schema."""

    columns: dict[str, set[str]]
    partition_keys: dict[str, list[str]]
    unique: list[asyncpg.Record]
    foreign_keys: list[asyncpg.Record]
    functions: dict[str, str]
    triggers: set[str]

    @property
    def bot_tables(self) -> set[str]:
        """The tables distributed by bot_id."""
        return {t for t, cols in self.columns.items() if DIST in cols} - set(NOT_BY_BOT)

    @property
    def schema(self) -> Schema:
        """What the statement checks need."""
        return Schema(frozenset(self.bot_tables), self.columns)


async def read_catalog(dsn: str) -> Catalog:
    """Read the schema of the database at `dsn`."""
    conn = await asyncpg.connect(dsn)
    try:
        tables = await conn.fetch(TABLES)
        return Catalog(
            columns={r["name"]: set(r["columns"]) for r in tables},
            partition_keys={r["name"]: r["partition_key"] for r in tables if r["partition_key"]},
            unique=await conn.fetch(UNIQUE_INDEXES),
            foreign_keys=await conn.fetch(FOREIGN_KEYS),
            functions={r["name"]: r["definition"] for r in await conn.fetch(FUNCTION_DEFS)},
            triggers={r["name"] for r in await conn.fetch(TRIGGER_NAMES)},
        )
    finally:
        await conn.close()


async def test_every_unique_key_of_a_bot_table_holds_bot_id(db_dsn: str) -> None:
    catalog = await read_catalog(db_dsn)
    bad = sorted(
        f"{r['tbl']}.{r['name']} {tuple(r['columns'])}"
        for r in catalog.unique
        if r["tbl"] in catalog.bot_tables
        and DIST not in r["columns"]
        and r["name"] not in CROSS_BOT_UNIQUE
    )
    assert bad == [], "a primary key or unique index of a bot table lacks bot_id"
    # A primary key of its own on every bot table (Citus needs one to move shards online).
    with_pk = {r["tbl"] for r in catalog.unique if r["name"].endswith("_pkey")}
    assert catalog.bot_tables <= with_pk
    # The exceptions are still there, or they go from the list.
    names = {r["name"] for r in catalog.unique}
    assert set(CROSS_BOT_UNIQUE) <= names
    assert set(NOT_BY_BOT) <= set(catalog.columns)


async def test_a_partitioned_bot_table_keys_by_bot_and_partition_key(db_dsn: str) -> None:
    catalog = await read_catalog(db_dsn)
    assert catalog.partition_keys == {"events": ["at"]}
    for table, key in catalog.partition_keys.items():
        pkey = next(r["columns"] for r in catalog.unique if r["name"] == f"{table}_pkey")
        assert {DIST, *key} <= set(pkey), f"{table}'s primary key {pkey}"


async def test_foreign_keys_between_bot_tables_include_bot_id_on_both_sides(db_dsn: str) -> None:
    catalog = await read_catalog(db_dsn)
    bots = catalog.bot_tables
    bad = []
    for fk in catalog.foreign_keys:
        cols, refs = list(fk["columns"]), list(fk["ref_columns"])
        if fk["tbl"] in bots and fk["ref"] in bots:
            if DIST not in cols or DIST not in refs or cols.index(DIST) != refs.index(DIST):
                bad.append(f"{fk['name']}: ({', '.join(cols)}) -> {fk['ref']} ({', '.join(refs)})")
            elif fk["on_delete"] in (b"n", b"d"):
                bad.append(f"{fk['name']}: ON DELETE SET NULL/DEFAULT on a key with bot_id")
        elif fk["tbl"] in bots and fk["ref"] not in bots:
            # A distributed table may refer only to a reference table (or a colocated one).
            kind = WORKSPACE_TABLES.get(fk["ref"], ("not classed", ""))[0]
            if kind != "reference":
                bad.append(f"{fk['name']}: a bot table refers to {fk['ref']} ({kind})")
        elif fk["tbl"] in WORKSPACE_TABLES and fk["ref"] in bots:
            bad.append(f"{fk['name']}: workspace table {fk['tbl']} refers to a bot table")
    assert bad == []


async def test_the_workspace_wide_tables_are_classed(db_dsn: str) -> None:
    """A new table without bot_id fails here until it is added to WORKSPACE_TABLES."""
    catalog = await read_catalog(db_dsn)
    without = {t for t, cols in catalog.columns.items() if DIST not in cols}
    assert without == set(WORKSPACE_TABLES)
    assert {k for k, _ in WORKSPACE_TABLES.values()} == {"reference", "coordinator"}


async def test_the_functions_and_triggers_are_listed(db_dsn: str) -> None:
    catalog = await read_catalog(db_dsn)
    assert set(catalog.functions) == set(FUNCTIONS)
    assert catalog.triggers == set(TRIGGERS)
    # The functions' own statements keep to one bot per join too.
    for name, definition in catalog.functions.items():
        for sql in function_statements(definition):
            assert cross_bot_joins(sql, catalog.schema) == [], f"function {name}"


async def test_every_sql_statement_of_the_product_parses() -> None:
    """The statement finder sees the product's SQL, and libpg_query reads all of it."""
    found = product_sql()
    unreadable = []
    for sql, where in sorted(found.statements.items(), key=lambda item: item[1]):
        try:
            pglast.parse_sql(sql)
        except pglast.parser.ParseError as exc:
            if where not in FRAGMENTS:
                unreadable.append(f"{where}: {exc}")
            else:
                unreadable.append(where)
    assert unreadable == sorted(FRAGMENTS)
    # A sample of what must be among them: the hot path's statements.
    places = set(found.statements.values())
    for name in ("engine.inbox:CLAIM", "engine.inbox:DONE_AND_ENQUEUE", "engine.outbox:FETCH"):
        assert f"sponsorbot.{name}" in places
    assert len(found.statements) > 250
    assert found.dynamic == set(DYNAMIC_SQL)


async def test_no_statement_joins_two_bots(db_dsn: str) -> None:
    catalog = await read_catalog(db_dsn)
    found = product_sql()
    crossing = {}
    for sql, where in found.statements.items():
        if where in FRAGMENTS:
            continue
        pairs = cross_bot_joins(sql, catalog.schema)
        if pairs:
            crossing[where] = pairs
    assert {w: p for w, p in crossing.items() if w not in CROSS_BOT_JOINS} == {}
    assert set(CROSS_BOT_JOINS) <= set(crossing), "an allowed join was fixed: drop it from the list"


async def test_the_visitors_path_is_one_bot_per_statement(db_dsn: str) -> None:
    catalog = await read_catalog(db_dsn)
    by_place = {where: sql for sql, where in product_sql().statements.items()}
    loose = {
        name: unpinned(by_place[f"sponsorbot.{name}"], catalog.schema) for name in ONE_BOT_EACH
    }
    assert {name: tables for name, tables in loose.items() if tables} == {}
    # The claim covers several bots (bot_id = ANY): the check tells them apart.
    assert unpinned(by_place["sponsorbot.engine.inbox:CLAIM"], catalog.schema)


async def test_postgresql_accepts_every_statement_on_the_migrated_schema(db_dsn: str) -> None:
    """Prepared (planned, not run) against the current schema: a query that leaned on an old
    key (a GROUP BY that the primary key made valid, an ON CONFLICT target) fails here."""
    found = product_sql()
    conn = await asyncpg.connect(db_dsn)
    refused = []
    try:
        # `loadtest --statements` reads pg_stat_statements, which it creates in the load
        # test's database; creating it is enough to plan them (reading it needs the library).
        await conn.execute(statements.CREATE)
        for sql, where in sorted(found.statements.items(), key=lambda item: item[1]):
            # A migration's statements ran against the schema of their own time.
            if where in FRAGMENTS or where in NOT_ALONE or ".sql#" in where:
                continue
            if where.startswith(CITUS_ONLY):
                continue
            for one in pglast.split(sql):
                try:
                    await conn.prepare(one)
                except asyncpg.PostgresError as exc:
                    refused.append(f"{where}: {exc}")
    finally:
        await conn.close()
    assert refused == []


async def test_the_join_check_can_fail(db_dsn: str) -> None:
    """The checker itself: joins across bots are caught, joins within one bot are not."""
    catalog = await read_catalog(db_dsn)
    across = [
        "SELECT 1 FROM inbox i JOIN outbox o ON o.inbox_id = i.id",
        "SELECT 1 FROM people p WHERE EXISTS (SELECT 1 FROM events e WHERE e.user_id = p.user_id)",
        "UPDATE outbox o SET status = 'sent' FROM people p WHERE p.user_id = o.chat_id",
        "SELECT 1 FROM inbox i, outbox o WHERE i.bot_id = $1 AND o.bot_id = $2",
    ]
    within = [
        "SELECT 1 FROM inbox i JOIN outbox o ON o.inbox_id = i.id AND o.bot_id = i.bot_id",
        "SELECT 1 FROM inbox i, outbox o WHERE i.bot_id = $1 AND o.bot_id = $1::bigint",
        "SELECT 1 FROM people p WHERE p.bot_id = $1 AND EXISTS"
        " (SELECT 1 FROM events e WHERE e.bot_id = $1 AND e.user_id = p.user_id)",
        "SELECT 1 FROM inbox i JOIN bots b ON b.id = i.bot_id",
    ]
    assert [bool(cross_bot_joins(sql, catalog.schema)) for sql in across] == [True] * len(across)
    assert [cross_bot_joins(sql, catalog.schema) for sql in within] == [[]] * len(within)


# --- What follows the changed keys ------------------------------------------------------------

ADD_BOT = """
INSERT INTO bots (id, username, token_enc, token_tail, mode, webhook_path, webhook_secret_hash)
VALUES ($1::bigint, 'shop_bot', '', 'xxxx', 'webhook', 'path-' || $1::bigint, '')
"""
ADD_PRODUCT = """
INSERT INTO shop_products (bot_id, kind, title, price_usdt, days)
VALUES ($1, 'banner', 'Banner', 10, 3) RETURNING id
"""
ADD_BROADCAST = """
INSERT INTO broadcasts (bot_id, title, method, params, post, audience, created_by, status)
VALUES ($1, 'Ad', 'sendMessage', '{}', '{}', '{}', 'test', 'done') RETURNING id
"""
ADD_ORDER = """
INSERT INTO shop_orders (bot_id, product_id, broadcast_id, kind, title, user_id, price_usdt)
VALUES ($1, $2, $3, 'banner', 'Banner', 42, 10) RETURNING id
"""


async def test_a_product_goes_and_its_orders_stay_without_it(pool: asyncpg.Pool) -> None:
    """ON DELETE SET NULL became a composite key checked at commit: the shop clears the product
    from its orders first (ShopService.delete_product), and without that the delete fails."""
    await pool.execute(ADD_BOT, 7)
    product = await pool.fetchval(ADD_PRODUCT, 7)
    order = await pool.fetchval(ADD_ORDER, 7, product, None)
    await pool.execute(INSERT_LOG, order, "submitted", "tg:42", {})
    with pytest.raises(asyncpg.ForeignKeyViolationError):
        await pool.execute(shop_queries.DELETE_PRODUCT, 7, product)
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(shop_queries.DETACH_PRODUCT, 7, product)
        assert await conn.execute(shop_queries.DELETE_PRODUCT, 7, product) == "DELETE 1"
    row = await pool.fetchrow("SELECT product_id, title FROM shop_orders WHERE id = $1", order)
    assert (row["product_id"], row["title"]) == (None, "Banner")
    assert await pool.fetchval("SELECT bot_id FROM shop_order_log WHERE order_id = $1", order) == 7


async def test_removing_a_bot_removes_its_shop_whatever_refers_to_what(pool: asyncpg.Pool) -> None:
    """The bot's removal cascades to products, broadcasts and the orders that refer to both:
    the keys between them are checked at commit, when all of it is gone."""
    for bot in (7, 8):
        await pool.execute(ADD_BOT, bot)
        product = await pool.fetchval(ADD_PRODUCT, bot)
        broadcast = await pool.fetchval(ADD_BROADCAST, bot)
        order = await pool.fetchval(ADD_ORDER, bot, product, broadcast)
        await pool.execute(INSERT_LOG, order, "submitted", "tg:42", {})
    await pool.execute("DELETE FROM bots WHERE id = 7")
    left = await pool.fetch("SELECT DISTINCT bot_id FROM shop_orders")
    assert [r["bot_id"] for r in left] == [8]
    assert await pool.fetchval("SELECT count(*) FROM shop_order_log") == 1
    # An order cannot point at another bot's product.
    other = await pool.fetchval("SELECT id FROM shop_products WHERE bot_id = 8")
    await pool.execute(ADD_BOT, 9)
    with pytest.raises(asyncpg.ForeignKeyViolationError):
        await pool.execute(ADD_ORDER, 9, other, None)


async def test_the_statements_built_row_by_row_are_one_bot_each(db_dsn: str) -> None:
    """The statements of rows of VALUES (DYNAMIC_SQL), at their smallest and largest: each
    parses, PostgreSQL plans it on the migrated schema, and every table in it is tied to the
    one bot $1, so that Citus sends it whole to that bot's shard."""
    catalog = await read_catalog(db_dsn)
    built = {
        f"{make.__name__}({n})": make(n)
        for make in (
            outbox.enqueue_values,
            inbox.insert_text_values,
            outbox.refs_values,
            outbox.blocked_values,
        )
        for n in (1, outbox.VALUES_MOST)
    }
    conn = await asyncpg.connect(db_dsn)
    try:
        for sql in built.values():
            pglast.parse_sql(sql)
            await conn.prepare(sql)
    finally:
        await conn.close()
    assert {name: unpinned(sql, catalog.schema) for name, sql in built.items()} == {
        name: [] for name in built
    }
