"""What a feature service raises when the owner's request cannot be done; the web layer maps
each class to an HTTP status, the bot-side handlers to a reply."""

from __future__ import annotations

from typing import Any


class FeatureError(Exception):
    """A request that cannot be done; the message says why in words an owner understands."""

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        # Stable, for a translated text in the panel; the message is the English fallback.
        self.code = code
        self.details = details


class NotFound(FeatureError):
    """The thing named does not exist (for this bot)."""


class Conflict(FeatureError):
    """It exists already, or the current state forbids the change."""


class Invalid(FeatureError):
    """The input is well-formed but cannot be used (an unknown channel reference, ...)."""


class Refused(FeatureError):
    """Telegram refused what was asked (the bot is not an admin, a right is missing, ...)."""


class TooLarge(FeatureError):
    """An upload over the size limit."""
