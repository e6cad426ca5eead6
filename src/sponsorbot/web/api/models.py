"""The owner API's request and response bodies (they make the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

T = TypeVar("T")
Role = Literal["owner", "admin", "editor", "analyst"]
Mode = Literal["webhook", "polling"]
FileKind = Literal["document", "video", "photo"]
MAX_AUTO_DELETE_MIN = 7 * 24 * 60


class Strict(BaseModel):
    """Unknown fields are an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class Page(BaseModel, Generic[T]):
    """One page of a list."""

    items: list[T]
    total: int
    limit: int
    offset: int


class ErrorOut(BaseModel):
    """Every error answer."""

    error: str


class BotIn(Strict):
    """Connect a bot by its token (checked live with getMe)."""

    token: str = Field(min_length=1, max_length=200)
    mode: Mode | None = None


class BotTokenIn(Strict):
    """A new token for the same bot."""

    token: str = Field(min_length=1, max_length=200)


class BotPatch(Strict):
    """Change a bot: its mode, status, or storage chat (null clears it)."""

    mode: Mode | None = None
    status: Literal["active", "paused"] | None = None
    storage_chat_id: int | None = None
    clear_storage_chat: bool = False


class BotOut(BaseModel):
    """A bot (its token is never shown, only its last characters)."""

    id: int
    username: str
    mode: str
    status: str
    token_tail: str
    storage_chat_id: int | None = None
    created_at: datetime
    updated_at: datetime


class ChannelIn(Strict):
    """A channel by @username, t.me link, post link or -100... id."""

    ref: str = Field(min_length=1, max_length=300)


class ChannelOut(BaseModel):
    """A channel with the last result of the bot's rights check."""

    chat_id: int
    title: str
    username: str | None
    chat_type: str
    invite_link: str | None
    status: Literal["ok", "missing_rights", "unreachable"]
    missing: list[str]
    last_error: str | None
    checked_at: datetime
    created_at: datetime


class GateEntry(Strict):
    """One gate channel; `request_counts`: a pending join request counts as joined."""

    chat_id: int
    request_counts: bool = False


class GateIn(Strict):
    """The gate's channels in order: either ids, or entries with options."""

    channel_ids: list[int] | None = Field(default=None, max_length=10)
    channels: list[GateEntry] | None = Field(default=None, max_length=10)

    @model_validator(mode="after")
    def _one_form(self) -> GateIn:
        if (self.channel_ids is None) == (self.channels is None):
            raise ValueError("give either channel_ids or channels")
        return self

    def entries(self) -> list[tuple[int, bool]]:
        """(chat_id, request_counts) in order."""
        if self.channels is not None:
            return [(c.chat_id, c.request_counts) for c in self.channels]
        return [(c, False) for c in self.channel_ids or []]


class GateChannelOut(BaseModel):
    """A channel in the gate."""

    chat_id: int
    position: int
    request_counts: bool
    title: str
    username: str | None
    status: str
    missing: list[str]


class GateOut(BaseModel):
    """The gate."""

    channels: list[GateChannelOut]


class ItemIn(Strict):
    """One file (by Telegram file_id) or text of a content item."""

    kind: Literal["document", "video", "photo", "text"]
    file_id: str | None = Field(default=None, min_length=1, max_length=300)
    text: str | None = Field(default=None, min_length=1, max_length=4096)
    caption: str | None = Field(default=None, max_length=1024)

    @model_validator(mode="after")
    def _payload(self) -> ItemIn:
        if self.kind == "text" and not self.text:
            raise ValueError("a text item needs text")
        if self.kind != "text" and not self.file_id:
            raise ValueError(f"a {self.kind} item needs file_id")
        return self

    def stored(self) -> dict[str, Any]:
        """The item as kept in the database."""
        return self.model_dump(exclude_none=True)


class ContentIn(Strict):
    """A content item from existing Telegram file_ids or text: one item, or a batch."""

    kind: Literal["document", "video", "photo", "text", "batch"]
    file_id: str | None = Field(default=None, min_length=1, max_length=300)
    text: str | None = Field(default=None, min_length=1, max_length=4096)
    items: list[ItemIn] | None = Field(default=None, min_length=1, max_length=10)
    caption: str | None = Field(default=None, max_length=1024)
    protect_content: bool = True
    auto_delete_minutes: float = Field(default=0, ge=0, le=MAX_AUTO_DELETE_MIN)

    def stored_items(self) -> list[dict[str, Any]]:
        """The items to store, from whichever form was given."""
        if self.kind == "batch":
            if not self.items:
                raise ValueError("a batch needs items")
            return [i.stored() for i in self.items]
        item = ItemIn(kind=self.kind, file_id=self.file_id, text=self.text)
        return [item.stored()]

    @model_validator(mode="after")
    def _shape(self) -> ContentIn:
        self.stored_items()
        return self


class ContentPatch(Strict):
    """Change a content item."""

    caption: str | None = Field(default=None, max_length=1024)
    protect_content: bool | None = None
    auto_delete_minutes: float | None = Field(default=None, ge=0, le=MAX_AUTO_DELETE_MIN)
    enabled: bool | None = None


class ContentOut(BaseModel):
    """A content item and its link."""

    id: int
    code: str
    link: str
    kind: str
    items: list[dict[str, Any]]
    caption: str | None
    protect_content: bool
    auto_delete_minutes: float
    enabled: bool
    created_by: str
    created_at: datetime
    updated_at: datetime


class TextsIn(Strict):
    """Per-language overrides of the visitor's texts: {"en": {"key": "text"}, "fa": {...}}."""

    overrides: dict[str, dict[str, str]]


class TextsOut(BaseModel):
    """The overrides and the defaults."""

    overrides: dict[str, dict[str, str]]
    defaults: dict[str, dict[str, str]]


class UploaderIn(Strict):
    """A Telegram user allowed to upload by sending files to the bot."""

    user_id: int = Field(gt=0)
    note: str | None = Field(default=None, max_length=200)


class UploaderOut(BaseModel):
    """An uploader."""

    user_id: int
    note: str | None
    added_at: datetime


class TokenIn(Strict):
    """A new API token."""

    name: str = Field(min_length=1, max_length=100)
    role: Role = "editor"


class TokenOut(BaseModel):
    """An API token (the token itself only in the answer that creates it)."""

    id: int
    name: str
    role: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    token: str | None = None


class WebhookOut(BaseModel):
    """Telegram's getWebhookInfo for the bot."""

    mode: str
    info: dict[str, Any]


class MeOut(BaseModel):
    """The caller."""

    token_id: int
    name: str
    role: str


GoalKind = Literal["kept", "joins"]
Position = Literal["first", "last"]
CampaignStatus = Literal["scheduled", "running", "paused", "reached", "ended"]


class CampaignIn(Strict):
    """A sponsor campaign: the channel (any reference form) goes into the gate of these bots,
    each with its own invite link, until the goal or the end date."""

    name: str = Field(min_length=1, max_length=200)
    channel: str = Field(min_length=1, max_length=300)
    bot_ids: list[int] = Field(min_length=1, max_length=100)
    goal_joins: int | None = Field(default=None, ge=1, le=100_000_000)
    goal_kind: GoalKind = "kept"
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    retention_hours: int = Field(default=24, ge=1, le=24 * 90)
    position: Position = "first"
    join_requests: bool | None = Field(
        default=None,
        description="links that create join requests (the sponsor approves); "
        "null follows the chat's own setting",
    )


class CampaignPatch(Strict):
    """Change a campaign that has not finished; fields left out stay as they are."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    goal_joins: int | None = Field(default=None, ge=1, le=100_000_000)
    clear_goal: bool = False
    goal_kind: GoalKind | None = None
    ends_at: datetime | None = None
    clear_ends_at: bool = False
    retention_hours: int | None = Field(default=None, ge=1, le=24 * 90)
    position: Position | None = None


class CampaignLinkOut(BaseModel):
    """One bot of a campaign: its invite link and what came through it."""

    bot_id: int
    username: str
    invite_link: str
    revoked_at: datetime | None
    joins: int = 0
    kept: int = 0
    left: int = 0


class CampaignOut(BaseModel):
    """A campaign with its figures. `joins`: credited once per person through the gate;
    `kept`: of those, stayed past the retention window; `left`: left inside it; `waiting`:
    still inside it; `outside_gate`: joined another way (the username, a shared link)."""

    id: int
    name: str
    chat_id: int
    chat_title: str
    chat_username: str | None
    join_requests: bool
    goal_joins: int | None
    goal_kind: GoalKind
    progress: int
    percent: int | None
    starts_at: datetime
    ends_at: datetime | None
    retention_hours: int
    position: Position
    status: CampaignStatus
    status_at: datetime
    joins: int
    kept: int
    left: int
    waiting: int
    outside_gate: int
    joins_today: int
    links: list[CampaignLinkOut]
    by_bot: list[CampaignLinkOut] = []
    report_url: str | None
    created_by: str
    created_at: datetime
