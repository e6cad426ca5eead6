"""The owner API's request and response bodies (they make the OpenAPI document).

Every input model is `Strict`: unknown fields, a NUL character in any text and lax coercion
(`true` for a number, `0` for a boolean) are a 422 naming the field, never a 500; every
integer has the bounds of the bigint it is stored in, and every rule the services check that
a schema can state is in the schema (patterns, enums, oneOf).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import fields
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar

from annotated_types import GroupedMetadata
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from sponsorbot.features.campaigns.rules import GoalKind, Position, Status
from sponsorbot.features.content.service import FILE_ID_PATTERN, MAX_AUTO_DELETE_S
from sponsorbot.features.texts import KEYS, LANGUAGES

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T")
D = TypeVar("D", bound="DataclassInstance")
Role = Literal["owner", "admin", "editor", "analyst"]
Mode = Literal["webhook", "polling"]
FileKind = Literal["document", "video", "photo"]
# Telegram lets a bot delete a message only within 48 hours; 47 leaves room for retries.
MAX_AUTO_DELETE_MIN = MAX_AUTO_DELETE_S // 60
BIGINT = 2**63 - 1
BOT_TOKEN_PATTERN = r"^[1-9][0-9]{2,17}:[A-Za-z0-9_-]{35}$"
_USERNAME = r"[A-Za-z][A-Za-z0-9_]{3,31}"
CHANNEL_REF_PATTERN = (
    rf"^(?:@?{_USERNAME}|-[1-9][0-9]{{0,17}}|(?:https?://)?(?:www\.)?"
    rf"(?:t\.me|telegram\.me|telegram\.dog)/(?:c/[0-9]{{1,14}}|{_USERNAME})"
    r"(?:/[0-9]{1,18})*/?(?:[?#][^\s]*)?)$"
)


# The codes of the refusals these models raise themselves (see `shaped`).
CODES: set[str] = {"nul_character", "auto_delete_range"}


def nul_at(value: Any, path: str = "") -> str | None:
    """Where in a JSON value a text holds a NUL character (PostgreSQL's text cannot), if
    anywhere: "" for the value itself, else a dotted path."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and "\x00" in key:
                return here
            found = nul_at(item, here)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = nul_at(item, f"{path}.{index}" if path else str(index))
            if found is not None:
                return found
    return None


class NoNul(BaseModel):
    """A NUL character anywhere in the input is a 422 naming where it is."""

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        where = nul_at(data)
        if where is not None:
            place = f"{where!r}" if where else "the value"
            raise PydanticCustomError(
                "nul_character",
                "{place} holds a NUL character (\\u0000), which no text may hold",
                {"place": place},
            )
        return data


class Strict(NoNul):
    """Unknown fields are an error, not silently ignored; no lax coercion (`true` is not 1,
    `0` is not false)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    def to(self, kind: type[D]) -> D:
        """The feature's dataclass `kind` holding this body's values by name: every field of
        `kind` is read from the body's field of the same name (one missing is an error, never
        a silent default), so the two cannot drift apart by position."""
        return kind(**{f.name: getattr(self, f.name) for f in fields(kind)})


def shaped(pattern: str, code: str, message: str) -> Callable[[str], str]:
    """A validator that refuses text not matching `pattern` with a clear `message`; `code`
    is the error's stable code (the API answers it as "code", as the services' refusals)."""
    compiled = re.compile(pattern)
    CODES.add(code)

    def check(text: str) -> str:
        if not compiled.match(text):
            raise PydanticCustomError(code, message)
        return text

    return check


class Shaped(GroupedMetadata):
    """A text's shape, stated once for both sides: the validator that refuses other text with
    `message` under `code` (see `shaped`), and the pattern the OpenAPI document shows beside
    the field's `description`."""

    __slots__ = ("_parts",)

    def __init__(self, pattern: str, code: str, message: str, description: str) -> None:
        self._parts = (
            AfterValidator(shaped(pattern, code, message)),
            Field(json_schema_extra={"pattern": pattern}, description=description),
        )

    def __iter__(self) -> Iterator[object]:
        return iter(self._parts)


# Times come as ISO 8601 strings, which strict mode would refuse.
When = Annotated[datetime, Field(strict=False)]
Id = Annotated[int, Field(ge=1, le=BIGINT)]
ChatRef = Annotated[int, Field(ge=-BIGINT, le=BIGINT, description="a Telegram chat id")]
FileId = Annotated[
    str,
    Shaped(
        FILE_ID_PATTERN,
        "file_id_shape",
        "a file_id is 16 to 255 letters, digits, '_' or '-' (as Telegram makes them)",
        "a Telegram file_id",
    ),
]
BotToken = Annotated[
    str,
    Shaped(
        BOT_TOKEN_PATTERN,
        "token_malformed",
        "a bot token looks like 123456789:AAH... (digits, a colon, 35 characters)",
        "from @BotFather",
    ),
]
ChannelRef = Annotated[
    str,
    Shaped(
        CHANNEL_REF_PATTERN,
        "channel_ref",
        "not a channel reference: use @username, https://t.me/name, a post link "
        "or a -100... id (an invite link names no channel)",
        "@username, https://t.me/name, a post link, or a -100... id",
    ),
]


def _within_48_hours(minutes: float) -> float:
    if minutes > MAX_AUTO_DELETE_MIN:
        raise PydanticCustomError(
            "auto_delete_range",
            "auto-delete is 0 (never) to {most} minutes (47 hours): Telegram lets a bot "
            "delete its messages only within 48 hours",
            {"most": MAX_AUTO_DELETE_MIN},
        )
    return minutes


AutoDelete = Annotated[
    float,
    Field(
        ge=0,
        json_schema_extra={"maximum": MAX_AUTO_DELETE_MIN},
        description=f"0 (never) to {MAX_AUTO_DELETE_MIN} minutes (47 hours): Telegram lets "
        "a bot delete its messages only within 48 hours",
    ),
    AfterValidator(_within_48_hours),
]


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

    token: BotToken
    mode: Mode | None = None


class BotTokenIn(Strict):
    """A new token for the same bot."""

    token: BotToken


class BotPatch(Strict):
    """Change a bot: its mode, status, or storage chat (checked live: the bot must be able to
    post there); `clear_storage_chat` removes it."""

    mode: Mode | None = None
    status: Literal["active", "paused"] | None = None
    storage_chat_id: ChatRef | None = None
    clear_storage_chat: bool = False


class BotOut(BaseModel):
    """A bot (its token is never shown, only its last characters)."""

    id: int
    username: str
    mode: str
    status: str
    token_tail: str
    storage_chat_id: int | None = None
    problem: Literal["conflict", "token_unreadable"] | None = Field(
        default=None,
        description="needs the owner: another program polls the token, or it cannot be decrypted",
    )
    problem_at: datetime | None = None
    created_at: datetime
    updated_at: datetime


class ChannelIn(Strict):
    """A channel by @username, t.me link, post link or -100... id."""

    ref: Annotated[ChannelRef, Field(min_length=1, max_length=300)]


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

    chat_id: ChatRef
    request_counts: bool = False


class GateIds(Strict):
    """The gate's channels in order, by id (an empty list empties the gate)."""

    channel_ids: list[ChatRef] = Field(max_length=10)

    def entries(self) -> list[tuple[int, bool]]:
        """(chat_id, request_counts) in order."""
        return [(c, False) for c in self.channel_ids]


class GateEntries(Strict):
    """The gate's channels in order, each with its options."""

    channels: list[GateEntry] = Field(max_length=10)

    def entries(self) -> list[tuple[int, bool]]:
        """(chat_id, request_counts) in order."""
        return [(c.chat_id, c.request_counts) for c in self.channels]


# Either form, never both: each forbids the other's field, so exactly one matches.
GateIn = GateIds | GateEntries


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


Text = Annotated[str, Field(min_length=1, max_length=4096)]
Caption = Annotated[str, Field(max_length=1024)]


class FileItem(Strict):
    """One file of a batch, by Telegram file_id."""

    kind: FileKind
    file_id: FileId
    caption: Caption | None = None

    def stored(self) -> dict[str, Any]:
        """The item as kept in the database."""
        return self.model_dump(exclude_none=True)


class TextItem(Strict):
    """One text of a batch."""

    kind: Literal["text"]
    text: Text

    def stored(self) -> dict[str, Any]:
        """The item as kept in the database."""
        return self.model_dump(exclude_none=True)


ItemIn = Annotated[FileItem | TextItem, Field(discriminator="kind")]


class Options(Strict):
    """What every content item may set beside its payload."""

    caption: Caption | None = None
    protect_content: bool = True
    auto_delete_minutes: AutoDelete = 0


class FileContentIn(Options):
    """A content item of one file, by Telegram file_id."""

    kind: FileKind
    file_id: FileId

    def stored_items(self) -> list[dict[str, Any]]:
        """The items to store."""
        return [{"kind": self.kind, "file_id": self.file_id}]


class TextContentIn(Options):
    """A content item of one text."""

    kind: Literal["text"]
    text: Text

    def stored_items(self) -> list[dict[str, Any]]:
        """The items to store."""
        return [{"kind": "text", "text": self.text}]


class BatchContentIn(Options):
    """A content item of up to 10 files and texts, sent together."""

    kind: Literal["batch"]
    items: list[ItemIn] = Field(min_length=1, max_length=10)

    def stored_items(self) -> list[dict[str, Any]]:
        """The items to store."""
        return [i.stored() for i in self.items]


# The create-content JSON body: which fields it needs follows from `kind`.
ContentIn = Annotated[FileContentIn | TextContentIn | BatchContentIn, Field(discriminator="kind")]


class ContentPatch(Strict):
    """Change a content item."""

    caption: Caption | None = None
    protect_content: bool | None = None
    auto_delete_minutes: AutoDelete | None = None
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


def _known(names: frozenset[str] | tuple[str, ...], what: str) -> Callable[[str], str]:
    def check(name: str) -> str:
        if name not in names:
            raise ValueError(f"{what} is one of {', '.join(sorted(names))}, not {name!r}")
        return name

    return check


Language = Annotated[
    str,
    AfterValidator(_known(LANGUAGES, "a language")),
    Field(json_schema_extra={"enum": list(LANGUAGES)}),
]
TextKey = Annotated[
    str,
    AfterValidator(_known(KEYS, "a text's name")),
    Field(json_schema_extra={"enum": sorted(KEYS)}),
]


class TextsIn(Strict):
    """Per-language overrides of the visitor's texts: {"en": {"key": "text"}, "fa": {...}};
    an empty text means "use the default"."""

    overrides: dict[Language, dict[TextKey, Annotated[str, Field(max_length=4096)]]]


class TextsOut(BaseModel):
    """The overrides and the defaults."""

    overrides: dict[str, dict[str, str]]
    defaults: dict[str, dict[str, str]]


class UploaderIn(Strict):
    """A Telegram user allowed to upload by sending files to the bot."""

    user_id: Id
    note: str | None = Field(default=None, max_length=200)


class UploaderOut(BaseModel):
    """An uploader."""

    user_id: int
    note: str | None
    added_at: datetime


class TokenIn(Strict):
    """A new API token."""

    name: str = Field(min_length=1, max_length=100, pattern=r"\S")
    role: Role = "editor"
    expires_in_days: int | None = Field(
        default=None, ge=1, le=3650, description="the token stops working after this; null: never"
    )


class TokenOut(BaseModel):
    """An API token (the token itself only in the answer that creates it)."""

    id: int
    name: str
    role: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    created_by_user_id: int | None = Field(
        default=None, description="the panel member who made it; null: the CLI"
    )
    expires_at: datetime | None = None
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


class CampaignIn(Strict):
    """A sponsor campaign: the channel (any reference form) goes into the gate of these bots,
    each with its own invite link, until the goal or the end date."""

    name: str = Field(min_length=1, max_length=200)
    channel: Annotated[ChannelRef, Field(min_length=1, max_length=300)]
    bot_ids: list[Id] = Field(min_length=1, max_length=100)
    goal_joins: int | None = Field(default=None, ge=1, le=100_000_000)
    goal_kind: GoalKind = "kept"
    starts_at: When | None = None
    ends_at: When | None = None
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
    ends_at: When | None = None
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
    status: Status
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


REDRIVE_SINCE = (
    "only what arrived at or after this time; without it, what gave up in the last 24 hours"
)


class RedriveIn(Strict):
    """What to queue again: every bot's or one bot's; what arrived since a time, or without
    `since` what gave up in the last 24 hours. A cancelled broadcast's messages stay failed."""

    bot_id: Id | None = None
    since: When | None = Field(default=None, description=REDRIVE_SINCE)


class RedriveOut(BaseModel):
    """How many dead updates and given-up messages went back to their queues (or would)."""

    updates: int
    messages: int
