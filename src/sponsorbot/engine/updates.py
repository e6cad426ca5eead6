"""What an incoming update is about: its kind and the person whose queue it joins."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class MalformedUpdate(ValueError):
    """The body is not a Telegram update (no integer update_id)."""


@dataclass(frozen=True, slots=True)
class Classified:
    """The columns of an inbox row derived from an update."""

    update_id: int
    kind: str
    chat_key: int


def _user_id(obj: Any) -> int | None:
    if isinstance(obj, dict):
        uid = obj.get("id")
        if isinstance(uid, int) and not isinstance(uid, bool):
            return uid
    return None


def classify(update: Any) -> Classified:
    """Kind and chat key of an update; raises MalformedUpdate for anything else.

    The chat key is the person the update is about: the sender of a message or callback,
    the member in a chat_member update, the applicant of a join request. All of one person's
    updates queue behind each other. Updates about a chat itself (my_chat_member, channel
    posts) queue by the chat's id.
    """
    if not isinstance(update, dict):
        raise MalformedUpdate("an update is a JSON object")
    update_id = update.get("update_id")
    if not isinstance(update_id, int) or isinstance(update_id, bool):
        raise MalformedUpdate("the update has no integer update_id")
    kind = next((k for k in update if k != "update_id"), "unknown")
    body = update.get(kind)
    key: int | None = None
    if isinstance(body, dict):
        if kind == "chat_member":
            new = body.get("new_chat_member")
            key = _user_id(new.get("user")) if isinstance(new, dict) else None
        elif kind == "my_chat_member":
            key = _user_id(body.get("chat"))
        else:
            key = _user_id(body.get("from"))
        if key is None:
            key = _user_id(body.get("chat"))
    return Classified(update_id, kind, key if key is not None else 0)
