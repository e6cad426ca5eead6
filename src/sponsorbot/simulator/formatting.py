"""The text of a message as Telegram stores it: one entry point for every text and caption.

The way is the Bot API server's (telegram-bot-api's Client::get_input_message_text and
get_formatted_text) and then tdlib's (get_formatted_text, fix_formatted_text): an empty text is
refused, a parse mode (HTML, MarkdownV2 or Markdown) is applied and the ``entities`` JSON
ignored, or else the ``entities`` JSON is read; links are checked, ``tg://user?id=N`` becomes a
mention of that user; the text is cleaned and trimmed, refused if nothing visible is left, and
gets the automatic entities (commands, links, mentions, hashtags, cashtags, e-mail addresses).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import orjson

from sponsorbot.simulator.autoentities import finder
from sponsorbot.simulator.entities import MAX_USER_ID, Entity, TextError, fix_formatted_text
from sponsorbot.simulator.errors import TEXT_EMPTY, bad_request, from_tdlib
from sponsorbot.simulator.html import parse_html
from sponsorbot.simulator.markdown import parse_markdown, parse_markdown_v2
from sponsorbot.simulator.readers import (
    FieldError,
    optional_text,
    required,
    required_integer,
    required_text,
)
from sponsorbot.simulator.textlinks import LinkError, check_link, date_format_of, link_user_id
from sponsorbot.simulator.types import shape

if TYPE_CHECKING:
    from sponsorbot.simulator.world import Account

MAX_REQUEST_BYTES = 1 << 15  # the Bot API server's own limit, before any parsing
_PARSERS: dict[str, Callable[[str], tuple[str, list[Entity]]]] = {
    "html": parse_html,
    "markdownv2": parse_markdown_v2,
    "markdown": parse_markdown,
}
# Types the Bot API accepts in ``entities`` and drops: Telegram finds them again by itself.
_FOUND_AGAIN = frozenset(
    {"mention", "hashtag", "cashtag", "bot_command", "url", "email", "phone_number"}
    | {"bank_card_number"}
)
_SIMPLE = frozenset(
    {"bold", "italic", "underline", "strikethrough", "spoiler", "code", "blockquote"}
    | {"expandable_blockquote"}
)
Users: TypeAlias = Mapping[int, "Account"]


def _json_date_flags(date_format: str) -> int:
    """Client::get_text_entity_type: a ``date_time_format`` read letter by letter (the last
    time and the last date precision win), or a refusal."""
    if date_format in ("r", "R"):
        return 1
    time = date = week = 0
    for ch in date_format:
        if ch not in "tTdDwW":
            raise FieldError("Invalid date-time format specified")
        time = {"t": 2, "T": 4}.get(ch, time)
        date = {"d": 8, "D": 16}.get(ch, date)
        week = 32 if ch in "wW" else week
    return time | date | week


def _entity(value: Any) -> Entity | None:
    """Client::get_text_entity: one MessageEntity of the ``entities`` JSON, or None for a type
    Telegram finds by itself."""
    if not isinstance(value, dict):
        raise FieldError("expected an Object")
    offset = required_integer(value, "offset")
    length = required_integer(value, "length")
    kind = required_text(value, "type")
    if not kind:
        raise FieldError("Type is not specified")
    if kind in _SIMPLE:
        return Entity(kind, offset, length)
    if kind == "pre":
        language = optional_text(value, "language") or ""
        return Entity("pre_code" if language else "pre", offset, length, language=language)
    if kind == "text_link":
        return Entity(kind, offset, length, url=required_text(value, "url"))
    if kind == "text_mention":
        user = required(value, "user", dict)
        return Entity(kind, offset, length, user_id=required_integer(user, "id", 64))
    if kind == "custom_emoji":
        emoji_id = required_integer(value, "custom_emoji_id", 64)
        return Entity(kind, offset, length, custom_emoji_id=emoji_id)
    if kind == "date_time":
        unix_time = required_integer(value, "unix_time")
        flags = _json_date_flags(optional_text(value, "date_time_format") or "")
        return Entity(kind, offset, length, unix_time=unix_time, date_flags=flags)
    if kind in _FOUND_AGAIN:
        return None
    raise FieldError("Unsupported type specified")


def _explicit(raw: str | bytes | None) -> list[Entity]:
    """The ``entities`` parameter as JSON text. Text that is not JSON, or JSON that is not an
    array, is ignored as the Bot API ignores it."""
    try:
        value = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return []
    if not isinstance(value, list):
        return []
    entities = []
    for item in value:
        try:
            entity = _entity(item)
        except FieldError as exc:
            raise bad_request(f"can't parse MessageEntity: {exc}") from None
        if entity is not None:
            entities.append(entity)
    return entities


def _checked(entities: list[Entity], users: Users | None) -> list[Entity]:
    """tdlib's get_message_entities for a bot, then the server's view of mentioned users."""
    kept: list[Entity] = []
    for entity in entities:
        if entity.kind == "text_link":
            user_id = link_user_id(entity.url)
            if user_id:
                entity.kind, entity.url, entity.user_id = "text_mention", "", user_id
            else:
                try:
                    entity.url = check_link(entity.url)
                except LinkError as exc:
                    raise from_tdlib(f"Entity {exc}") from None
        if entity.kind == "text_mention" and not 0 < entity.user_id <= MAX_USER_ID:
            raise from_tdlib("User not found")
        if entity.kind == "custom_emoji" and entity.custom_emoji_id == 0:
            raise from_tdlib("Invalid custom emoji identifier specified")
        if entity.kind == "date_time" and entity.unix_time <= 0:
            raise from_tdlib("Invalid date specified")
        # Telegram drops a mention of someone it does not know (then "@name" inside it may be
        # found as a plain mention): tdlib/telegram-bot-api issue 687.
        if entity.kind == "text_mention" and users is not None and entity.user_id not in users:
            continue
        kept.append(entity)
    return kept


def _user_json(user_id: int, users: Users | None) -> dict[str, Any]:
    account = users.get(user_id) if users is not None else None
    if account is not None:
        return account.json()
    # What the Bot API shows for a user it has no information about.
    return shape("User", id=user_id, is_bot=False, first_name="")


def entity_json(entity: Entity, users: Users | None = None) -> dict[str, Any]:
    """The Bot API MessageEntity of ``entity`` (``user`` filled in from ``users``)."""
    kind = entity.kind
    return shape(
        "MessageEntity",
        offset=entity.offset,
        length=entity.length,
        type="pre" if kind == "pre_code" else kind,
        language=entity.language if kind == "pre_code" else None,
        url=entity.url if kind == "text_link" else None,
        user=_user_json(entity.user_id, users) if kind == "text_mention" else None,
        custom_emoji_id=str(entity.custom_emoji_id) if kind == "custom_emoji" else None,
        unix_time=entity.unix_time if kind == "date_time" else None,
        # Always there for a date, "" when the text is shown as it is.
        date_time_format=date_format_of(entity.date_flags) if kind == "date_time" else None,
    )


def _format(
    text: str, mode: str, entities: str | bytes | None, users: Users | None, caption: bool
) -> tuple[str, list[Entity], bool]:
    """The text and entities Telegram keeps, and whether a text mention was there to keep or
    drop (only then do ``users`` matter)."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_REQUEST_BYTES:
        raise from_tdlib("Text is too long")
    if mode and mode != "none":
        parser = _PARSERS.get(mode)
        if parser is None:
            raise from_tdlib("Unsupported parse_mode")
        try:
            text, found = parser(text)
        except TextError as exc:
            raise from_tdlib(f"Can't parse entities: {exc}") from None
    else:
        found = _explicit(entities)
    found = _checked(found, users)
    mentioned = any(e.kind == "text_mention" for e in found)  # all of them, without users
    try:
        text, kept = fix_formatted_text(text, found, allow_empty=caption, find=finder())
    except TextError as exc:
        raise from_tdlib(str(exc)) from None
    return text, kept, mentioned


# Bots send the same few texts again and again (a greeting, a button prompt): their parsed
# form is kept, as JSON so that no caller can change what the next one gets.
_CACHED_TEXTS = 1024
_CACHED_LENGTH = 4096


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _format_cached(
    text: str, mode: str, entities: str | bytes | None, caption: bool
) -> tuple[str, bytes, bool]:
    shown, kept, mentioned = _format(text, mode, entities, None, caption)
    return shown, orjson.dumps([entity_json(e) for e in kept]), mentioned


def format_text(
    text: str,
    parse_mode: str | None,
    entities: Any = None,
    *,
    users: Users | None = None,
    caption: bool = False,
) -> tuple[str, list[dict[str, Any]]]:
    """The text (or, with ``caption``, the caption) and Bot API entities a bot's message gets.

    ``entities`` is the raw ``entities``/``caption_entities`` parameter (JSON text, or the
    decoded array of a JSON body), used when there is no parse mode. ``users`` are the
    accounts a ``text_mention`` may name: a mention of anyone else is dropped, as Telegram
    drops it; without ``users`` every mention is kept. Raises :class:`ApiError` with the real
    server's 400s: ``message text is empty``, ``unsupported parse_mode``, ``can't parse
    entities: ...``, ``can't parse MessageEntity: ...``, ``text must be non-empty``... The
    length limits are checked by the caller, once the chat is known (as tdlib does).
    """
    if not text:
        if caption:
            return "", []
        raise bad_request(TEXT_EMPTY)
    mode = (parse_mode or "").lower()
    raw: str | bytes | None = None
    if not mode or mode == "none":  # with a parse mode the entities are not read
        raw = entities if entities is None or isinstance(entities, str) else orjson.dumps(entities)
    if len(text) <= _CACHED_LENGTH:
        shown, found, mentioned = _format_cached(text, mode, raw, caption)
        if not (mentioned and users is not None):
            return shown, orjson.loads(found) if found != b"[]" else []
    shown, kept, _ = _format(text, mode, raw, users, caption)
    return shown, [entity_json(e, users) for e in kept]


def user_text(text: str) -> tuple[str, list[dict[str, Any]]]:
    """A person's message as their Telegram app sends it: cleaned and trimmed, with the
    automatic entities (``/start`` is a ``bot_command``). Raises ``ValueError`` (a
    :class:`~sponsorbot.simulator.entities.TextError`) when nothing visible is left."""
    text, found = fix_formatted_text(text, [], allow_empty=False, find=finder())
    return text, [entity_json(e) for e in found]
