"""A plain-text description of a database schema, for the migration snapshot test."""

from __future__ import annotations

import asyncpg

_COLUMNS = """
SELECT c.relname AS tbl, a.attname AS col, format_type(a.atttypid, a.atttypmod) AS type,
       a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS dflt
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
  AND NOT c.relispartition
ORDER BY c.relname, a.attnum
"""
_INDEXES = """
SELECT i.indexdef FROM pg_indexes i
JOIN pg_class c ON c.relname = i.tablename AND c.relnamespace = 'public'::regnamespace
WHERE i.schemaname = 'public' AND NOT c.relispartition ORDER BY i.tablename, i.indexname
"""
_CONSTRAINTS = """
SELECT c.relname AS tbl, k.conname AS name, pg_get_constraintdef(k.oid) AS def
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND NOT c.relispartition
  AND k.contype <> 'n'  -- PostgreSQL 18 lists NOT NULL as constraints; the columns say it
ORDER BY c.relname, k.conname
"""
_OPTIONS = """
SELECT c.relname AS tbl, array_to_string(c.reloptions, ',') AS opts
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.reloptions IS NOT NULL AND c.relkind IN ('r', 'p')
ORDER BY c.relname
"""
# Monthly partitions are named by date; only their existence is part of the schema.
_PARTITIONED = """
SELECT p.relname AS tbl, pg_get_partkeydef(p.oid) AS key,
       bool_or(pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT') AS has_default
FROM pg_class p JOIN pg_namespace n ON n.oid = p.relnamespace
LEFT JOIN pg_inherits h ON h.inhparent = p.oid
LEFT JOIN pg_class c ON c.oid = h.inhrelid
WHERE n.nspname = 'public' AND p.relkind = 'p'
GROUP BY p.oid, p.relname ORDER BY 1
"""
_FUNCTIONS = """
SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS sig
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' ORDER BY 1
"""


async def describe_schema(conn: asyncpg.Connection) -> str:
    """Tables, columns, constraints, indexes, storage options and functions, one per line."""
    lines: list[str] = []
    for r in await conn.fetch(_COLUMNS):
        null = " NOT NULL" if r["not_null"] else ""
        default = f" DEFAULT {r['dflt']}" if r["dflt"] is not None else ""
        lines.append(f"column {r['tbl']}.{r['col']} {r['type']}{null}{default}")
    for r in await conn.fetch(_CONSTRAINTS):
        lines.append(f"constraint {r['tbl']}.{r['name']} {r['def']}")
    for r in await conn.fetch(_INDEXES):
        lines.append(f"index {r['indexdef']}")
    for r in await conn.fetch(_OPTIONS):
        lines.append(f"options {r['tbl']} {r['opts']}")
    for r in await conn.fetch(_PARTITIONED):
        lines.append(f"partitioned {r['tbl']} {r['key']} default={r['has_default']}")
    for r in await conn.fetch(_FUNCTIONS):
        lines.append(f"function {r['sig']}")
    return "\n".join(lines) + "\n"
