"""Bot API errors with the exact codes and descriptions the real server sends."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error answered as ``{"ok": false, "error_code": ..., "description": ...}``."""

    def __init__(
        self, error_code: int, description: str, parameters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.parameters = parameters or {}


def bad_request(detail: str) -> ApiError:
    """A 400 whose description is ``Bad Request: <detail>``."""
    return ApiError(400, f"Bad Request: {detail}")


def forbidden(detail: str) -> ApiError:
    """A 403 whose description is ``Forbidden: <detail>``."""
    return ApiError(403, f"Forbidden: {detail}")


def too_many_requests(retry_after: int) -> ApiError:
    """A 429 carrying ``retry_after`` in its parameters (the server adds the header)."""
    return ApiError(
        429,
        f"Too Many Requests: retry after {retry_after}",
        {"retry_after": retry_after},
    )


def unauthorized() -> ApiError:
    """The answer to a missing or revoked token."""
    return ApiError(401, "Unauthorized")


def method_not_found() -> ApiError:
    """The answer to an unknown method name."""
    return ApiError(404, "Not Found")


def webhook_conflict() -> ApiError:
    """getUpdates while a webhook is set."""
    return ApiError(
        409,
        "Conflict: can't use getUpdates method while webhook is active; "
        "use deleteWebhook to delete the webhook first",
    )


def polling_conflict() -> ApiError:
    """The answer to an older long poll cut short by a newer one."""
    return ApiError(
        409,
        "Conflict: terminated by other getUpdates request; "
        "make sure that only one bot instance is running",
    )


CHAT_NOT_FOUND = "chat not found"
USER_NOT_FOUND = "user not found"
MEMBER_LIST_INACCESSIBLE = "member list is inaccessible"
MESSAGE_TO_DELETE_NOT_FOUND = "message to delete not found"
MESSAGE_TO_EDIT_NOT_FOUND = "message to edit not found"
MESSAGE_TO_COPY_NOT_FOUND = "message to copy not found"
MESSAGE_TO_FORWARD_NOT_FOUND = "message to forward not found"
MESSAGE_CANT_BE_EDITED = "message can't be edited"
MESSAGE_CANT_BE_DELETED = "message can't be deleted"
NO_TEXT_TO_EDIT = "there is no text in the message to edit"
NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "query is too old and response timeout expired or query ID is invalid"
BLOCKED = "bot was blocked by the user"
DEACTIVATED = "user is deactivated"
CANT_INITIATE = "bot can't initiate conversation with a user"
NEED_ADMIN_RIGHTS = "need administrator rights in the channel chat"
WRONG_FILE_ID = "wrong file identifier/HTTP URL specified"
PROTECTED_CONTENT = "message has protected content and can't be forwarded"
TEXT_EMPTY = "message text is empty"
TEXT_TOO_LONG = "message is too long"
INVITE_HASH_EXPIRED = "INVITE_HASH_EXPIRED"
HIDE_REQUESTER_MISSING = "HIDE_REQUESTER_MISSING"
USER_ALREADY_PARTICIPANT = "USER_ALREADY_PARTICIPANT"
BUTTON_DATA_INVALID = "BUTTON_DATA_INVALID"


def from_tdlib(message: str) -> ApiError:
    """A 400 for one of tdlib's error messages, worded as the Bot API server words it: the
    first letter lower-cased unless the message is an UPPER_CASE code (tdlib's ``Text must be
    non-empty`` is the Bot API's ``Bad Request: text must be non-empty``)."""
    if len(message) >= 2 and (message[1] == "_" or "A" <= message[1] <= "Z"):
        return bad_request(message)
    first = message[:1]
    return bad_request((first.lower() if "A" <= first <= "Z" else first) + message[1:])
