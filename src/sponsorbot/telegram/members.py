"""What Telegram's ChatMember objects say about a person's place in a chat.

Read by the gate (is the visitor in the channel?) and by campaigns (did this update make them
join or leave?): a fact about the Bot API, not about either feature."""

from __future__ import annotations

from typing import Any

MEMBER_STATUSES = frozenset({"creator", "administrator", "member"})


def is_member(member: dict[str, Any]) -> bool:
    """Whether a ChatMember object says the person is in the chat."""
    status = member.get("status")
    if status in MEMBER_STATUSES:
        return True
    return status == "restricted" and bool(member.get("is_member"))
