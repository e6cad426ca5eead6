"""A received message's formatting, written back as Telegram's HTML parse mode.

A message comes with its ``text`` (or ``caption``) as plain text and its formatting as
``entities`` (or ``caption_entities``): dicts with a ``type``, an ``offset`` and a ``length``
counted in UTF-16 code units, so a character outside the Basic Multilingual Plane (most emoji)
counts two. :func:`to_html` turns the pair into one string that, sent with ``parse_mode=HTML``,
gives the same text with the same formatting.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

__all__ = ["to_html"]

# Entities that are written as a fixed pair of tags; the number orders tags over the same span,
# outermost first (blocks outside, custom emoji inside everything).
_FIXED: dict[str, tuple[int, str, str]] = {
    "blockquote": (0, "<blockquote>", "</blockquote>"),
    "expandable_blockquote": (0, "<blockquote expandable>", "</blockquote>"),
    "code": (2, "<code>", "</code>"),
    "bold": (4, "<b>", "</b>"),
    "italic": (5, "<i>", "</i>"),
    "underline": (6, "<u>", "</u>"),
    "strikethrough": (7, "<s>", "</s>"),
    "spoiler": (8, "<tg-spoiler>", "</tg-spoiler>"),
}
_PRE_RANK, _LINK_RANK, _EMOJI_RANK = 1, 3, 9
# What Telegram accepts in emoji-id: a canonical 64-bit integer; anything else refuses the message.
_EMOJI_ID = re.compile(r"-?[1-9][0-9]{0,18}")
_INT64 = range(-(2**63), 2**63)


class _Span(NamedTuple):
    """One entity to write: where it is in the Python string and its tags."""

    start: int
    """Index in the text of the entity's first character."""
    end: int
    """Index in the text just after the entity."""
    rank: int
    """Which of the tags over the same span goes outside (lower) or inside (higher)."""
    order: int
    """The entity's position in the list, to break the last ties."""
    open: str
    """Its start tag (or tags, for a ``pre`` with a language)."""
    close: str
    """Its end tag (or tags)."""


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attribute(value: str) -> str:
    return _escape(value).replace('"', "&quot;")


def _indices(text: str) -> list[int]:
    """Index in ``text`` at each UTF-16 offset from 0 to its UTF-16 length; -1 in the middle of
    a surrogate pair, where no entity may begin or end."""
    indices: list[int] = []
    for index, char in enumerate(text):
        indices.append(index)
        if ord(char) > 0xFFFF:
            indices.append(-1)
    indices.append(len(text))
    return indices


def _tags(entity: dict[str, Any]) -> tuple[int, str, str] | None:
    """The rank and the tags of ``entity``, or None for a type written as plain text: automatic
    ones Telegram finds again (mention, hashtag, url, ...), unknown ones and malformed ones."""
    kind = entity.get("type")
    if not isinstance(kind, str):
        return None
    if kind in _FIXED:
        return _FIXED[kind]
    if kind == "pre":
        language = entity.get("language")
        if isinstance(language, str) and language:
            return (
                _PRE_RANK,
                f'<pre><code class="language-{_attribute(language)}">',
                "</code></pre>",
            )
        return _PRE_RANK, "<pre>", "</pre>"
    if kind == "text_link":
        url = entity.get("url")
        # A "\0" would end the tag early for tdlib, which would refuse the whole text.
        if isinstance(url, str) and url and "\0" not in url:
            return _LINK_RANK, f'<a href="{_attribute(url)}">', "</a>"
        return None
    if kind == "text_mention":
        user = entity.get("user")
        user_id = user.get("id") if isinstance(user, dict) else None
        if type(user_id) is int and user_id > 0:
            return _LINK_RANK, f'<a href="tg://user?id={user_id}">', "</a>"
        return None
    if kind == "custom_emoji":
        emoji_id = entity.get("custom_emoji_id")
        if isinstance(emoji_id, str) and _EMOJI_ID.fullmatch(emoji_id) and int(emoji_id) in _INT64:
            return _EMOJI_RANK, f'<tg-emoji emoji-id="{emoji_id}">', "</tg-emoji>"
    return None


def _span(entity: Any, order: int, indices: list[int]) -> _Span | None:
    """Where ``entity`` is in the text and how it is written, or None if it is left out."""
    if not isinstance(entity, dict):
        return None
    offset, length = entity.get("offset"), entity.get("length")
    if type(offset) is not int or type(length) is not int:  # not bool either
        return None
    if offset < 0 or length <= 0 or offset + length >= len(indices):
        return None
    start, end = indices[offset], indices[offset + length]
    tags = _tags(entity)
    if start < 0 or end < 0 or tags is None:
        return None
    return _Span(start, end, tags[0], order, tags[1], tags[2])


def to_html(text: str, entities: list[dict[str, Any]] | None) -> str:
    """``text`` with ``entities`` as Telegram HTML, to send back with ``parse_mode=HTML``.

    The text has exactly ``&``, ``<`` and ``>`` escaped (attribute values ``"`` too). Entities
    become ``<b>``, ``<i>``, ``<u>``, ``<s>``, ``<tg-spoiler>``, ``<code>``, ``<pre>`` (with a
    ``language``: ``<pre><code class="language-x">``), ``<a href>`` for text_link and
    text_mention (``tg://user?id=N``), ``<tg-emoji emoji-id>`` and ``<blockquote>`` (with
    ``expandable`` for expandable_blockquote). Automatic types (mention, hashtag, cashtag,
    bot_command, url, email, phone_number, bank_card) stay plain text, which Telegram detects
    again. Unknown types and malformed entities (offset or length not an int, outside the text
    or splitting a surrogate pair, length not positive, link without url, emoji id that is not
    an integer) are left out; nothing raises.

    Tags are always well nested: over the same span the longer entity goes outside, then blocks
    before links before styles before custom emoji. Entities that partly overlap (Telegram
    never sends them) are closed and reopened, so the one that began later becomes two.
    """
    indices = _indices(text)
    spans = [span for order, e in enumerate(entities or ()) if (span := _span(e, order, indices))]
    spans.sort(key=lambda s: s.start)  # in order of start; how they nest is decided below
    out: list[str] = []
    stack: list[_Span] = []
    position = 0
    points = sorted({s.start for s in spans} | {s.end for s in spans})
    waiting = iter(spans)
    upcoming = next(waiting, None)
    for point in points:
        out.append(_escape(text[position:point]))
        position = point
        # Close the lowest entity ending here and all above it; reopen those that go on.
        lowest = next((i for i, s in enumerate(stack) if s.end == point), len(stack))
        reopened = [s for s in stack[lowest:] if s.end > point]
        out.extend(s.close for s in reversed(stack[lowest:]))
        del stack[lowest:]
        starting = []
        while upcoming is not None and upcoming.start == point:
            starting.append(upcoming)
            upcoming = next(waiting, None)
        # Longest first, so that an entity ending inside another is pushed above it.
        for span in sorted(reopened + starting, key=lambda s: (-s.end, s.rank, s.order)):
            out.append(span.open)
            stack.append(span)
    out.append(_escape(text[position:]))
    return "".join(out)
