"""The statistics' facts as a FROM item of a statement: the body of the database function
`sponsorbot_stat_facts` (migration 0012 defines what a fact is), with the statement's own
bounds and bots in place of the function's arguments.

The statements read this text instead of calling the function because Citus refuses a SQL
function over distributed tables called with parameters ("parameterized queries for SQL
functions referencing distributed tables are not supported"), while it plans the same text
written out. On one server PostgreSQL inlines the function into the statement, so the plan is
the one the call had. The function stays, for reading the facts by hand and in tests; a test
checks that this text is still its body.
"""

from __future__ import annotations

import re
from functools import cache

from sponsorbot.db.migrate import MIGRATIONS_DIR

DEFINITION = re.compile(r"CREATE FUNCTION sponsorbot_stat_facts\(.*?\$\$(.*?)\$\$;", re.DOTALL)
BOTS = re.compile(r"\(bots IS NULL OR (\w+)\.bot_id = ANY \(bots\)\)")
COLUMNS = "(bot_id, at, kind, dim, user_id, n)"


@cache
def body() -> str:
    """The function's body, as its migration defines it (read once; not a module constant,
    as alone it is no statement: its a, b and bots are the function's arguments)."""
    found = DEFINITION.search((MIGRATIONS_DIR / "0012_stats.sql").read_text(encoding="utf-8"))
    if found is None:
        raise RuntimeError("0012_stats.sql no longer defines sponsorbot_stat_facts")
    return found[1]


def facts(start: str, end: str, bots: str | None) -> str:
    """The facts of [start, end) of the bots `bots` (SQL expressions over the statement's
    parameters, never user input; None: every bot), as `(...) AS facts` with the function's
    columns."""
    text = body().replace(">= a AND", f">= {start} AND").replace("< b AND", f"< {end} AND")
    text = BOTS.sub("true" if bots is None else rf"\1.bot_id = ANY ({bots})", text)
    return f"({text}) AS facts {COLUMNS}"
