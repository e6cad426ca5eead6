"""Conversation state: where one person stands in a dialogue with a bot.

"The next text from this person is the transaction hash", "this uploader is gathering a batch":
one row per (bot, person) with a state name, a little JSON and an expiry. Handlers read it in the
read phase (`Context.conversation()`, one indexed read, only when a filter or handler asks) and
change it through the unit of work, so the new state commits with the update that caused it.
Per-person ordering means nobody else changes it between the read and the commit. A dialogue
names its states once, in a `States` class (as aiogram's `StatesGroup`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

DEFAULT_TTL_S = 24 * 3600.0

READ = """
SELECT state, data, expires_at FROM conversations
WHERE bot_id = $1 AND user_id = $2 AND expires_at > now()
"""
SET = """
INSERT INTO conversations (bot_id, user_id, state, data, expires_at)
VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))
ON CONFLICT (bot_id, user_id) DO UPDATE
SET state = excluded.state, data = excluded.data, expires_at = excluded.expires_at,
    updated_at = excluded.updated_at
"""
END = "DELETE FROM conversations WHERE bot_id = $1 AND user_id = $2"


class States(StrEnum):
    """The states of one dialogue: `class Step(States): MATERIAL = "shop:material"`. A member
    is its name as stored (a str); `State(Step)` passes in any of them."""

    @classmethod
    def holds(cls, name: str) -> bool:
        """Whether `name` is one of these states."""
        return name in cls._value2member_map_


class Writes(Protocol):
    """Where a state change is recorded: the update's unit of work (`engine/unit.py`), which
    reads conversations through this module and so stands above it."""

    @property
    def bot_id(self) -> int:
        """The bot the update came to."""

    def write_alone(self, sql: str, *args: Any) -> None:
        """Run one statement with the update's commit."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """An open conversation: its state name and data."""

    state: str
    data: dict[str, Any] = field(default_factory=dict)
    expires_at: datetime | None = None

    @classmethod
    def of(cls, row: Any) -> Conversation | None:
        """From a READ row (None: no open conversation)."""
        if row is None:
            return None
        data = row["data"]
        return cls(row["state"], dict(data) if isinstance(data, dict) else {}, row["expires_at"])

    @classmethod
    def of_claim(cls, talk: dict[str, Any]) -> Conversation | None:
        """From the claim's `talk` column (inbox.CLAIM): {} when none is open."""
        if not talk:
            return None
        return cls.of({**talk, "expires_at": datetime.fromtimestamp(talk["expires_at"], UTC)})


def begin(
    uow: Writes,
    user_id: int,
    state: str,
    data: dict[str, Any] | None = None,
    *,
    ttl_s: float = DEFAULT_TTL_S,
) -> None:
    """Set this person's state (replacing any other) when the update commits."""
    if not state or len(state) > 64:
        raise ValueError("a state name is 1 to 64 characters")
    uow.write_alone(SET, uow.bot_id, user_id, state, data or {}, ttl_s)


def end(uow: Writes, user_id: int) -> None:
    """Close this person's conversation when the update commits."""
    uow.write_alone(END, uow.bot_id, user_id)
