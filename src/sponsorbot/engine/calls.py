"""Builders of the Bot API calls handlers queue: typed arguments in, a `QueuedCall` out.

The outbox keeps plain JSON (method and parameters, as Telegram takes them); these keep the
names and shapes in one place. Parameters left as None are not sent.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sponsorbot.engine.unit import PRIORITY_REPLY, QueuedCall

Markup = dict[str, Any]
# Media kinds a content item may have, and the method that sends each.
MEDIA_METHODS = {
    "document": "sendDocument",
    "video": "sendVideo",
    "photo": "sendPhoto",
}


def send_message(
    chat_id: int,
    text: str,
    *,
    markup: Markup | None = None,
    parse_mode: str | None = "HTML",
    protect: bool | None = None,
    ref: str | None = None,
    priority: int = PRIORITY_REPLY,
) -> QueuedCall:
    """sendMessage; `ref` remembers the sent message's id under a key (to edit or delete it)."""
    params = {
        "text": text,
        "parse_mode": parse_mode,
        "reply_markup": markup,
        "protect_content": protect,
    }
    return QueuedCall.build(chat_id, "sendMessage", params, ref=ref, priority=priority)


def send_media(
    chat_id: int,
    kind: str,
    file_id: str,
    *,
    caption: str | None = None,
    protect: bool | None = None,
    ref: str | None = None,
) -> QueuedCall:
    """sendDocument, sendVideo or sendPhoto by file_id (`kind`: a key of MEDIA_METHODS)."""
    params = {kind: file_id, "caption": caption or None, "protect_content": protect}
    return QueuedCall.build(chat_id, MEDIA_METHODS[kind], params, ref=ref)


def edit_message_text(
    chat_id: int,
    message_id: int,
    text: str,
    *,
    markup: Markup | None = None,
    parse_mode: str | None = "HTML",
) -> QueuedCall:
    """editMessageText of a message whose id is known now."""
    params = {
        "message_id": message_id,
        "text": text,
        "parse_mode": parse_mode,
        "reply_markup": markup,
    }
    return QueuedCall.build(chat_id, "editMessageText", params)


def delete_message(
    chat_id: int,
    message_id: int | None = None,
    *,
    uses_ref: str | None = None,
    not_before: datetime | None = None,
    priority: int = PRIORITY_REPLY,
) -> QueuedCall:
    """deleteMessage by id, or by the ref of a message a queued call sent (filled when sent)."""
    if (message_id is None) == (uses_ref is None):
        raise ValueError("delete by message_id or by uses_ref, one of them")
    return QueuedCall.build(
        chat_id,
        "deleteMessage",
        {"message_id": message_id},
        uses_ref=uses_ref,
        not_before=not_before,
        priority=priority,
    )


def answer_callback(
    chat_id: int, query_id: str, text: str | None = None, *, alert: bool = False
) -> QueuedCall:
    """answerCallbackQuery: stop the button's spinner, optionally with a notice or an alert.

    Queued on the presser's chat, so it goes out in order with that person's other replies.
    """
    params = {"callback_query_id": query_id, "text": text, "show_alert": alert or None}
    return QueuedCall.build(chat_id, "answerCallbackQuery", params)
