"""Replies: ``reply_parameters`` (or the older ``reply_to_message_id``) as the Bot API server
reads them (telegram-bot-api's ``get_reply_parameters``), with its error texts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sponsorbot.simulator.errors import from_tdlib
from sponsorbot.simulator.params import Params, json_object
from sponsorbot.simulator.readers import (
    FieldError,
    chat_ref,
    optional,
    optional_integer,
    optional_text,
    required_integer,
)

REPLIED_NOT_FOUND = "message to be replied not found"


@dataclass(frozen=True, slots=True)
class ReplyTo:
    """The message a new one answers: in the same chat unless ``chat`` names another."""

    message_id: int
    chat: int | str | None
    allow_without_reply: bool


def parse_reply(p: Params) -> ReplyTo | None:
    """What the call replies to, or None; a malformed ``reply_parameters`` is refused."""
    if "reply_parameters" not in p.data:
        message_id = max(0, p.integer("reply_to_message_id"))
        if not message_id:
            return None
        return ReplyTo(message_id, None, p.flag("allow_sending_without_reply"))
    value = p.data["reply_parameters"]
    if value is None or value == "":
        return None
    value = json_object(value, "reply parameters")
    if not value:
        return None
    try:
        return _read(value)
    except FieldError as error:
        raise from_tdlib(str(error)) from None


def _read(value: dict[str, Any]) -> ReplyTo | None:
    chat = optional_text(value, "chat_id")
    message_id = required_integer(value, "message_id")
    allow = optional(value, "allow_sending_without_reply", bool) or False
    for name in ("quote", "quote_parse_mode", "poll_option_id"):
        optional_text(value, name)
    for name in ("quote_position", "checklist_task_id"):
        optional_integer(value, name)
    if message_id <= 0:
        return None
    return ReplyTo(message_id, chat_ref(chat) if chat else None, allow)
