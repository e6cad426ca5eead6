"""Statistics events, gathered during a handler and written with its done mark."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import asyncpg

from sponsorbot.engine.unit import UnitOfWork


class EventKind(StrEnum):
    """The statistics vocabulary: every kind of event a feature records.

    The database holds the same list (the CHECK on events.kind); a new kind needs both.
    """

    STARTED = "started"
    GATE_SHOWN = "gate_shown"
    GATE_PASSED = "gate_passed"
    CONTENT_SENT = "content_sent"
    UNKNOWN_CODE = "unknown_code"
    JOINED = "joined"
    LEFT = "left"
    JOIN_REQUEST = "join_request"
    CHANNEL_UNKNOWN = "channel_unknown"


INSERT = """
INSERT INTO events (bot_id, kind, user_id, content_id, chat_id, data)
SELECT $1, e.kind, e.user_id, e.content_id, e.chat_id, e.data
FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::jsonb[])
     AS e (kind, user_id, content_id, chat_id, data)
"""

# Events are partitioned by month (0007_events_by_month.sql): make this month's and the next
# one's partitions ahead of time, so new rows never land in the default partition.
PREPARE_MONTHS = """
SELECT sponsorbot_events_month(now()), sponsorbot_events_month(now() + interval '1 month')
"""
PREPARE_EVERY_S = 6 * 3600.0


async def prepare_months(pool: asyncpg.Pool) -> None:
    """The periodic job that keeps the event partitions ahead of the clock."""
    await pool.execute(PREPARE_MONTHS)


@dataclass(slots=True)
class Events:
    """Events of one update; `flush` adds a single INSERT to the unit of work."""

    bot_id: int
    rows: list[tuple[EventKind, int | None, int | None, int | None, dict[str, Any] | None]] = field(
        default_factory=list
    )

    def add(
        self,
        kind: EventKind,
        user_id: int | None = None,
        *,
        content_id: int | None = None,
        chat_id: int | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        """Record one event."""
        self.rows.append((kind, user_id, content_id, chat_id, data))

    def flush(self, uow: UnitOfWork) -> None:
        """Write the gathered events with the update's other writes."""
        if not self.rows:
            return
        kinds, users, contents, chats, data = (list(col) for col in zip(*self.rows, strict=True))
        uow.write_alone(INSERT, self.bot_id, kinds, users, contents, chats, data)
        self.rows = []
