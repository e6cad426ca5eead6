"""What a lost or refusing database looks like from asyncpg."""

from __future__ import annotations

import asyncpg

# The server went away, refused, or answered with an error: worth a log line and a retry, not a
# crash. One tuple, so every `except` means the same thing.
DB_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    # Raised when the server drops the connection in the middle of a statement (a restart).
    asyncpg.InternalClientError,
)

# SQLSTATE classes of a failure of the connection or the server rather than of the statement:
# connection exception, transaction rollback (serialization, deadlock), insufficient
# resources, operator intervention (shutdown, restart).
_TRANSIENT_CLASSES = frozenset({"08", "40", "53", "57"})


def is_transient(exc: BaseException) -> bool:
    """True when the same statement may well succeed later: the database restarted, the
    connection dropped, or a deadlock chose us; not a constraint or a data error."""
    if isinstance(
        exc, OSError | asyncpg.InterfaceError | asyncpg.InternalClientError | TimeoutError
    ):
        return True
    if isinstance(exc, asyncpg.PostgresError):
        return str(getattr(exc, "sqlstate", "") or "")[:2] in _TRANSIENT_CLASSES
    return False
