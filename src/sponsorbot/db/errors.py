"""What a lost or refusing database looks like from asyncpg."""

from __future__ import annotations

import asyncpg

# The server went away, refused, or answered with an error: worth a log line and a retry, not a
# crash. One tuple, so every `except` means the same thing.
DB_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
)
