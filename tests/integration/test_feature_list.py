"""The feature list as the runtime sets it up: what Telegram is asked for, what events exist."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from sponsorbot.engine.core import Engine
from sponsorbot.features.all import install
from sponsorbot.features.stats.events import EventKind
from tests.kit import make_settings

CHECK = """
SELECT pg_get_constraintdef(oid) FROM pg_constraint
WHERE conname = 'events_kind_check' AND conrelid = 'events'::regclass
"""


async def test_features_ask_for_what_they_handle_and_record_known_events(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    engine = Engine(make_settings(db_dsn, "http://127.0.0.1:9", tmp_path), pool, db_dsn)
    try:
        features = install(engine)
        assert engine.router.kinds() == [
            "callback_query",
            "chat_join_request",
            "chat_member",
            "message",
            "my_chat_member",
        ]
        # Every kind a feature records is in the vocabulary and allowed by the database.
        allowed = await pool.fetchval(CHECK)
        kinds = features.event_kinds()
        assert kinds and set(kinds) <= {k.value for k in EventKind}
        for kind in EventKind:
            assert f"'{kind.value}'" in allowed, f"the database refuses the event kind {kind}"
    finally:
        await engine.close()
