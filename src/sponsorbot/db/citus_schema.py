"""Where each table goes on Citus, and distributing the migrated schema accordingly.

One classification, used by `sponsorbot migrate` (below) and by the Citus-ready test
(tests/integration/test_citus_ready.py), so the two cannot disagree:

- every table with a `bot_id` column is distributed by it, all in one colocation group (one
  bot's rows on one node), except the ones in NOT_BY_BOT;
- the tables without `bot_id` are each classed in WORKSPACE_TABLES: a reference table (copied
  to every node) or a coordinator table (left a plain table on the coordinator).

When the database has the `citus` extension, `migrate` ends with `distribute`: it makes the
reference tables, then distributes the bot tables in the order of their foreign keys. Tables
already in Citus's metadata are left as they are, so a second run does nothing, and a table a
later migration adds is distributed by the run that adds it. docs/scaling.md says what a
migration must respect once the schema is distributed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import asyncpg

log = logging.getLogger(__name__)

DIST = "bot_id"

# The tables without bot_id. "reference": copied to every node, because bot tables hold
# foreign keys to it or statements on bot tables read it. "coordinator": stays a plain table
# on the coordinator: the panel's and the workers' own bookkeeping, written often or never
# joined with a bot's rows.
WORKSPACE_TABLES: dict[str, tuple[str, str]] = {
    "bots": ("reference", "every bot table's foreign key points at it; the webhook lookup"),
    "campaigns": ("reference", "a campaign spans bots; campaign_bots and shop_orders refer"),
    "workspace": ("reference", "one row of settings (time zone, language)"),
    "shop_transfers": (
        "reference",
        "a transfer pays once whatever bot's order claims it (shops may share an address);"
        " written once per transfer, read beside shop_orders and shop_payments",
    ),
    "leases": ("coordinator", "renewed every few seconds; the senders' fence reads it"),
    "workers": ("coordinator", "the liveness registry, next to pg_locks of the coordinator"),
    "stats_rollup": ("coordinator", "one row: how far the statistics job has got"),
    "schema_migrations": ("coordinator", "the migrations applied"),
    "token_key_check": ("coordinator", "one row: the installation key's check value"),
    "users": ("coordinator", "the panel's team"),
    "panel_sessions": ("coordinator", "the panel's sessions"),
    "setup_codes": ("coordinator", "first-run setup"),
    "invitations": ("coordinator", "the panel's invitations"),
    "password_resets": ("coordinator", "the panel's reset links"),
    "signin_failures": ("coordinator", "the panel's sign-in throttle"),
    "audit_log": ("coordinator", "the panel's audit log"),
    "api_tokens": ("coordinator", "owner API tokens"),
    "team_links": ("coordinator", "the team's linked Telegram chats"),
    "team_link_codes": ("coordinator", "one-time codes that link a member's chat"),
    "alert_prefs": ("coordinator", "what each member wants to be told"),
    "alerts": ("coordinator", "what the team is told; written by one job"),
    "alert_deliveries": ("coordinator", "each member's copy of an alert"),
    "alert_marks": ("coordinator", "how far the alerts' collector has read"),
}

# Tables with bot_id that are deliberately not distributed by it: the column they are
# distributed by instead (each in a colocation group of its own), and why.
NOT_BY_BOT: dict[str, tuple[str, str]] = {
    "campaign_members": (
        "campaign_id",
        "one row per (campaign, person) whatever the bot: a person is credited once per"
        " campaign across all its bots, and bot_id is NULL for joins outside the gate;"
        " distributed by campaign_id in a colocation group of its own (docs/scaling.md)",
    ),
}

# Unique indexes on bot tables that stay without bot_id on a single server. Citus cannot keep a
# unique index without the distribution column, so `distribute` drops each before distributing
# its table; the reason says what holds the rule then.
CROSS_BOT_UNIQUE: dict[str, tuple[str, str]] = {
    "shop_payments_credit_once": (
        "shop_payments",
        "a transaction hash pays one order once in the whole workspace: two bots' shops may"
        " share an address, so the rule spans bots. Since migration 0021 a credit is a"
        " shop_transfers row (a reference table, UNIQUE (network, tx_hash)) credited to one"
        " order, and a claim is marked credited only with it (features/shop/ledger.py), so on"
        " Citus that key holds the rule",
    ),
}

# The bot table the others are colocated with: distributed first, in a group of its own.
ANCHOR = "people"

_TABLES = """
SELECT c.relname AS name,
       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'bot_id'
               AND a.attnum > 0 AND NOT a.attisdropped) AS has_bot_id
FROM pg_class c
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
  AND NOT c.relispartition
"""
# Foreign keys between our tables: (table, the table it refers to).
_REFERENCES = """
SELECT DISTINCT c.relname AS tbl, f.relname AS ref
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class f ON f.oid = k.confrelid
WHERE k.contype = 'f' AND c.relnamespace = 'public'::regnamespace AND NOT c.relispartition
  AND k.conparentid = 0 AND c.oid <> f.oid
"""
# What Citus has of our tables now: 'distributed', 'reference' or 'local' (a coordinator table
# Citus took into its metadata because it refers to a reference table), and the column.
_CITUS_TABLES = """
SELECT c.relname AS name, p.partmethod::text AS method, p.repmodel::text AS repmodel,
       p.colocationid AS colocation,
       CASE WHEN p.partmethod = 'h' THEN column_to_column_name(p.logicalrelid, p.partkey)
       END AS column_name
FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
WHERE c.relnamespace = 'public'::regnamespace
"""
_ANCHORED = "SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass($1))"
_INDEX_EXISTS = "SELECT to_regclass($1) IS NOT NULL"
_MAKE_REFERENCE = "SELECT create_reference_table($1)"
_DISTRIBUTE_ANCHOR = "SELECT create_distributed_table($1, $2, colocate_with => 'none')"
_DISTRIBUTE_WITH = "SELECT create_distributed_table($1, $2, colocate_with => $3)"
# Distributing copies a table's rows to the shards and leaves the originals behind, unread.
_DROP_LOCAL_COPY = "SELECT truncate_local_data_after_distributing_table($1)"
_NO_LOCAL_CONVERSION = "SET LOCAL citus.enable_local_reference_table_foreign_keys = off"
SEQUENTIAL = "SET LOCAL citus.multi_shard_modify_mode TO 'sequential'"
_TRIGGERS = "SET LOCAL citus.enable_unsafe_triggers = on"
# sponsorbot_events_month() moves a month's rows out of the default partition, then makes the
# partition: on Citus the two went over different connections of one transaction, and Citus
# cancelled it as a distributed deadlock (4 calls of 4 on a fresh connection each). Sequential
# mode, set on the function itself, holds for every caller (the statistics job, the demo).
_MONTHS_SEQUENTIAL = (
    "ALTER FUNCTION sponsorbot_events_month(timestamptz)"
    " SET citus.multi_shard_modify_mode = 'sequential'"
)
_HAS_ROWS = 'SELECT EXISTS (SELECT 1 FROM "{table}")'


class CitusSchemaError(Exception):
    """A table is in Citus's metadata in another way than the classification says."""


@dataclass(frozen=True)
class Placement:
    """Where one table goes: 'distributed' (by `column`), 'reference' or 'coordinator'."""

    kind: str
    column: str | None = None


@dataclass(frozen=True)
class Layout:
    """Every table of the schema with its placement, in an order that respects foreign keys."""

    tables: dict[str, Placement]
    order: list[str]


def classify(with_bot_id: dict[str, bool]) -> dict[str, Placement]:
    """Each table's placement, from whether it has a bot_id column.

    A table without bot_id that WORKSPACE_TABLES does not class raises CitusSchemaError: it
    must be classed on purpose (the Citus-ready test says the same).
    """
    placed: dict[str, Placement] = {}
    unclassed = []
    for table, has in sorted(with_bot_id.items()):
        if table in NOT_BY_BOT:
            placed[table] = Placement("distributed", NOT_BY_BOT[table][0])
        elif has:
            placed[table] = Placement("distributed", DIST)
        elif table in WORKSPACE_TABLES:
            placed[table] = Placement(WORKSPACE_TABLES[table][0])
        else:
            unclassed.append(table)
    if unclassed:
        raise CitusSchemaError(
            f"table(s) {', '.join(unclassed)} without bot_id are not classed in"
            " sponsorbot.db.citus_schema.WORKSPACE_TABLES"
        )
    return placed


def dependency_order(tables: dict[str, Placement], references: list[tuple[str, str]]) -> list[str]:
    """The tables ordered so each comes after the tables it refers to: the reference tables
    first, then ANCHOR, then the rest, names breaking ties; a cycle raises CitusSchemaError."""
    needs = {t: {ref for tbl, ref in references if tbl == t and ref in tables} for t in tables}

    def rank(table: str) -> tuple[int, str]:
        first = 0 if tables[table].kind == "reference" else 1 if table == ANCHOR else 2
        return first, table

    order: list[str] = []
    while needs:
        ready = [t for t, refs in needs.items() if not refs]
        if not ready:
            raise CitusSchemaError(f"foreign keys in a cycle among {', '.join(sorted(needs))}")
        table = min(ready, key=rank)
        order.append(table)
        del needs[table]
        for refs in needs.values():
            refs.discard(table)
    return order


async def read_layout(conn: asyncpg.Connection) -> Layout:
    """The placement of every table of the migrated schema, in foreign-key order."""
    rows = await conn.fetch(_TABLES)
    tables = classify({r["name"]: r["has_bot_id"] for r in rows})
    references = [(r["tbl"], r["ref"]) for r in await conn.fetch(_REFERENCES)]
    return Layout(tables, dependency_order(tables, references))


async def is_distributed(conn: asyncpg.Connection) -> bool:
    """Whether `distribute` has run here (ANCHOR is a distributed table)."""
    return bool(await conn.fetchval(_ANCHORED, ANCHOR))


async def citus_tables(conn: asyncpg.Connection) -> dict[str, asyncpg.Record]:
    """Our tables in Citus's metadata, by name (method 'h' distributed, 'n' reference or
    local; repmodel 't' for a reference table)."""
    return {r["name"]: r for r in await conn.fetch(_CITUS_TABLES)}


def _matches(placement: Placement, row: asyncpg.Record) -> bool:
    if placement.kind == "distributed":
        return bool(row["method"] == "h" and row["column_name"] == placement.column)
    if placement.kind == "reference":
        return bool(row["method"] == "n" and row["repmodel"] == "t")
    # A coordinator table Citus took in (it refers to a reference table) stays on the
    # coordinator: a "citus local" table, method 'n', one placement.
    return bool(row["method"] == "n" and row["repmodel"] != "t")


async def distribute(conn: asyncpg.Connection) -> list[str]:
    """Make the reference tables and distribute the bot tables that are not yet; return what
    was done, one line a table (nothing when the schema is distributed already).

    Runs on the coordinator, outside a transaction (Citus copies each table's rows in its own).
    A table Citus holds otherwise than classified raises CitusSchemaError.
    """
    layout = await read_layout(conn)
    known = await citus_tables(conn)
    wrong = sorted(
        f"{name} ({row['method']}/{row['column_name']}; classed {layout.tables[name]})"
        for name, row in known.items()
        if name in layout.tables and not _matches(layout.tables[name], row)
    )
    if wrong:
        raise CitusSchemaError(f"Citus holds table(s) otherwise than classified: {wrong}")
    done: list[str] = []
    copied: list[str] = []
    anchored = ANCHOR in known
    for table in layout.order:
        placement = layout.tables[table]
        if table in known or placement.kind == "coordinator":
            continue
        if placement.kind == "reference":
            created = await _create(conn, table, _MAKE_REFERENCE, table)
        else:
            for index, (owner, _) in CROSS_BOT_UNIQUE.items():
                if owner == table and await conn.fetchval(_INDEX_EXISTS, index):
                    await conn.execute(f"DROP INDEX {index}")
                    done.append(f"dropped {index} (Citus cannot keep it; see its reason)")
            if table in NOT_BY_BOT:
                created = await _create(
                    conn, table, _DISTRIBUTE_ANCHOR, table, NOT_BY_BOT[table][0]
                )
            elif not anchored:
                if table != ANCHOR:
                    raise CitusSchemaError(f"{ANCHOR} must be distributed before {table}")
                created = await _create(conn, table, _DISTRIBUTE_ANCHOR, table, DIST)
                anchored = True
            else:
                created = await _create(conn, table, _DISTRIBUTE_WITH, table, DIST, ANCHOR)
        if created:
            copied.append(table)
        by = f" by {placement.column}" if placement.column else ""
        done.append(f"{table}: {placement.kind}{by}")
    # Only now: a local table still referring to one of them would refuse its truncation.
    for table in reversed(copied):
        await conn.execute(_DROP_LOCAL_COPY, table)
    await conn.execute(_MONTHS_SEQUENTIAL)
    for line in done:
        log.info("citus: %s", line)
    return done


async def _create(conn: asyncpg.Connection, table: str, statement: str, *args: str) -> bool:
    """Run one create_*_table call in a transaction of its own; whether the table had rows."""
    async with conn.transaction():
        # Left on, Citus would turn every local table referring to a new reference table into
        # a "Citus local" table first, which fails for the partitioned `events` (its CHECK
        # constraint); those tables are the bot tables, distributed next in this same run.
        await conn.execute(_NO_LOCAL_CONVERSION)
        # A table referring to a reference table must be made over one connection per node.
        await conn.execute(SEQUENTIAL)
        # Our one trigger (campaign_members) reads only its own row, which Citus then runs on
        # the shard; the Citus-ready test pins the triggers with what they touch.
        await conn.execute(_TRIGGERS)
        had_rows = bool(await conn.fetchval(_HAS_ROWS.format(table=table)))
        await conn.execute(statement, *args)
    return had_rows
