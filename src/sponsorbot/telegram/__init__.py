"""Telegram Bot API client: :class:`BotApi` (one per process), :class:`Bot` (one per token)."""

from sponsorbot.telegram.client import Bot, BotApi, FileUpload, JsonDict
from sponsorbot.telegram.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    NetworkError,
    NotFound,
    RetryAfter,
    ServerError,
    TelegramError,
    Unauthorized,
    is_already_gone,
    is_blocked,
    is_not_modified,
    scrub,
)

__all__ = [
    "BadRequest",
    "Bot",
    "BotApi",
    "Conflict",
    "FileUpload",
    "Forbidden",
    "JsonDict",
    "NetworkError",
    "NotFound",
    "RetryAfter",
    "ServerError",
    "TelegramError",
    "Unauthorized",
    "is_already_gone",
    "is_blocked",
    "is_not_modified",
    "scrub",
]
