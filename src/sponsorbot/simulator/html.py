"""HTML parse mode: Bot API HTML into plain text and entities, or Telegram's refusal.

Read in tdlib's ``parse_html`` (td/telegram/MessageEntity.cpp) and written again. What it does
that a browser would not: only ``&lt;``, ``&gt;``, ``&amp;``, ``&quot;`` and numeric references
are decoded (the ``;`` is optional) and any other ``&`` is literal text; ``</>`` closes whatever
tag is open; an unquoted attribute value is a name token, so ``href=https://x`` is refused at the
``:``; ``<a>`` without ``href`` links to its own text if that is a URL; ``<pre><code
class="language-x">`` is one ``pre`` entity with a language. Entity offsets count UTF-16 code
units; the positions in errors count bytes of the UTF-8 text, as Telegram reports them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sponsorbot.simulator.entities import Entity, TextError, utf16_len
from sponsorbot.simulator.readers import to_integer, to_integer_safe
from sponsorbot.simulator.textlinks import (
    LinkError,
    ascii_lower,
    checked_link,
    date_flags,
    link_user_id,
)

_TAGS = frozenset(
    {"a", "b", "strong", "i", "em", "s", "strike", "del", "u", "ins", "tg-spoiler", "tg-emoji"}
    | {"tg-time", "span", "pre", "code", "blockquote"}
)
_KINDS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "u": "underline",
    "ins": "underline",
    "tg-spoiler": "spoiler",
}
_SPACE = frozenset(" \t\r\n\v\0")  # tdlib's is_space; "\0" is the end of its C string
_ATTRIBUTE_NAME_END = _SPACE | frozenset("=>/\"'")
_NAME_TOKEN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_MARKUP = re.compile("[&<]")
_SURROGATES = (
    "Text contains invalid Unicode characters after decoding HTML entities, "
    "check for unmatched surrogate code units"
)


def byte_offset(text: str, index: int) -> int:
    """Bytes of UTF-8 before ``text[index]``, as Telegram's errors count positions."""
    return len(text[:index].encode("utf-8", "surrogatepass"))


def _at(text: str, i: int) -> str:
    """``text[i]``, or "\\0" past the end (tdlib reads a NUL-terminated string)."""
    return text[i] if i < len(text) else "\0"


def _decode_entity(text: str, pos: int) -> tuple[int, int]:
    """decode_html_entity at ``text[pos] == "&"``: the code point and where the text goes on,
    or (0, pos) when the ampersand is literal text."""
    end = pos + 1
    code = 0
    if _at(text, end) == "#":
        end += 1
        base, digits = 10, "0123456789"
        if _at(text, end) == "x":  # lower-case only: "&#X41;" is literal
            base, digits, end = 16, "0123456789abcdefABCDEF", end + 1
        while _at(text, end) in digits:
            code = (code * base + int(text[end], 16)) & 0xFFFFFFFF  # tdlib's uint32
            end += 1
        if code == 0 or code >= 0x10FFFF or end - pos >= 10:
            return 0, pos
    else:
        while end < len(text) and text[end].isascii() and text[end].isalpha():
            end += 1
        name = _NAMED.get(text[pos + 1 : end])
        if name is None:
            return 0, pos
        code = ord(name)
    return code, end + (_at(text, end) == ";")


@dataclass(slots=True)
class _Open:
    """A start tag waiting for its end tag."""

    tag: str
    argument: str
    date: int
    offset: int
    """UTF-16 offset in the output where the tag's content begins."""
    start: int
    """Index in the output list where its content begins."""


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.out: list[str] = []
        self.utf16 = 0
        self.entities: list[Entity] = []
        self.open: list[_Open] = []

    def offset(self, index: int) -> int:
        """The UTF-8 byte offset of ``source[index]``, as tdlib's errors give it."""
        return byte_offset(self.source, index)

    def skip_spaces(self, i: int) -> int:
        """The index of the first non-space at or after ``i`` (tdlib stops at a NUL)."""
        while i < len(self.source) and self.source[i] in _SPACE and self.source[i] != "\0":
            i += 1
        return i

    def attribute_value(self, i: int, begin: int) -> tuple[str, int]:
        """The value at ``i``: quoted (entities decoded) or a lower-cased name token."""
        s = self.source
        if _at(s, i) not in "'\"":
            start = i
            while _at(s, i) in _NAME_TOKEN:
                i += 1
            if _at(s, i) not in _SPACE and _at(s, i) != ">":
                raise TextError(f"Unexpected end of name token at byte offset {self.offset(start)}")
            value = ascii_lower(s[start:i])
        else:
            quote = s[i]
            i += 1
            chars: list[str] = []
            while _at(s, i) not in (quote, "\0"):
                code, after = _decode_entity(s, i) if s[i] == "&" else (0, i)
                if code:
                    chars.append(chr(code))
                    i = after
                else:
                    chars.append(s[i])
                    i += 1
            i += _at(s, i) == quote
            value = "".join(chars)
        if _at(s, i) == "\0":
            raise TextError(f"Unclosed start tag at byte offset {self.offset(begin)}")
        return value, i

    def start_tag(self, begin: int) -> int:
        """Read the start tag at ``begin``; return the index of its ">"."""
        s = self.source
        i = begin + 1
        while _at(s, i) not in _SPACE and s[i] != ">":
            i += 1
        if _at(s, i) == "\0":
            raise TextError(f"Unclosed start tag at byte offset {self.offset(begin)}")
        tag = ascii_lower(s[begin + 1 : i])
        if tag not in _TAGS:
            raise TextError(f'Unsupported start tag "{tag}" at byte offset {self.offset(begin)}')
        argument = ""
        date = 0
        while _at(s, i) != ">":
            i = self.skip_spaces(i)
            if _at(s, i) == ">":
                break
            start = i
            while _at(s, i) not in _ATTRIBUTE_NAME_END:
                i += 1
            attribute = s[start:i]  # not lower-cased: HREF= is ignored
            if not attribute:
                raise TextError(
                    f'Empty attribute name in the tag "{tag}" at byte offset {self.offset(begin)}'
                )
            i = self.skip_spaces(i)
            if _at(s, i) != "=":
                if _at(s, i) == "\0":
                    raise TextError(
                        f'Unclosed start tag "{tag}" at byte offset {self.offset(begin)}'
                    )
                if tag == "blockquote" and attribute == "expandable":
                    argument = "1"
                continue
            i = self.skip_spaces(i + 1)
            if _at(s, i) == "\0":
                raise TextError(f'Unclosed start tag "{tag}" at byte offset {self.offset(begin)}')
            value, i = self.attribute_value(i, begin)
            if tag == "a" and attribute == "href":
                argument = value
            elif tag == "code" and attribute == "class" and value.startswith("language-"):
                argument = value[9:]
            elif tag == "span" and attribute == "class" and value.startswith("tg-"):
                argument = value[3:]
            elif (tag, attribute) in (("tg-emoji", "emoji-id"), ("tg-time", "format")):
                argument = value
            elif tag == "blockquote" and attribute == "expandable":
                argument = "1"
            elif tag == "tg-time" and attribute == "unix":
                date = to_integer(value, 32)
        if tag == "span" and argument != "spoiler":
            raise TextError(
                f'Tag "span" must have class "tg-spoiler" at byte offset {self.offset(begin)}'
            )
        self.open.append(_Open(tag, argument, date, self.utf16, len(self.out)))
        return i

    def end_tag(self, begin: int) -> int:
        """Read the end tag at ``begin``, add the entity it closes; return the index of ">"."""
        s = self.source
        if not self.open:
            raise TextError(f"Unexpected end tag at byte offset {self.offset(begin)}")
        i = begin + 2
        while _at(s, i) not in _SPACE and s[i] != ">":
            i += 1
        end_tag = ascii_lower(s[begin + 2 : i])
        i = self.skip_spaces(i)
        if _at(s, i) != ">":
            raise TextError(f"Unclosed end tag at byte offset {self.offset(begin)}")
        opened = self.open[-1]
        if end_tag and end_tag != opened.tag:  # "</>" closes whatever is open
            raise TextError(
                f"Unmatched end tag at byte offset {self.offset(begin)}, "
                f'expected "</{opened.tag}>", found "</{end_tag}>"'
            )
        if self.utf16 > opened.offset:
            self.add_entity(opened, self.utf16 - opened.offset)
        self.open.pop()
        return i

    def add_entity(self, opened: _Open, length: int) -> None:
        """The entity of a closed tag spanning ``length`` UTF-16 units; a ``pre`` and a
        ``code class="language-x"`` over the same span become one ``pre`` in language x."""
        tag, offset, entities = opened.tag, opened.offset, self.entities
        last = entities[-1] if entities else None
        same_span = last is not None and (last.offset, last.length) == (offset, length)
        if tag in _KINDS or tag == "span":
            entities.append(Entity(_KINDS.get(tag, "spoiler"), offset, length))
        elif tag == "tg-emoji":
            emoji_id = to_integer_safe(opened.argument, 64)
            if not emoji_id:
                raise TextError("Invalid custom emoji identifier specified")
            entities.append(Entity("custom_emoji", offset, length, custom_emoji_id=emoji_id))
        elif tag == "tg-time":
            try:
                flags = date_flags(opened.argument)
            except LinkError as exc:
                raise TextError(str(exc)) from None
            if opened.date > 0:
                entities.append(
                    Entity("date_time", offset, length, unix_time=opened.date, date_flags=flags)
                )
        elif tag == "a":
            url = opened.argument or "".join(self.out[opened.start :])
            user_id = link_user_id(url)
            if user_id:
                entities.append(Entity("text_mention", offset, length, user_id=user_id))
            elif url := checked_link(url):
                entities.append(Entity("text_link", offset, length, url=url))
        elif tag == "pre":
            if last is not None and same_span and last.kind == "code" and last.language:
                last.kind = "pre_code"  # <code class="language-x"><pre>...</pre></code>
            else:
                entities.append(Entity("pre", offset, length))
        elif tag == "code":
            if last is not None and same_span and last.kind == "pre" and opened.argument:
                last.kind, last.language = "pre_code", opened.argument
            else:
                entities.append(Entity("code", offset, length, language=opened.argument))
        else:  # blockquote
            kind = "expandable_blockquote" if opened.argument else "blockquote"
            entities.append(Entity(kind, offset, length))

    def parse(self) -> tuple[str, list[Entity]]:
        """parse_html: the text without its tags, character references decoded, and its
        entities; raises :class:`TextError` with tdlib's message."""
        s = self.source
        surrogate = False
        i = 0
        size = len(s)
        while i < size:
            ch = s[i]
            if ch == "&":
                code, after = _decode_entity(s, i)
                if code:
                    surrogate |= 0xD800 <= code <= 0xDFFF
                    self.out.append(chr(code))
                    self.utf16 += 2 if code > 0xFFFF else 1
                    i = after
                    continue
            if ch != "<":
                # Copy the run of plain text up to the next markup character at once.
                markup = _MARKUP.search(s, i + 1)
                j = markup.start() if markup else size
                chunk = s[i:j]
                self.out.append(chunk)
                self.utf16 += utf16_len(chunk)
                i = j
                continue
            i = self.start_tag(i) if _at(s, i + 1) != "/" else self.end_tag(i)
            i += 1
        if self.open:
            tag = self.open[-1].tag
            raise TextError(f'Can\'t find end tag corresponding to start tag "{tag}"')
        for entity in self.entities:
            if entity.kind == "code":
                entity.language = ""
        self.entities.sort(key=Entity.sort_key)
        if surrogate:
            raise TextError(_SURROGATES)
        return "".join(self.out), self.entities


def parse_html(source: str) -> tuple[str, list[Entity]]:
    """The visible text and entities of Bot API HTML, as tdlib's parse_html gives them.

    Raises :class:`~sponsorbot.simulator.entities.TextError` with tdlib's message (the Bot API
    answers it as ``Bad Request: can't parse entities: <message>``).
    """
    return _Parser(source).parse()
