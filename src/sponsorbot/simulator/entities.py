"""Message entities as Telegram keeps them, and the clean-up every stored text goes through.

Read in tdlib's td/telegram/MessageEntity.cpp (``fix_formatted_text`` and the functions it calls)
and written again here: entities are sorted, made to nest properly (a style entity that crosses
another one is split, a link that crosses another link is dropped), control characters become
spaces, ``\\r`` disappears, the text is trimmed of spaces and newlines, a text with nothing
visible is refused, and the automatic entities (commands, links, mentions, hashtags) are added
where they do not overlap the given ones. Offsets count UTF-16 code units, as the Bot API does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

# tdlib's MessageEntity::Type in its order: the position is the bit of the type in masks, the
# value is get_type_priority (lower sorts first among entities with the same span).
_PRIORITY = {
    "mention": 50,
    "hashtag": 50,
    "bot_command": 50,
    "url": 50,
    "email": 50,
    "bold": 90,
    "italic": 91,
    "code": 20,
    "pre": 11,
    "pre_code": 10,  # a "pre" with a language
    "text_link": 49,
    "text_mention": 49,
    "cashtag": 50,
    "phone_number": 50,
    "underline": 92,
    "strikethrough": 93,
    "blockquote": 0,
    "bank_card_number": 50,
    "media_timestamp": 50,
    "spoiler": 94,
    "custom_emoji": 99,
    "expandable_blockquote": 0,
    "date_time": 30,
}
_BIT = {kind: 1 << n for n, kind in enumerate(_PRIORITY)}


def _mask(*kinds: str) -> int:
    out = 0
    for kind in kinds:
        out |= _BIT[kind]
    return out


# Styles that may cross other entities: they are split around them instead of dropped.
SPLITTABLE = ("bold", "italic", "underline", "strikethrough", "spoiler")
_SPLITTABLE = _mask(*SPLITTABLE)
_BLOCKQUOTE = _mask("blockquote", "expandable_blockquote")
_CONTINUOUS = _mask(
    "mention",
    "hashtag",
    "bot_command",
    "url",
    "email",
    "text_link",
    "text_mention",
    "cashtag",
    "phone_number",
    "bank_card_number",
    "media_timestamp",
    "custom_emoji",
)
_PRE = _mask("pre", "code", "pre_code", "date_time")  # nothing may be nested in these
MAX_USER_ID = (1 << 40) - 1


class TextError(ValueError):
    """Telegram refuses the text; ``str(exc)`` is tdlib's message, e.g. ``Text must be
    non-empty`` (the Bot API turns it into ``Bad Request: text must be non-empty``)."""


@dataclass(slots=True)
class Entity:
    """One entity: its kind, where it is (UTF-16 code units) and the value its kind carries."""

    kind: str
    """The Bot API type, except ``pre_code`` for a ``pre`` with a language."""
    offset: int
    length: int
    url: str = ""
    """For ``text_link``."""
    language: str = ""
    """For ``pre_code``."""
    user_id: int = 0
    """For ``text_mention``."""
    custom_emoji_id: int = 0
    """For ``custom_emoji``."""
    unix_time: int = 0
    """For ``date_time``, with ``date_flags`` (see :mod:`sponsorbot.simulator.textlinks`)."""
    date_flags: int = 0

    @property
    def end(self) -> int:
        """Offset just past the entity."""
        return self.offset + self.length

    def sort_key(self) -> tuple[int, int, int]:
        """tdlib's order: by offset, longer first, then by the priority of the type."""
        return self.offset, -self.length, _PRIORITY[self.kind]


ASTRAL = re.compile("[\U00010000-\U0010ffff]")
"""Characters outside the Basic Multilingual Plane: two UTF-16 code units each."""


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _sort(entities: list[Entity]) -> None:
    entities.sort(key=Entity.sort_key)


def _is_empty(entity: Entity) -> bool:
    """remove_empty_entities: no length, or a value its kind cannot do without."""
    if entity.length <= 0:
        return True
    if entity.kind == "text_link":
        return not entity.url
    if entity.kind == "text_mention":
        return not 0 < entity.user_id <= MAX_USER_ID
    if entity.kind == "custom_emoji":
        return entity.custom_emoji_id == 0
    if entity.kind == "date_time":
        return entity.unix_time <= 0
    return False


def _splittable_index(kind: str) -> int:
    return SPLITTABLE.index(kind)


def _are_valid(entities: list[Entity]) -> bool:
    """are_entities_valid: sorted entities nest properly and need no fixing."""
    end_pos = [-1] * len(SPLITTABLE)
    stack: list[Entity] = []
    nested_mask = 0
    for entity in entities:
        while stack and entity.offset >= stack[-1].end:
            nested_mask -= _BIT[stack.pop().kind]
        bit = _BIT[entity.kind]
        if stack:
            if entity.end > stack[-1].end or nested_mask & bit:
                return False  # crosses the parent, or the same type is nested
            if _BIT[stack[-1].kind] & _PRE:
                return False  # nothing inside pre, code or a date
            if bit & _PRE and nested_mask & ~_BLOCKQUOTE:
                return False  # pre and code only inside a blockquote
            if bit & (_CONTINUOUS | _BLOCKQUOTE) and nested_mask & _CONTINUOUS:
                return False
            if bit & _BLOCKQUOTE and nested_mask & _BLOCKQUOTE:
                return False
            if nested_mask & _SPLITTABLE:
                return False  # the style around may need splitting
        if bit & _SPLITTABLE:
            index = _splittable_index(entity.kind)
            if end_pos[index] >= entity.offset:
                return False  # touches or overlaps one of its type: they merge
            end_pos[index] = entity.end
        stack.append(entity)
        nested_mask += bit
    return True


def _remove_intersecting(entities: list[Entity]) -> list[Entity]:
    """Keep, in order, only entities that begin after the end of the last one kept."""
    kept: list[Entity] = []
    last_end = 0
    for entity in entities:
        if entity.offset >= last_end:
            last_end = entity.end
            kept.append(entity)
    return kept


def _remove_crossing_blockquote(entities: list[Entity], quotes: list[Entity]) -> list[Entity]:
    """Drop entities that cross a blockquote (being inside one is fine)."""
    if not quotes:
        return entities
    kept: list[Entity] = []
    q = 0
    for entity in entities:
        while q < len(quotes) and (
            not _BIT[quotes[q].kind] & _BLOCKQUOTE or quotes[q].end <= entity.offset
        ):
            q += 1
        if q < len(quotes) and (
            quotes[q].end < entity.end or entity.offset < quotes[q].offset < entity.end
        ):
            continue
        kept.append(entity)
    return kept


def _split(styles: list[Entity], others: list[Entity]) -> list[Entity]:
    """split_entities: merge touching styles of one type and cut them at the edges of pre and
    code (which may hold no style) so that every style nests within the other entities."""
    begin = [0] * len(SPLITTABLE)
    end = [0] * len(SPLITTABLE)
    result: list[Entity] = []
    position = 0

    def flush(offset: int) -> None:
        """End every open style at ``offset`` (what ends before it goes whole, the rest is
        cut there and goes on from it)."""
        for index, kind in enumerate(SPLITTABLE):
            if end[index] != 0 and begin[index] < offset:
                if end[index] <= offset:
                    result.append(Entity(kind, begin[index], end[index] - begin[index]))
                    begin[index] = end[index] = 0
                else:
                    result.append(Entity(kind, begin[index], offset - begin[index]))
                    begin[index] = offset

    def add_styles(end_offset: int) -> None:
        """Take in the styles that begin before ``end_offset``, joining touching ones of a
        kind, then flush at ``end_offset``."""
        nonlocal position
        while position < len(styles) and styles[position].offset < end_offset:
            style = styles[position]
            index = _splittable_index(style.kind)
            if style.offset <= end[index] and end[index] != 0:
                end[index] = max(end[index], style.end)
            else:
                flush(style.offset)
                begin[index], end[index] = style.offset, style.end
            position += 1
        flush(end_offset)

    stack: list[Entity] = []

    def add_offset(offset: int) -> None:
        """Close the other entities that end by ``offset`` (dropping styles inside pre and
        code), then take in the styles up to it."""
        while stack and offset >= stack[-1].end:
            before = len(result)
            add_styles(stack[-1].end)
            if _BIT[stack[-1].kind] & _PRE:
                del result[before:]  # styles inside pre or code are dropped
            stack.pop()
        add_styles(offset)

    for other in others:
        add_offset(other.offset)
        stack.append(other)
    add_offset(1 << 31)
    _sort(result)
    return result


def _resplit(styles: list[Entity], others: list[Entity]) -> list[Entity]:
    if not styles:
        return others
    styles = _split(styles, others)
    if not others:
        return styles
    combined = others + styles
    _sort(combined)
    return combined


def _partition(entities: list[Entity]) -> tuple[list[Entity], list[Entity], list[Entity]]:
    continuous: list[Entity] = []
    quotes: list[Entity] = []
    styles: list[Entity] = []
    for entity in entities:
        bit = _BIT[entity.kind]
        (styles if bit & _SPLITTABLE else quotes if bit & _BLOCKQUOTE else continuous).append(
            entity
        )
    return continuous, quotes, styles


def fix_entities(entities: list[Entity]) -> list[Entity]:
    """fix_entities: sort, drop entities that cross others, split styles; returns a new list."""
    entities = sorted(entities, key=Entity.sort_key)
    if _are_valid(entities):
        return entities
    continuous, quotes, styles = _partition(entities)
    continuous = _remove_intersecting(continuous)
    if quotes:
        quotes = _remove_intersecting(quotes)
        continuous = _remove_crossing_blockquote(continuous, quotes)
        continuous += quotes
        _sort(continuous)
    return _resplit(styles, continuous)


def _merge(old: list[Entity], new: list[Entity]) -> list[Entity]:
    """merge_entities: ``new`` entities only where they overlap none of ``old``."""
    result: list[Entity] = []
    n = 0
    for entity in old:
        while n < len(new) and new[n].end <= entity.offset:
            result.append(new[n])
            n += 1
        result.append(entity)
        while n < len(new) and new[n].offset < entity.end:
            n += 1
    result.extend(new[n:])
    return result


def merge_new_entities(entities: list[Entity], new: list[Entity]) -> list[Entity]:
    """merge_new_entities: add found entities (sorted, not overlapping each other) to given ones
    without letting them overlap any given one or cross a blockquote."""
    if not new:
        return entities
    continuous, quotes, styles = _partition(entities)
    new = _remove_crossing_blockquote(new, quotes)
    continuous = _merge(continuous, new)
    if quotes:
        continuous += quotes
        _sort(continuous)
    return _resplit(styles, continuous)


# clean_input_string: ASCII controls but "\n" become spaces; "\r", U+2028..U+202E and three
# combining marks that draw vertical lines are dropped.
_SPACED = frozenset(c for c in range(33) if c not in (10, 13))
_DROPPED = frozenset([13, *range(0x2028, 0x202F), 0x30A, 0x333, 0x33F])
_CLEANED: dict[int, str | None] = {c: " " for c in _SPACED} | dict.fromkeys(_DROPPED)


def _utf8_size(code: int) -> int:
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


def _offending(text: str) -> str:
    """replace_offending_characters: in a run of LRM/RLM marks all but the last become ZWNJ."""
    if "\u200e" not in text and "\u200f" not in text:
        return text
    chars = list(text)
    for i in range(len(chars) - 1):
        if chars[i] in "\u200e\u200f" and chars[i + 1] in "\u200e\u200f":
            chars[i] = "\u200c"
    return "".join(chars)


def _clean(text: str, entities: list[Entity]) -> str:
    """clean_input_string_with_entities: the cleaned text; entity offsets are moved in place
    past dropped characters. Entities must be sorted and nested."""
    cleaned = text.translate(_CLEANED)
    # Nothing dropped, no surrogate pair to split, every entity inside: offsets stay as given.
    if not entities or (
        len(cleaned) == len(text)
        and not ASTRAL.search(text)
        and max(e.end for e in entities) <= len(text)
    ):
        return _offending(cleaned)
    out: list[str] = []
    stack: list[tuple[Entity, int]] = []  # entity, code units dropped before it began
    current = 0
    utf16 = skipped = byte = 0
    size = len(text)
    for index in range(size + 1):
        while stack and utf16 >= stack[-1][0].end:
            entity, before = stack[-1]
            if utf16 != entity.end:
                raise TextError(
                    f"Entity beginning at UTF-16 offset {entity.offset} ends in a middle of a "
                    f"UTF-16 symbol at byte offset {byte}"
                )
            entity.offset -= before
            entity.length -= skipped - before
            stack.pop()
        while current < len(entities) and utf16 >= entities[current].offset:
            if utf16 != entities[current].offset:
                raise TextError(
                    f"Entity begins in a middle of a UTF-16 symbol at byte offset {byte}"
                )
            stack.append((entities[current], skipped))
            current += 1
        if index == size:
            break
        ch = text[index]
        code = ord(ch)
        byte += _utf8_size(code)
        utf16 += 2 if code > 0xFFFF else 1
        if code in _SPACED:
            out.append(" ")
        elif code in _DROPPED:
            skipped += 1
        else:
            out.append(ch)
    if current != len(entities):
        raise TextError(
            f"Entity begins after the end of the text at UTF-16 offset {entities[current].offset}"
        )
    if stack:
        entity = stack[-1][0]
        raise TextError(
            f"Entity beginning at UTF-16 offset {entity.offset} ends after the end of the text "
            f"at UTF-16 offset {entity.end}"
        )
    return _offending("".join(out))


# is_empty_string: a text made only of these shows nothing.
_INVISIBLE = frozenset(
    " \n\u00a0\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u200b\u200c\u200d\u200e\u200f\u202e\u202f\u205f\u2800\u3000\ufeff\ufffc"
)


def is_empty_string(text: str) -> bool:
    """Whether Telegram counts ``text`` as empty: only spaces, newlines, zero-width and other
    blank characters (and the tag characters U+E0000..U+E007F)."""
    return all(ch in _INVISIBLE or 0xE0000 <= ord(ch) <= 0xE007F for ch in text)


Finder = Callable[[str], list[Entity]]


def fix_formatted_text(
    text: str,
    entities: list[Entity],
    *,
    allow_empty: bool,
    find: Finder | None,
) -> tuple[str, list[Entity]]:
    """tdlib's fix_formatted_text (not skipping the trim): the text and entities Telegram keeps.

    ``allow_empty`` is for captions (an empty result is fine); a message text with nothing
    visible raises :class:`TextError` ``Text must be non-empty``. ``find`` adds the automatic
    entities of the final text (None to add none). Raises :class:`TextError` for entities that
    lie outside the text or split a character.
    """
    entities = [replace(e) for e in entities]  # offsets move in place below
    if entities:
        for entity in entities:
            if not 0 <= entity.offset <= 1_000_000:
                raise TextError(f"Receive an entity with incorrect offset {entity.offset}")
            if not 0 <= entity.length <= 1_000_000:
                raise TextError(f"Receive an entity with incorrect length {entity.length}")
        entities = fix_entities([e for e in entities if not _is_empty(e)])
    result = _clean(text, entities)
    entities = [e for e in entities if not _is_empty(e)]

    # The last character that is not a space or newline, and its last UTF-16 code unit.
    last_pos = len(result.rstrip(" \n")) - 1
    last_utf16 = utf16_len(result[: last_pos + 1]) - 1
    if last_pos < 0:
        if allow_empty:
            return "", []
        raise TextError("Text must be non-empty")
    entities = fix_entities(entities)

    # Trim the end, shortening entities that reach into it; the start only up to the first one.
    result = result[: last_pos + 1]
    entities = [e for e in entities if e.offset <= last_utf16]
    for entity in entities:
        entity.length = min(entity.length, last_utf16 + 1 - entity.offset)
    _sort(entities)
    first = entities[0].offset if entities else len(result)
    start = 0
    while start < first and result[start] in " \n":
        start += 1
    result = result[start:]
    for entity in entities:
        entity.offset -= start

    if not allow_empty and is_empty_string(result):
        raise TextError("Text must be non-empty")
    if find is not None:
        entities = merge_new_entities(entities, find(result))
    return result, entities
