"""`loadtest --statements` on a server that does not load pg_stat_statements: a clear error."""

from __future__ import annotations

import asyncpg
import pytest

from sponsorbot.loadtest import statements


async def test_a_server_without_the_library_is_refused_with_what_to_set(
    pool: asyncpg.Pool,
) -> None:
    if await pool.fetchval("SELECT current_setting('shared_preload_libraries')"):
        pytest.skip("this server preloads libraries; the refusal needs one that does not")
    with pytest.raises(statements.StatementsUnavailable) as caught:
        await statements.check(pool)
    assert "shared_preload_libraries = 'pg_stat_statements'" in str(caught.value)
