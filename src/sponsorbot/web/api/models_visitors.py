"""The owner API's visitor bodies (they make the OpenAPI document); read-only, so no input."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from sponsorbot.features.stats.events import EventKind
from sponsorbot.features.stats.visitors import GateState, JoinedVia


class VisitorOut(BaseModel):
    """A person as one bot knows them (the same Telegram account on two bots is two visitors)."""

    bot_id: int
    bot_username: str
    user_id: int = Field(description="the Telegram id")
    username: str | None
    first_name: str | None
    last_name: str | None
    language: str | None = Field(description="Telegram's language code of the person")
    first_seen: datetime
    last_seen: datetime
    blocked_at: datetime | None = Field(description="when the person blocked the bot")
    gate: GateState = Field(
        description="at_gate: a gate is open for gate_content_id; passed: through a gate once "
        "(events are kept 13 months); never: never gated"
    )
    gate_content_id: int | None
    received: int = Field(description="content deliveries")
    campaigns: int = Field(description="campaigns of this bot the person joined")


class VisitorPage(BaseModel):
    """A page of visitors (newest first; search matches most recently seen first); ask for
    page + 1 while has_more."""

    items: list[VisitorOut]
    page: int
    per_page: int
    has_more: bool


class GateOut(BaseModel):
    """Where the person stands at the gate."""

    state: GateState
    content_id: int | None = Field(description="the content whose gate is open")
    content_title: str | None
    content_code: str | None
    checks: int = Field(description="how often the open gate was shown or checked")
    passes: int = Field(description="gates passed (in the 13 months events are kept)")
    last_passed_at: datetime | None


class CampaignJoinOut(BaseModel):
    """A campaign of this bot the person joined: through this bot's gate, through another
    bot's link of the campaign, or outside any gate."""

    campaign_id: int
    name: str
    chat_title: str
    joined_at: datetime
    via: JoinedVia
    left_at: datetime | None


class ReceivedItemOut(BaseModel):
    """A content item the person received, how often and when last."""

    content_id: int
    title: str | None = Field(description="its caption or text; null for a file without one")
    code: str | None = Field(description="the code of its link; null once the item is deleted")
    times: int
    last_at: datetime


class ReceivedOut(BaseModel):
    """Content received: every delivery counted, the most recent items listed (up to 100)."""

    total: int
    distinct_items: int
    items: list[ReceivedItemOut]


class EventOut(BaseModel):
    """One thing the person did or that happened to them, with what names it."""

    id: int
    at: datetime
    kind: EventKind
    content_id: int | None
    content_title: str | None
    content_code: str | None
    chat_id: int | None
    chat_title: str | None
    campaign_id: int | None = Field(description="a join through a campaign's link")
    campaign_name: str | None
    missing: int | None = Field(description="gate_shown: how many channels it asked for")
    checks: int | None = Field(description="gate_passed: after how many checks")
    code: str | None = Field(description="unknown_code: the code that was opened")
    reason: str | None = Field(description="channel_unknown: why the bot could not check")
    data: Any = Field(description="the event's raw details")


class TimelineOut(BaseModel):
    """A page of a visitor's events, newest first; pass `next_before` as `before` for more."""

    items: list[EventOut]
    next_before: int | None


class VisitorDetailOut(BaseModel):
    """One visitor: the profile, campaigns, content received and the newest events."""

    bot_id: int
    bot_username: str
    user_id: int
    username: str | None
    first_name: str | None
    last_name: str | None
    language: str | None
    first_seen: datetime
    last_seen: datetime
    blocked_at: datetime | None
    gate: GateOut
    campaigns: list[CampaignJoinOut]
    received: ReceivedOut
    timeline: TimelineOut
