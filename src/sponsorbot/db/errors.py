"""What a lost or refusing database looks like from asyncpg."""

from __future__ import annotations

import errno

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


# What a connection that cannot be made or was cut looks like as an OSError (asyncio gives a
# bare OSError, errno None, when every address of a host refused).
_CONNECTION_ERRNOS = frozenset(
    {
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.ECONNABORTED,
        errno.ETIMEDOUT,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.EPIPE,
        None,
    }
)


def is_transient(exc: BaseException) -> bool:
    """True when the same statement may well succeed later: the database restarted, the
    connection dropped, or a deadlock chose us; not a constraint or a data error, and not an
    OSError of a handler's own (a missing file is no outage)."""
    if isinstance(exc, asyncpg.InterfaceError | asyncpg.InternalClientError | TimeoutError):
        return True
    if isinstance(exc, OSError):
        return isinstance(exc, ConnectionError) or exc.errno in _CONNECTION_ERRNOS
    if isinstance(exc, asyncpg.PostgresError):
        return str(getattr(exc, "sqlstate", "") or "")[:2] in _TRANSIENT_CLASSES
    return False
