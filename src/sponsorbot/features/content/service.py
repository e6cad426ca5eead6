"""Content items: create (from a file_id, an upload, or files sent to the bot), list, change.

Every item gets a random code of base62 characters from `secrets`, unique per bot; the link
is ``https://t.me/<bot>?start=<code>``. Codes are never derived from ids.
"""

from __future__ import annotations

import re
import secrets
import string
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg

from sponsorbot.engine.calls import MEDIA_METHODS
from sponsorbot.features.botconfig import ConfigCache
from sponsorbot.features.errors import Conflict, Invalid, NotFound, Refused, TooLarge
from sponsorbot.features.service import OwnerService
from sponsorbot.telegram import Bot, TelegramError

BASE62 = string.ascii_letters + string.digits
CODE_LENGTH = 12
CODE_SHAPE = re.compile(r"^[A-Za-z0-9]{10,64}$")
FILE_KINDS = ("document", "video", "photo")
KINDS = (*FILE_KINDS, "text", "batch")
MAX_UPLOAD_BYTES = 50 * 1024 * 1024  # the Bot API's limit for files a bot uploads
MAX_ITEMS = 10
MAX_CAPTION = 1024  # Telegram's caption limit
MAX_TEXT = 4096  # Telegram's message limit
# Telegram lets a bot delete its messages only within 48 hours (ADR 0021): 47 leave the sender an
# hour to retry the delete.
MAX_AUTO_DELETE_S = 47 * 3600
# What a Telegram file_id looks like (ADR 0021): never a URL or a path, which the Bot API (and a
# local Bot API server, a file:// path) would fetch in its place. Checked where an owner types
# one (the API); the files the bot receives carry Telegram's own.
FILE_ID_PATTERN = r"^[A-Za-z0-9_-]{16,255}$"

CONTENT_COLUMNS = """id, code, kind, items, caption, protect, auto_delete_s, enabled, created_by,
    created_at, updated_at"""
INSERT = f"""
INSERT INTO contents (bot_id, code, kind, items, caption, protect, auto_delete_s, created_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING {CONTENT_COLUMNS}
"""

DELETE = "DELETE FROM contents WHERE bot_id = $1 AND id = $2"
# The storage group became a supergroup with a new id: follow it, unless the owner changed it.
MOVE_STORAGE = """
UPDATE bot_settings SET storage_chat_id = $3, updated_at = now()
WHERE bot_id = $1 AND storage_chat_id = $2
"""
SEARCH = """(code = $2 OR caption ILIKE $3 OR EXISTS (
    SELECT FROM jsonb_array_elements(items) AS i
    WHERE i ->> 'caption' ILIKE $3 OR i ->> 'text' ILIKE $3))"""


def like_escape(text: str) -> str:
    """`text` matched literally inside a LIKE pattern (its % and _ are not wildcards)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def kind_of(content_type: str) -> str:
    """The content kind an uploaded file's media type suggests: photo, video or document."""
    if content_type.startswith("image/"):
        return "photo"
    if content_type.startswith("video/"):
        return "video"
    return "document"


def new_code() -> str:
    """A fresh unguessable code (12 base62 characters: about 71 bits)."""
    return "".join(secrets.choice(BASE62) for _ in range(CODE_LENGTH))


def link(username: str, code: str) -> str:
    """The t.me start link of a content item."""
    return f"https://t.me/{username}?start={code}"


@dataclass(frozen=True, slots=True)
class NewContent:
    """What a new content item is made of."""

    kind: str
    items: list[dict[str, Any]]
    created_by: str
    caption: str | None = None
    protect: bool = True
    auto_delete_s: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise Invalid(f"kind must be one of {', '.join(KINDS)}")
        if not self.items:
            raise Invalid("a content item needs at least one file or text")
        if len(self.items) > MAX_ITEMS and self.kind == "batch":
            raise Invalid(f"a batch holds at most {MAX_ITEMS} items")
        for item in self.items:
            if item.get("kind") == "text" and not 0 < len(str(item.get("text") or "")) <= MAX_TEXT:
                raise Invalid(f"a text is 1 to {MAX_TEXT} characters", code="text_length")
        check_options({"caption": self.caption, "auto_delete_s": self.auto_delete_s})

    def args(self, bot_id: int, code: str) -> tuple[Any, ...]:
        """The INSERT arguments."""
        return (
            bot_id,
            code,
            self.kind,
            self.items,
            self.caption,
            self.protect,
            self.auto_delete_s,
            self.created_by,
        )


def check_options(options: dict[str, Any]) -> None:
    """Refuse a caption or an auto-delete time Telegram or we cannot honour."""
    caption = options.get("caption")
    if caption is not None and len(caption) > MAX_CAPTION:
        raise Invalid(f"a caption holds up to {MAX_CAPTION} characters", code="caption_too_long")
    auto_delete_s = options.get("auto_delete_s")
    if auto_delete_s is not None and not 0 <= int(auto_delete_s) <= MAX_AUTO_DELETE_S:
        raise Invalid(
            f"auto-delete is 0 (never) to {MAX_AUTO_DELETE_S // 60} minutes",
            code="auto_delete_range",
        )


def item_of_message(message: dict[str, Any]) -> dict[str, Any] | None:
    """The content item a Telegram message carries (a file, or text), if any."""
    for kind in FILE_KINDS:
        media = message.get(kind)
        if kind == "photo" and isinstance(media, list) and media:
            media = media[-1]  # the largest size
        if isinstance(media, dict) and isinstance(media.get("file_id"), str):
            item: dict[str, Any] = {"kind": kind, "file_id": media["file_id"]}
            if message.get("caption"):
                item["caption"] = str(message["caption"])
            return item
    return None


def storage_mover(
    pool: asyncpg.Pool, config: ConfigCache, bot_id: int
) -> Callable[[int, int], Awaitable[None]]:
    """`store_file`'s `moved`: keeps the storage chat's new id (unless the owner changed it
    meanwhile) when Telegram says the group became a supergroup."""

    async def moved(old: int, new: int) -> None:
        await pool.execute(MOVE_STORAGE, bot_id, old, new)
        config.invalidate(bot_id)

    return moved


async def upload_to_storage(
    service: OwnerService, bot_id: int, kind: str, filename: str, data: bytes, content_type: str
) -> dict[str, Any]:
    """`store_file` in the bot's storage chat, as the bot, following a move to a supergroup."""
    token = await service.bots.token(bot_id)
    storage = (await service.config.get(bot_id)).storage_chat_id
    return await store_file(
        service.api.bot(token),
        storage,
        kind,
        filename,
        data,
        content_type,
        storage_mover(service.pool, service.config, bot_id),
    )


async def store_file(
    telegram: Bot,
    storage: int | None,
    kind: str,
    filename: str,
    data: bytes,
    content_type: str,
    moved: Callable[[int, int], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    """Post a file to the bot's storage chat; returns the item (kind, file_id) Telegram made.

    A storage group upgraded to a supergroup answers with its new id: the upload is tried
    there once, and `moved(old, new)` keeps the new id.
    """
    if len(data) > MAX_UPLOAD_BYTES:
        raise TooLarge(
            f"the file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB",
            code="too_large",
            limit=MAX_UPLOAD_BYTES,
        )
    if not data:
        raise Invalid("the file is empty", code="empty_file")
    if kind not in FILE_KINDS:
        raise Invalid(f"an uploaded file's kind must be one of {', '.join(FILE_KINDS)}")
    if storage is None:
        raise Conflict(
            "set the bot's storage_chat_id first: uploads are stored there",
            code="no_storage_chat",
        )
    try:
        try:
            message = await _post_file(telegram, storage, kind, filename, data, content_type)
        except TelegramError as exc:
            if exc.migrate_to_chat_id is None:
                raise
            new = exc.migrate_to_chat_id
            message = await _post_file(telegram, new, kind, filename, data, content_type)
            if moved is not None:
                await moved(storage, new)
    except TelegramError as exc:
        if exc.is_transient:
            raise
        raise Refused(
            f"Telegram refused the upload to the storage chat: {exc.description}",
            code="storage_refused",
            telegram=exc.description,
        ) from None
    item = item_of_message(message) if isinstance(message, dict) else None
    if item is None:
        raise Refused("Telegram's answer to the upload holds no file", code="storage_refused")
    return item


async def _post_file(
    telegram: Bot, chat_id: int, kind: str, filename: str, data: bytes, content_type: str
) -> Any:
    return await telegram.call(
        MEDIA_METHODS[kind], {"chat_id": chat_id}, files={kind: (filename, data, content_type)}
    )


class ContentService(OwnerService):
    """The owner's operations on content (the API and the panel use it)."""

    async def _username(self, bot_id: int) -> str:
        return (await self.bots.get(bot_id)).username

    def _out(self, username: str, row: asyncpg.Record) -> dict[str, Any]:
        out = dict(row)
        out["link"] = link(username, row["code"])
        return out

    async def create(self, bot_id: int, new: NewContent) -> dict[str, Any]:
        """Store a content item under a fresh code."""
        username = await self._username(bot_id)
        for _ in range(5):
            try:
                row = await self.pool.fetchrow(INSERT, *new.args(bot_id, new_code()))
            except asyncpg.UniqueViolationError:
                continue  # a code collision: astronomically rare, simply draw again
            assert row is not None
            return self._out(username, row)
        raise Conflict("could not draw an unused code")

    async def upload(
        self,
        bot_id: int,
        kind: str,
        filename: str,
        data: bytes,
        content_type: str,
        new: NewContent,
    ) -> dict[str, Any]:
        """Post the file to the bot's storage chat for a file_id, then store the item."""
        item = await upload_to_storage(self, bot_id, kind, filename, data, content_type)
        item.pop("caption", None)
        stored = NewContent(
            item["kind"], [item], new.created_by, new.caption, new.protect, new.auto_delete_s
        )
        return await self.create(bot_id, stored)

    async def check_storage(self, bot_id: int, chat_id: int) -> None:
        """Refuse a storage chat the bot cannot post files to, asking Telegram now: a wrong id
        is refused when it is set, not at the next upload."""
        telegram = self.api.bot(await self.bots.token(bot_id))
        try:
            chat = await telegram.get_chat(chat_id)
            member = await telegram.get_chat_member(chat_id, bot_id)
        except TelegramError as exc:
            if exc.is_transient:
                raise
            raise Refused(
                f"the bot cannot reach chat {chat_id} ({exc.description}); add the bot to it "
                "as an administrator first",
                code="storage_refused",
                telegram=exc.description,
            ) from None
        status = member.get("status")
        if chat.get("type") == "channel":
            can_post = status == "creator" or (
                status == "administrator" and bool(member.get("can_post_messages"))
            )
        else:
            can_post = status in ("creator", "administrator", "member")
        if not can_post:
            raise Refused(
                "the bot may not post in this chat: make it an administrator that can post "
                "messages",
                code="storage_refused",
            )

    async def get(self, bot_id: int, content_id: int) -> dict[str, Any]:
        """One content item of the bot."""
        username = await self._username(bot_id)
        row = await self.pool.fetchrow(
            f"SELECT {CONTENT_COLUMNS} FROM contents WHERE bot_id = $1 AND id = $2",
            bot_id,
            content_id,
        )
        if row is None:
            raise NotFound(f"the bot has no content {content_id}")
        return self._out(username, row)

    async def list(
        self, bot_id: int, limit: int, offset: int, search: str = ""
    ) -> tuple[list[dict[str, Any]], int]:
        """A page of the bot's content, newest first, and how many there are.

        `search` matches the code exactly or any caption (the item's or a file's) and a text
        item's text, case-insensitively.
        """
        username = await self._username(bot_id)
        where = "bot_id = $1"
        args: list[Any] = [bot_id]
        if search.strip():
            where += f" AND {SEARCH}"
            args += [search.strip(), f"%{like_escape(search.strip())}%"]
        rows = await self.pool.fetch(
            f"SELECT {CONTENT_COLUMNS} FROM contents WHERE {where} "
            f"ORDER BY id DESC LIMIT ${len(args) + 1} OFFSET ${len(args) + 2}",
            *args,
            limit,
            offset,
        )
        total = await self.pool.fetchval(f"SELECT count(*) FROM contents WHERE {where}", *args)
        return [self._out(username, r) for r in rows], int(total)

    async def update(self, bot_id: int, content_id: int, changes: dict[str, Any]) -> dict[str, Any]:
        """Change caption, protect, auto_delete_s or enabled."""
        allowed = {"caption", "protect", "auto_delete_s", "enabled"}
        fields = {k: v for k, v in changes.items() if k in allowed}
        check_options(fields)
        if fields:
            sets = ", ".join(f"{k} = ${i}" for i, k in enumerate(fields, start=3))
            done = await self.pool.execute(
                f"UPDATE contents SET {sets}, updated_at = now() WHERE bot_id = $1 AND id = $2",
                bot_id,
                content_id,
                *fields.values(),
            )
            if done == "UPDATE 0":
                await self.bots.get(bot_id)
                raise NotFound(f"the bot has no content {content_id}")
        return await self.get(bot_id, content_id)

    async def delete(self, bot_id: int, content_id: int) -> None:
        """Delete a content item; its link answers "unknown" from now on."""
        done = await self.pool.execute(
            "DELETE FROM contents WHERE bot_id = $1 AND id = $2", bot_id, content_id
        )
        if done == "DELETE 0":
            await self.bots.get(bot_id)
            raise NotFound(f"the bot has no content {content_id}")
