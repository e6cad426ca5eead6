"""Telegram's HTML parse mode, checked the way Telegram checks it.

The Bot API hands ``parse_mode=HTML`` text to tdlib's ``parse_html`` (td/telegram/MessageEntity.cpp)
and the result to ``fix_formatted_text``. This is a compact re-implementation of both, so that the
owner panel refuses a broadcast post before it is queued, with the error Telegram would send back.
Entities themselves are not returned: only what decides the visible text or an error is kept.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Literal

__all__ = ["HtmlError", "Parsed", "check_message_text", "parse_html"]

_PARSE_ERROR = "Bad Request: can't parse entities: "
_TAGS = frozenset(
    b"a b strong i em u ins s strike del span tg-spoiler "
    b"tg-emoji tg-time pre code blockquote".split()
)
# tdlib's is_space: no "\f", but "\0", the end of the C string it reads.
_SPACE = frozenset(b" \t\r\n\v\0")
_ATTRIBUTE_NAME_END = _SPACE | frozenset(b"=>/\"'")
_NAME_TOKEN = frozenset(f"{string.ascii_letters}{string.digits}.-".encode())
_ALPHA = frozenset(string.ascii_letters.encode())
_DIGITS = frozenset(string.digits.encode())
_HEX_DIGITS = frozenset(string.hexdigits.encode())
_QUOTES = frozenset(b"\"'")
_LT, _GT, _AMP, _SLASH, _EQUALS, _SEMICOLON, _HASH, _X = b"<>&/=;#x"
# The only named entities tdlib decodes; "&nbsp;", "&apos;" and the rest stay literal text.
_NAMED = {b"lt": "<", b"gt": ">", b"amp": "&", b"quot": '"'}
# Attributes whose value can still make Telegram refuse the text, and the prefix tdlib strips.
_ARGUMENTS = {
    (b"span", b"class"): b"tg-",
    (b"tg-emoji", b"emoji-id"): b"",
    (b"tg-time", b"format"): b"",
}
_EMOJI_ID = re.compile(rb"-?[1-9][0-9]*")  # to_integer_safe<int64> wants the canonical form
_DATE_FORMAT = re.compile(rb"[rR]|[tTdDwW]*")
_SURROGATE_ERROR = (
    "Text contains invalid Unicode characters after decoding HTML entities, "
    "check for unmatched surrogate code units"
)
# clean_input_string: ASCII controls but "\n" become spaces; "\r", U+2028..U+202E and three
# combining marks drawing vertical lines are dropped.
_CLEAN: dict[int, str | None] = {c: " " for c in range(32) if c not in (10, 13)}
_CLEAN.update(dict.fromkeys([13, *range(0x2028, 0x202F), 0x30A, 0x333, 0x33F]))
# replace_offending_characters: in a run of LRM/RLM marks all but the last become ZWNJ.
_OFFENDING = re.compile("[\u200e\u200f](?=[\u200e\u200f])")
# is_empty_string: text made only of these counts as empty.
_EMPTY = re.compile(
    "[ \n\u00a0\u1680\u180e\u2000-\u200f\u202e\u202f\u205f\u2800\u3000\ufeff\ufffc"
    "\U000e0000-\U000e007f]*"
)


@dataclass(frozen=True, slots=True)
class Parsed:
    """Text as Telegram shows it once the HTML is parsed."""

    text: str
    """The visible text after entities are decoded and tags removed."""
    length: int
    """Its length in UTF-16 code units, as Telegram counts message length."""


class HtmlError(ValueError):
    """The text Telegram would refuse; str(exc) is Telegram's description, e.g.
    "Bad Request: can't parse entities: Unsupported start tag \"foo\" at byte offset 0"."""


def _refuse(message: str) -> HtmlError:
    return HtmlError(_PARSE_ERROR + message)


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _decode_entity(buf: bytes, pos: int) -> tuple[str, int]:
    """tdlib's decode_html_entity at ``buf[pos] == "&"``: the character and where the text goes
    on, or ``("", pos)`` when the ampersand is literal text. The ";" is optional."""
    end = pos + 1
    if buf[end] == _HASH:
        end += 1
        base, digits = 10, _DIGITS
        if buf[end] == _X:  # lower-case only: "&#X41;" is literal
            base, digits, end = 16, _HEX_DIGITS, end + 1
        start = end
        while buf[end] in digits:
            end += 1
        # At most nine characters before the ";" (so at most 7 decimal or 6 hex digits).
        if end == start or end - pos >= 10:
            return "", pos
        code = int(buf[start:end], base)
        if not 0 < code < 0x10FFFF:  # U+10FFFF itself is refused too
            return "", pos
        char = chr(code)
    else:
        while buf[end] in _ALPHA:
            end += 1
        char = _NAMED.get(buf[pos + 1 : end], "")  # case-sensitive: "&LT;" is literal
        if not char:
            return "", pos
    return char, end + (buf[end] == _SEMICOLON)


def _skip_spaces(buf: bytes, i: int) -> int:
    while buf[i] != 0 and buf[i] in _SPACE:
        i += 1
    return i


def _attribute_value(buf: bytes, i: int, begin: int) -> tuple[bytes, int]:
    """The value at ``buf[i]``: quoted, with entities decoded, or a lower-cased name token."""
    if buf[i] not in _QUOTES:
        start = i
        while buf[i] in _NAME_TOKEN:
            i += 1
        # So href=https://x is refused at the ":", the value must be quoted.
        if buf[i] not in _SPACE and buf[i] != _GT:
            raise _refuse(f"Unexpected end of name token at byte offset {start}")
        value = buf[start:i].lower()
    else:
        quote, i = buf[i], i + 1
        decoded = bytearray()
        while buf[i] != quote and buf[i] != 0:
            char, after = _decode_entity(buf, i) if buf[i] == _AMP else ("", i)
            if char:
                decoded += char.encode("utf-8", "surrogatepass")
                i = after
            else:
                decoded.append(buf[i])
                i += 1
        value, i = bytes(decoded), i + (buf[i] == quote)
    if buf[i] == 0:
        raise _refuse(f"Unclosed start tag at byte offset {begin}")
    return value, i


def _start_tag(buf: bytes, begin: int) -> tuple[int, bytes, bytes]:
    """The start tag at ``buf[begin] == "<"``: the position of its ">", its name and argument."""
    i = begin + 1
    while buf[i] not in _SPACE and buf[i] != _GT:
        i += 1
    if buf[i] == 0:
        raise _refuse(f"Unclosed start tag at byte offset {begin}")
    tag = buf[begin + 1 : i].lower()
    name = tag.decode()
    if tag not in _TAGS:
        raise _refuse(f'Unsupported start tag "{name}" at byte offset {begin}')
    argument = b""
    while buf[i] != _GT:
        i = _skip_spaces(buf, i)
        if buf[i] == _GT:
            break
        start = i
        while buf[i] not in _ATTRIBUTE_NAME_END:
            i += 1
        attribute = buf[start:i]  # not lower-cased: HREF= is ignored
        if not attribute:
            raise _refuse(f'Empty attribute name in the tag "{name}" at byte offset {begin}')
        i = _skip_spaces(buf, i)
        if buf[i] != _EQUALS:  # a bare attribute such as "expandable"
            if buf[i] == 0:
                raise _refuse(f'Unclosed start tag "{name}" at byte offset {begin}')
            continue
        i = _skip_spaces(buf, i + 1)
        if buf[i] == 0:
            raise _refuse(f'Unclosed start tag "{name}" at byte offset {begin}')
        value, i = _attribute_value(buf, i, begin)
        prefix = _ARGUMENTS.get((tag, attribute))
        if prefix is not None and value.startswith(prefix):
            argument = value[len(prefix) :]
    if tag == b"span" and argument != b"spoiler":
        raise _refuse(f'Tag "span" must have class "tg-spoiler" at byte offset {begin}')
    return i, tag, argument


def _check_argument(tag: bytes, argument: bytes) -> None:
    """What tdlib refuses when it makes the entity of a closed, non-empty tag."""
    if tag == b"tg-emoji" and not (
        len(argument) <= 20 and _EMOJI_ID.fullmatch(argument) and -(2**63) <= int(argument) < 2**63
    ):
        raise _refuse("Invalid custom emoji identifier specified")
    # A tg-time "unix" is never refused: a bad one only makes no entity.
    if tag == b"tg-time" and not _DATE_FORMAT.fullmatch(argument):
        raise _refuse("Invalid date format used")


def _parse(text: str) -> tuple[str, int]:
    """tdlib's parse_html: the visible text and the index in it where the first entity begins."""
    try:
        buf = text.encode() + b"\0"
    except UnicodeEncodeError:
        raise HtmlError("Bad Request: text must be encoded in UTF-8") from None
    out = bytearray()
    open_tags: list[tuple[bytes, bytes, int]] = []  # name, argument, start in out
    first_entity = len(buf)  # where in out the first entity begins; past its end if none
    has_surrogate = False
    i = 0
    while i < len(buf) - 1:
        char, after = _decode_entity(buf, i) if buf[i] == _AMP else ("", i)
        if char:
            has_surrogate |= "\ud800" <= char <= "\udfff"  # reported only once all else parsed
            out += char.encode("utf-8", "surrogatepass")
            i = after
            continue
        if buf[i] != _LT:
            out.append(buf[i])
            i += 1
            continue
        begin = i
        if buf[i + 1] != _SLASH:
            i, tag, argument = _start_tag(buf, begin)
            open_tags.append((tag, argument, len(out)))
        elif not open_tags:
            raise _refuse(f"Unexpected end tag at byte offset {begin}")
        else:
            i = begin + 2
            while buf[i] not in _SPACE and buf[i] != _GT:
                i += 1
            end_tag = buf[begin + 2 : i].lower()
            i = _skip_spaces(buf, i)
            if buf[i] != _GT:
                raise _refuse(f"Unclosed end tag at byte offset {begin}")
            tag, argument, start = open_tags.pop()
            if end_tag and end_tag != tag:  # "</>" closes whatever is open
                raise _refuse(
                    f"Unmatched end tag at byte offset {begin}, "
                    f'expected "</{tag.decode()}>", found "</{end_tag.decode()}>"'
                )
            if len(out) > start:  # an empty tag makes no entity, so nothing to check
                _check_argument(tag, argument)
                first_entity = min(first_entity, start)
        i += 1
    if open_tags:
        innermost = open_tags[-1][0].decode()
        raise _refuse(f'Can\'t find end tag corresponding to start tag "{innermost}"')
    if has_surrogate:
        raise _refuse(_SURROGATE_ERROR)
    return out.decode(), len(out[:first_entity].decode())


def parse_html(text: str) -> Parsed:
    """Parse ``text`` as Telegram's HTML parse mode does, before any trimming or cleaning.

    Raises :class:`HtmlError` with Telegram's "can't parse entities" description, whose byte
    offsets count UTF-8 bytes of ``text``.
    """
    visible, _ = _parse(text)
    return Parsed(visible, _utf16_length(visible))


def check_message_text(
    text: str, *, limit: int = 4096, what: Literal["text", "caption"] = "text"
) -> Parsed:
    """Check HTML ``text`` as the Bot API checks a message text or, with ``what="caption"`` (and
    ``limit=1024``), a media caption; return what Telegram would show.

    Like Telegram it drops control characters, trims spaces and newlines (leading ones only up to
    the first formatting tag), refuses a text with nothing visible (a caption may be empty) and
    one longer than ``limit`` UTF-16 code units. Raises :class:`HtmlError`.
    """
    if not text:  # the Bot API's own check, before any parsing
        if what == "text":
            raise HtmlError("Bad Request: message text is empty")
        return Parsed("", 0)
    if len(text.encode("utf-8", "surrogatepass")) > 1 << 15:
        raise HtmlError("Bad Request: text is too long")
    visible, first_entity = _parse(text)
    # Not modelled: a link whose URL tdlib finds invalid makes no entity, so no stop for ltrim.
    head = visible[:first_entity].translate(_CLEAN).lstrip(" \n")
    shown = _OFFENDING.sub("\u200c", head + visible[first_entity:].translate(_CLEAN)).rstrip(" \n")
    if what == "text" and _EMPTY.fullmatch(shown):
        raise HtmlError("Bad Request: text must be non-empty")
    parsed = Parsed(shown, _utf16_length(shown))
    if parsed.length > limit:
        raise HtmlError(f"Bad Request: message {'is' if what == 'text' else 'caption is'} too long")
    return parsed
