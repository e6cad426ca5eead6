"""The owner API's broadcast bodies (they make the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sponsorbot.features.broadcasts.post import Button, Post
from sponsorbot.features.broadcasts.rules import Status
from sponsorbot.features.broadcasts.service import Audience, Draft
from sponsorbot.web.api.models import FileId, Id, Strict, When

MediaKind = Literal["photo", "video", "document"]


class ButtonIn(Strict):
    """A button with a link (http, https or tg://)."""

    text: str = Field(min_length=1, max_length=64)
    url: str = Field(min_length=1, max_length=2000)


class PostIn(Strict):
    """The message: Telegram HTML text (the caption when there is media), optional media by
    `file_id` (upload one first with POST .../broadcasts/media), rows of link buttons."""

    text: str = Field(default="", max_length=8000)
    media_kind: MediaKind | None = None
    file_id: FileId | None = None
    buttons: list[list[ButtonIn]] = Field(default_factory=list, max_length=10)
    protect: bool = Field(default=False, description="protect_content: no forwarding or saving")
    silent: bool = Field(default=False, description="disable_notification")
    paid: bool = Field(
        default=False,
        description="allow_paid_broadcast: up to 1000 messages a second, paid in Telegram Stars "
        "(0.1 a message above the free rate) from the bot's balance; an owner or admin token "
        "only (403 otherwise)",
    )

    def post(self) -> Post:
        """The feature's post."""
        rows = tuple(tuple(Button(b.text, b.url) for b in row) for row in self.buttons)
        return Post(
            self.text, self.media_kind, self.file_id, rows, self.protect, self.silent, self.paid
        )


class AudienceIn(Strict):
    """Everyone who started the bot and has not blocked it, narrowed by the filters set."""

    active_days: int | None = Field(default=None, ge=1, le=3650)
    language: Literal["en", "fa"] | None = None
    campaign_id: Id | None = Field(default=None, description="joined through this campaign")
    passed: bool = Field(default=False, description="passed the gate at least once")


class BroadcastPatch(Strict):
    """Replace a draft's or a scheduled broadcast's title, post and audience."""

    title: str = Field(min_length=1, max_length=200)
    post: PostIn
    audience: AudienceIn = Field(default_factory=AudienceIn)

    def draft(self) -> Draft:
        """The feature's draft."""
        return Draft(self.title, self.post.post(), self.audience.to(Audience))


# What a change replaces, and how to send it (the docstring is the schema's description).
class BroadcastIn(BroadcastPatch):
    """A broadcast: saved as a draft, sent now, or scheduled."""

    send: Literal["draft", "now", "schedule"] = "draft"
    scheduled_at: When | None = None


class SendIn(Strict):
    """Send now (no time) or at a time."""

    at: When | None = None


class PreviewIn(Strict):
    """A post, sent now to one Telegram user (who must have started the bot)."""

    post: PostIn
    telegram_id: Id


class ProgressOut(BaseModel):
    """Done of total, the rate since the start, and the time left at that rate."""

    model_config = ConfigDict(from_attributes=True)

    done: int
    total: int
    percent: float
    rate_per_s: float | None
    seconds_left: int | None


class FailureOut(BaseModel):
    """One reason recipients did not get it: `blocked` (the bot), `failed` (Telegram's
    description) or `unknown` (a worker stopped while sending; not sent again)."""

    model_config = ConfigDict(from_attributes=True)

    status: str
    error: str
    n: int


class BroadcastOut(BaseModel):
    """A broadcast with its progress and report."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    bot_id: int
    title: str
    status: Status
    pause_reason: str | None
    post: dict[str, Any]
    audience: dict[str, Any]
    paid: bool
    estimated_stars: float | None = Field(
        description="a paid broadcast's cost at most, in Telegram Stars: 0.1 a person of its "
        "audience (counted now until it starts); null when not paid"
    )
    scheduled_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    estimated: int
    recipients: int
    queued: int
    sent: int
    blocked: int
    failed: int
    unknown: int
    progress: ProgressOut
    failures: list[FailureOut] = []
    created_by: str
    created_at: datetime


class CountOut(BaseModel):
    """How many people an audience holds now."""

    count: int


class MediaOut(BaseModel):
    """An uploaded file, stored in the bot's storage chat."""

    kind: MediaKind
    file_id: str
