"""The asyncpg pool every role uses."""

from __future__ import annotations

from typing import Any

import asyncpg
import orjson


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


# On a Citus coordinator, every catalog read on a connection hides the shards from pg_class
# by calling relation_is_a_known_shard() for each row; asyncpg's type introspection (a new
# connection's first statement with a jsonb[] parameter) reads pg_class once per type, and
# took 1.4-2.0 s there instead of 0.07 s without the hiding. The pool's connections read no
# catalog that needs the shards hidden. Set only where Citus is: sent at connect time to any
# server, the option would be refused by PgBouncer as an unknown startup parameter.
SHOW_SHARDS = """
SELECT set_config('citus.override_table_visibility', 'off', false)
WHERE EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')
"""


async def _init_pool_connection(conn: asyncpg.Connection) -> None:
    await conn.execute(SHOW_SHARDS)
    await _init_connection(conn)


async def _init_connection(conn: asyncpg.Connection) -> None:
    # JSON in and out as Python objects, so no query ever formats JSON by hand.
    for name in ("json", "jsonb"):
        await conn.set_type_codec(name, encoder=_dumps, decoder=orjson.loads, schema="pg_catalog")


async def _keep_session(conn: asyncpg.Connection) -> None:
    """No reset on release: our code leaves no session state behind (no SET, LISTEN or
    advisory lock on pooled connections), and asyncpg's default reset costs four statements
    per acquire, a third of a worker's database round trips under load."""


async def connect(
    dsn: str, *, role: str = "tool", command_timeout: float | None = None
) -> asyncpg.Connection:
    """One connection with the same codecs as the pool (for LISTEN and one-off tools); with
    `command_timeout`, no query on it waits longer."""
    conn = await asyncpg.connect(
        dsn,
        command_timeout=command_timeout,
        server_settings={"application_name": f"sponsorbot-{role}"},
    )
    await _init_connection(conn)
    return conn


async def create_pool(
    dsn: str,
    *,
    role: str,
    min_size: int = 2,
    max_size: int = 20,
    statement_cache_size: int = 256,
) -> asyncpg.Pool:
    """A pool with JSON codecs, prepared-statement cache and the role in `application_name`."""
    pool: asyncpg.Pool = await asyncpg.create_pool(
        dsn,
        min_size=min(min_size, max_size),
        max_size=max_size,
        statement_cache_size=statement_cache_size,
        max_inactive_connection_lifetime=300,
        init=_init_pool_connection,
        reset=_keep_session,
        server_settings={"application_name": f"sponsorbot-{role}"},
    )
    return pool


_CITUS_PRESENT = "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')"


async def on_citus(db: asyncpg.Pool | asyncpg.Connection) -> bool:
    """Whether the database is a Citus coordinator (the citus extension is present): asked once
    when a component starts, to choose the few statements that differ on Citus
    (docs/scaling.md)."""
    return bool(await db.fetchval(_CITUS_PRESENT))
