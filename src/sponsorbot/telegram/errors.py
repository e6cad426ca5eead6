"""Bot API errors, classified by error_code.

Bot tokens are credentials and the request URL carries them, so no text reaches an exception
without passing through :func:`scrub`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from sponsorbot.logs import TOKEN_PATTERN

# Tokens look like "123456789:AA...35 chars"; yarl may percent-encode the colon inside a URL.
# The log mask's pattern: one definition, so the two never drift apart.
_TOKEN_RE = TOKEN_PATTERN
_RETRY_AFTER_RE = re.compile(r"retry after (\d+(?:\.\d+)?)", re.IGNORECASE)
_REDACTED = "<token>"

# 403 descriptions meaning the person can no longer be messaged by this bot.
_BLOCKED_MARKERS = (
    "bot was blocked by the user",
    "user is deactivated",
    "bot can't initiate conversation",
    "bot can't send messages to bots",
    "bot was kicked from",
)


def scrub(text: str, token: str | None = None) -> str:
    """Replace anything that looks like a bot token (and ``token`` itself, if given) in ``text``."""
    if token:
        # The literal token catches tokens not shaped like Telegram's (e.g. simulator tokens).
        text = text.replace(token, _REDACTED).replace(token.replace(":", "%3A"), _REDACTED)
        _, _, secret = token.partition(":")
        if len(secret) >= 8:
            text = text.replace(secret, _REDACTED)
    return _TOKEN_RE.sub(_REDACTED, text)


class TelegramError(Exception):
    """A failed Bot API call.

    ``error_code`` is Telegram's code (the HTTP status for non-JSON answers, 0 for network
    errors). The message is ``"<method>: <code> <description>"`` with tokens scrubbed.
    """

    transient: ClassVar[bool] = False

    def __init__(
        self,
        method: str,
        error_code: int,
        description: str,
        *,
        retry_after: float | None = None,
        migrate_to_chat_id: int | None = None,
    ) -> None:
        """Build the error; ``description`` is scrubbed before it is stored."""
        self.method = scrub(method)
        self.error_code = error_code
        self.description = scrub(description)
        self.retry_after = retry_after
        self.migrate_to_chat_id = migrate_to_chat_id
        super().__init__(f"{self.method}: {error_code} {self.description}")

    @property
    def is_transient(self) -> bool:
        """True when retrying later may succeed: network errors, timeouts, 5xx and 429."""
        return self.transient or self.error_code == 429 or self.error_code >= 500

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only fields would be lost by Exception's default pickling (args only).
        return (
            _rebuild,
            (type(self), self.method, self.error_code, self.description),
            {"retry_after": self.retry_after, "migrate_to_chat_id": self.migrate_to_chat_id},
        )


def _rebuild(
    cls: type[TelegramError], method: str, error_code: int, description: str
) -> TelegramError:
    return cls(method, error_code, description)


class BadRequest(TelegramError):
    """400: the request was wrong (bad chat, message not modified, parse error...)."""


class Unauthorized(TelegramError):
    """401: the token was refused; the bot must stop."""


class Forbidden(TelegramError):
    """403: the bot may not act there (blocked by the user, kicked from the chat...)."""


class NotFound(TelegramError):
    """404: unknown method, or a token Telegram does not know."""


class Conflict(TelegramError):
    """409: getUpdates while a webhook is set, or two pollers at once."""


class RetryAfter(TelegramError):
    """429: flood control; ``retry_after`` holds the seconds to wait when Telegram said."""

    transient = True


class ServerError(TelegramError):
    """5xx, or an answer that is not Bot API JSON (a proxy's error page, say)."""

    transient = True


class NetworkError(TelegramError):
    """The call did not get an answer: connection failure, reset or timeout (error_code 0)."""

    transient = True


_BY_CODE: dict[int, type[TelegramError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    429: RetryAfter,
}


def _integer(value: object) -> int | None:
    # bool is an int subclass; JSON true is not a code.
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def error_from_answer(
    method: str,
    http_status: int,
    answer: Mapping[str, Any],
    retry_after_header: str | None = None,
    token: str | None = None,
) -> TelegramError:
    """Build the error for an ``ok: false`` answer, choosing the class from its error_code."""
    code = _integer(answer.get("error_code"))
    error_code = http_status if code is None else code
    description = str(answer.get("description") or "")
    raw_parameters = answer.get("parameters")
    parameters: Mapping[str, Any] = raw_parameters if isinstance(raw_parameters, Mapping) else {}

    retry_after = _number(parameters.get("retry_after"))
    if retry_after is None and error_code == 429:
        retry_after = _number(retry_after_header)
        if retry_after is None and (match := _RETRY_AFTER_RE.search(description)):
            retry_after = float(match.group(1))
    migrate_to_chat_id = _integer(parameters.get("migrate_to_chat_id"))

    cls = _BY_CODE.get(error_code, ServerError if error_code >= 500 else TelegramError)
    return cls(
        method,
        error_code,
        scrub(description, token),
        retry_after=retry_after,
        migrate_to_chat_id=migrate_to_chat_id,
    )


def is_blocked(e: BaseException) -> bool:
    """True when a 403 says this person can no longer be messaged (blocked, deactivated...)."""
    if not isinstance(e, TelegramError) or e.error_code != 403:
        return False
    description = e.description.lower()
    return any(marker in description for marker in _BLOCKED_MARKERS)


def is_not_modified(e: BaseException) -> bool:
    """True for the 400 "message is not modified", which a sender may treat as done."""
    return (
        isinstance(e, TelegramError)
        and e.error_code == 400
        and "message is not modified" in e.description.lower()
    )


def is_already_gone(e: BaseException) -> bool:
    """True for a deleteMessage refused because there is nothing left to do: the person
    deleted the message already, or it is past the 48 hours in which a bot may delete."""
    if not isinstance(e, TelegramError) or e.error_code != 400:
        return False
    text = e.description.lower()
    return "message to delete not found" in text or "message can't be deleted" in text
