"""The log of Bot API calls: cheap tuples with a sequence number for paging."""

from __future__ import annotations

from typing import Any, NamedTuple


class Call(NamedTuple):
    """One Bot API call; ``ts`` is when it was answered (a send's acceptance time)."""

    seq: int
    ts: float
    method: str
    bot_id: int | None
    chat_id: int | str | None
    ok: bool
    error_code: int | None
    message_id: int | None

    def json(self) -> dict[str, Any]:
        """The call as a JSON object for the control API."""
        return self._asdict()


class CallLog:
    """Append-only log bounded to about ``keep`` calls (the oldest half goes when full)."""

    def __init__(self, keep: int = 1_000_000) -> None:
        self.keep = keep
        self._calls: list[Call] = []
        self._first_seq = 1

    @property
    def last_seq(self) -> int:
        """The sequence number of the newest call (0 when none yet)."""
        return self._first_seq + len(self._calls) - 1

    def append(
        self,
        ts: float,
        method: str,
        bot_id: int | None,
        chat_id: int | str | None,
        ok: bool,
        error_code: int | None,
        message_id: int | None,
    ) -> None:
        """Record one call."""
        calls = self._calls
        calls.append(
            Call(
                self._first_seq + len(calls),
                ts,
                method,
                bot_id,
                chat_id,
                ok,
                error_code,
                message_id,
            )
        )
        if len(calls) > self.keep:
            drop = len(calls) // 2
            del calls[:drop]
            self._first_seq += drop

    def since(self, seq: int, limit: int) -> list[Call]:
        """Up to ``limit`` calls with a sequence number above ``seq``."""
        start = max(0, seq + 1 - self._first_seq)
        return self._calls[start : start + limit]

    def clear(self) -> None:
        """Forget every call; numbering goes on, so old cursors stay valid."""
        self._first_seq += len(self._calls)
        self._calls.clear()
