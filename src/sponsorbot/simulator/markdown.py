"""MarkdownV2 and legacy Markdown parse modes: text and entities, or Telegram's refusal.

Read in tdlib's ``parse_markdown_v2`` and ``parse_markdown`` (td/telegram/MessageEntity.cpp) and
written again. MarkdownV2 reserves ``_*[]()~`>#+-=|{}.!`` outside code (each must be escaped
with ``\\``) and knows ``*bold*``, ``_italic_``, ``__underline__``, ``~strike~``, ``||spoiler||``,
`` `code` ``, fenced ``pre`` with a language, ``[text](url)``, ``![emoji](tg://emoji?id=N)``,
``![time](tg://time?unix=N)`` and ``>`` blockquotes (expandable when they end with ``||``).
Legacy Markdown knows only ``*bold*``, ``_italic_``, `` `code` ``, fenced pre and links, and
escapes nothing inside an entity. Offsets count UTF-16 code units, error positions bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from sponsorbot.simulator.entities import Entity, TextError
from sponsorbot.simulator.html import byte_offset
from sponsorbot.simulator.textlinks import (
    LinkError,
    checked_link,
    link_custom_emoji_id,
    link_formatted_date,
    link_user_id,
)

_SPACE = frozenset(" \t\r\n\v\0")  # tdlib's is_space
_RESERVED = frozenset("_*[]()~`>#+-=|{}.!\n")
# The names tdlib prints for entity types in "Can't find end of <name> entity".
_NAMES = {
    "bold": "Bold",
    "italic": "Italic",
    "underline": "Underline",
    "strikethrough": "Strikethrough",
    "spoiler": "Spoiler",
    "code": "Code",
    "pre": "Pre",
    "pre_code": "PreCode",
    "text_link": "TextUrl",
    "custom_emoji": "CustomEmoji",
    "blockquote": "BlockQuote",
}
_SINGLE = {"*": "bold", "~": "strikethrough", "[": "text_link"}


def _at(text: str, i: int) -> str:
    return text[i] if i < len(text) else "\0"


def _utf16(ch: str) -> int:
    return 2 if ord(ch) > 0xFFFF else 1


def _escapable(ch: str) -> bool:
    """MarkdownV2 escapes any ASCII character but NUL and DEL with a backslash."""
    return 0 < ord(ch) <= 126


def _reserved(ch: str) -> TextError:
    return TextError(f"Character '{ch}' is reserved and must be escaped with the preceding '\\'")


def _language_end(text: str, i: int) -> int:
    while _at(text, i) not in _SPACE and text[i] != "`":
        i += 1
    return i


def _skip_first_newline(text: str, i: int) -> int:
    """A fenced block drops one line break (\\n, \\r, \\r\\n or \\n\\r) after its opening."""
    if _at(text, i) in "\r\n":
        pair = _at(text, i + 1) in "\r\n" and text[i] != _at(text, i + 1)
        return i + (2 if pair else 1)
    return i


def parse_markdown(source: str) -> tuple[str, list[Entity]]:
    """Legacy Markdown, as tdlib's parse_markdown reads it; raises
    :class:`~sponsorbot.simulator.entities.TextError` with tdlib's message."""
    text = source
    size = len(text)
    out: list[str] = []
    entities: list[Entity] = []
    utf16 = 0
    i = 0
    while i < size:
        c = text[i]
        if c == "\\" and _at(text, i + 1) in "_*`[":
            i += 1
            out.append(text[i])
            utf16 += 1
            i += 1
            continue
        if c not in "_*`[":
            out.append(c)
            utf16 += _utf16(c)
            i += 1
            continue
        begin = i
        end_character = "]" if c == "[" else c
        is_pre = False
        language = ""
        i += 1
        if c == "`" and _at(text, i) == "`" and _at(text, i + 1) == "`":
            i += 2
            is_pre = True
            language_end = _language_end(text, i)
            if i != language_end and language_end < size and text[language_end] != "`":
                language = text[i:language_end]
                i = language_end
            i = _skip_first_newline(text, i)
        start = len(out)
        entity_offset = utf16
        while i < size and (
            text[i] != end_character
            or (is_pre and not (_at(text, i + 1) == "`" and _at(text, i + 2) == "`"))
        ):
            out.append(text[i])
            utf16 += _utf16(text[i])
            i += 1
        if i == size:
            raise TextError(
                f"Can't find end of the entity starting at byte offset {byte_offset(source, begin)}"
            )
        if entity_offset != utf16:
            length = utf16 - entity_offset
            if c == "_":
                entities.append(Entity("italic", entity_offset, length))
            elif c == "*":
                entities.append(Entity("bold", entity_offset, length))
            elif c == "[":
                if _at(text, i + 1) != "(":
                    url = _own_url(source, begin, out, start)
                else:
                    i += 2
                    close = text.find(")", i)
                    close = size if close < 0 else close
                    url, i = text[i:close], close
                entities.extend(_link(url, entity_offset, length))
            elif is_pre:
                kind = "pre_code" if language else "pre"
                entities.append(Entity(kind, entity_offset, length, language=language))
            else:
                entities.append(Entity("code", entity_offset, length))
        if is_pre:
            i += 2
        i += 1
    return "".join(out), entities


def _own_url(source: str, begin: int, out: list[str], start: int) -> str:
    """The URL of ``[text]`` without ``(url)`` in legacy Markdown.

    tdlib writes the result over the source as it reads it and then takes the URL from the
    source positions of the text, part of which it has already overwritten: each character
    dropped before (the ``[`` at least) shifts what it reads, so ``[example.com]`` at the start
    of a text links to ``http://xample.comm/``. Same bytes here; if they are not UTF-8 there is
    no link.
    """
    content = "".join(out[start:]).encode()
    dropped = byte_offset(source, begin) + 1 - len("".join(out[:start]).encode())
    if dropped < len(content):
        content = content[dropped:] + content[len(content) - dropped :]
    try:
        return content.decode()
    except UnicodeDecodeError:
        return ""


def _link(url: str, offset: int, length: int) -> list[Entity]:
    """A mention for ``tg://user?id=N``, a link for a valid URL, else nothing."""
    user_id = link_user_id(url)
    if user_id:
        return [Entity("text_mention", offset, length, user_id=user_id)]
    url = checked_link(url)
    return [Entity("text_link", offset, length, url=url)] if url else []


@dataclass(slots=True)
class _Open:
    kind: str
    argument: str
    offset: int
    """UTF-16 offset in the output where the entity begins."""
    source_index: int
    """Index in the source of its opening mark (printed as a byte offset in errors)."""
    start: int
    """Index in the output where its text begins."""


class _V2:
    def __init__(self, source: str) -> None:
        self.text = source
        self.out: list[str] = []
        self.utf16 = 0
        self.entities: list[Entity] = []
        self.open: list[_Open] = []
        self.have_blockquote = False
        self.can_start_blockquote = True

    def unclosed(self, opened: _Open) -> TextError:
        """tdlib's error for an entity still open at the end of the text."""
        return TextError(
            f"Can't find end of {_NAMES[opened.kind]} entity at byte offset "
            f"{byte_offset(self.text, opened.source_index)}"
        )

    def is_end(self, i: int) -> bool:
        """Whether the reserved character at ``i`` closes the innermost open entity."""
        if not self.open:
            return False
        text, c = self.text, self.text[i]
        if self.have_blockquote and c == "\n" and _at(text, i + 1) != ">":
            return True
        kind = self.open[-1].kind
        after = _at(text, i + 1)
        if kind == "italic":
            return c == "_" and after != "_"
        if kind == "underline":
            return c == "_" and after == "_"
        if kind in ("pre", "pre_code"):
            return c == "`" and after == "`" and _at(text, i + 2) == "`"
        if kind == "spoiler":
            return c == "|" and after == "|"
        closing = {"bold": "*", "code": "`", "strikethrough": "~"}.get(kind, "]")
        return kind != "blockquote" and c == closing

    def begin(self, i: int) -> int:
        """Open the entity whose mark is at ``i``; return the index of the mark's last char."""
        text, c = self.text, self.text[i]
        mark = i
        argument = ""
        after = _at(text, i + 1)
        if c == "_":
            kind = "underline" if after == "_" else "italic"
            i += after == "_"
        elif c in _SINGLE:
            kind = _SINGLE[c]
        elif c == "|" and after == "|":
            kind, i = "spoiler", i + 1
        elif c == "`" and after == "`" and _at(text, i + 2) == "`":
            i += 3
            kind = "pre"
            language_end = _language_end(text, i)
            if i != language_end and language_end < len(text) and text[language_end] != "`":
                kind, argument, i = "pre_code", text[i:language_end], language_end
            i = _skip_first_newline(text, i) - 1
        elif c == "`":
            kind = "code"
        elif c == "!" and after == "[":
            kind, i = "custom_emoji", i + 1
        elif c == "\n":
            self.utf16 += 1
            self.out.append("\n")
            self.can_start_blockquote = True
            return i
        elif c == ">" and self.can_start_blockquote:
            if self.have_blockquote:
                return i  # the ">" that continues the quote on a new line
            kind = "blockquote"
            self.have_blockquote = True
        else:
            raise _reserved(c)
        self.open.append(_Open(kind, argument, self.utf16, mark, len(self.out)))
        return i

    def url(self, i: int) -> tuple[str, int]:
        """The URL in ``(...)`` starting at ``i`` (backslash escapes removed) and the index of
        its ")"."""
        text = self.text
        begin = i
        chars: list[str] = []
        while i < len(text) and text[i] != ")":
            if text[i] == "\\" and _escapable(_at(text, i + 1)):
                chars.append(text[i + 1])
                i += 2
                continue
            chars.append(text[i])
            i += 1
        if _at(text, i) != ")":
            raise TextError(f"Can't find end of a URL at byte offset {byte_offset(text, begin)}")
        return "".join(chars), i

    def end(self, i: int) -> int:
        """Close the innermost entity at the mark ``i``; return the index of the mark's end."""
        text, c = self.text, self.text[i]
        opened = self.open[-1]
        kind = opened.kind
        if c == "\n" and kind != "blockquote":
            # Only "||" right before the line break may end a quote, making it expandable.
            last_out = self.out[-1][-1:] if self.out else ""
            spoiler_at_end = opened.source_index == i - 2 or (
                opened.source_index == i - 3 and last_out == "\r"
            )
            if kind != "spoiler" or not spoiler_at_end:
                raise self.unclosed(opened)
            self.open.pop()
            opened = self.open[-1]
            if opened.kind != "blockquote":
                raise self.unclosed(opened)
            kind = "expandable_blockquote"
        skip = self.utf16 == opened.offset
        entity: Entity | None = None
        if kind in ("underline", "spoiler"):
            i += 1
        elif kind in ("pre", "pre_code"):
            i += 2
        elif kind == "text_link":
            if _at(text, i + 1) != "(":
                url = "".join(self.out[opened.start :])
            else:
                url, i = self.url(i + 2)
            found = _link(url, opened.offset, self.utf16 - opened.offset)
            entity = found[0] if found else None
            skip = skip or entity is None
        elif kind == "custom_emoji":
            if _at(text, i + 1) != "(":
                raise TextError("The entity must contain a tg://emoji or tg://time URL")
            url, i = self.url(i + 2)
            entity = _emoji_or_time(url, opened.offset, self.utf16 - opened.offset)
        elif kind in ("blockquote", "expandable_blockquote"):
            self.have_blockquote = False
            self.out.append(text[i])
            self.can_start_blockquote = True
            self.utf16 += 1
            skip = False
        if not skip:
            length = self.utf16 - opened.offset
            if entity is None:
                entity = Entity(kind, opened.offset, length, language=opened.argument)
            self.entities.append(entity)
        self.open.pop()
        return i

    def parse(self) -> tuple[str, list[Entity]]:
        """parse_markdown_v2: the text without markup and its entities; raises
        :class:`TextError` with tdlib's message."""
        text = self.text
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\\" and _escapable(_at(text, i + 1)):
                i += 1
                self.utf16 += 1
                self.out.append(text[i])
                if text[i] != "\r":
                    self.can_start_blockquote = text[i] == "\n"
                i += 1
                continue
            in_code = bool(self.open) and self.open[-1].kind in ("code", "pre", "pre_code")
            if c != "`" if in_code else c not in _RESERVED:
                self.utf16 += _utf16(c)
                if c != "\r":
                    self.can_start_blockquote = False
                self.out.append(c)
                i += 1
                continue
            i = (self.end(i) if self.is_end(i) else self.begin(i)) + 1
        self.close_quote_at_end()
        if self.open:
            raise self.unclosed(self.open[-1])
        self.entities.sort(key=Entity.sort_key)
        return "".join(self.out), self.entities

    def close_quote_at_end(self) -> None:
        """A blockquote open at the end of the text ends there (expandable after "||")."""
        if not self.have_blockquote:
            return
        kind = "blockquote"
        top = self.open[-1]
        if top.kind == "spoiler" and top.source_index == len(self.text) - 2:
            self.open.pop()
            kind = "expandable_blockquote"
        top = self.open[-1]
        if top.kind == "blockquote":
            self.have_blockquote = False
            if self.utf16 != top.offset:
                self.entities.append(Entity(kind, top.offset, self.utf16 - top.offset))
            self.open.pop()


def _emoji_or_time(url: str, offset: int, length: int) -> Entity:
    try:
        emoji_id = link_custom_emoji_id(url)
        return Entity("custom_emoji", offset, length, custom_emoji_id=emoji_id)
    except LinkError:
        pass
    try:
        date, flags = link_formatted_date(url)
    except LinkError:
        raise TextError("Invalid tg://emoji or tg://time URL specified") from None
    return Entity("date_time", offset, length, unix_time=date, date_flags=flags)


def parse_markdown_v2(source: str) -> tuple[str, list[Entity]]:
    """MarkdownV2, as tdlib's parse_markdown_v2 reads it; raises
    :class:`~sponsorbot.simulator.entities.TextError` with tdlib's message."""
    return _V2(source).parse()
