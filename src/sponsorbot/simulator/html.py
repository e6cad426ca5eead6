"""HTML parse mode: turns Bot API HTML into plain text and entities, or fails like Telegram.

Offsets of entities are in UTF-16 code units, as the Bot API counts them; error positions are
byte offsets into the UTF-8 text, as the real server reports them.
"""

from __future__ import annotations

import re
from typing import Any

from sponsorbot.simulator.errors import ApiError, bad_request

_SIMPLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "a": "text_link",
    "span": "spoiler",
    "tg-emoji": "custom_emoji",
}
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY = re.compile(r"&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]+));")
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^<>]*)?)\s*>")
_ATTR = re.compile(r"""([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _parse_error(detail: str) -> ApiError:
    return bad_request(f"can't parse entities: {detail}")


def _byte_offset(source: str, index: int) -> int:
    return len(source[:index].encode())


def parse_html(source: str) -> tuple[str, list[dict[str, Any]]]:
    """Return the visible text and its entities, or raise the 400 Telegram would send."""
    out: list[str] = []
    out_len = 0  # UTF-16 length of what is in ``out``
    stack: list[tuple[str, int, dict[str, Any]]] = []
    entities: list[dict[str, Any]] = []
    i = 0
    n = len(source)
    while i < n:
        ch = source[i]
        if ch == "&":
            match = _ENTITY.match(source, i)
            decoded = _decode_entity(match) if match else None
            if decoded is None:
                raise _parse_error(
                    f"Character entity expected at byte offset {_byte_offset(source, i)}"
                )
            assert match is not None
            out.append(decoded)
            out_len += _utf16_len(decoded)
            i = match.end()
        elif ch == "<":
            match = _TAG.match(source, i)
            if match is None:
                raise _parse_error(
                    f"Unsupported start tag at byte offset {_byte_offset(source, i)}"
                )
            closing, name, attrs = match.group(1) == "/", match.group(2).lower(), match.group(3)
            if closing:
                if not stack:
                    raise _parse_error(
                        f"Unexpected end tag at byte offset {_byte_offset(source, i)}"
                    )
                open_name, start, entity = stack.pop()
                if open_name != name:
                    raise _parse_error(
                        f"Unmatched end tag at byte offset {_byte_offset(source, i)}, "
                        f'expected "</{open_name}>", found "</{name}>"'
                    )
                if out_len > start:
                    entity["offset"] = start
                    entity["length"] = out_len - start
                    entities.append(entity)
            else:
                stack.append((name, out_len, _open_entity(name, attrs, source, i)))
            i = match.end()
        else:
            # Copy the run of plain text up to the next markup character in one step.
            j = i
            while j < n and source[j] not in "&<":
                j += 1
            chunk = source[i:j]
            out.append(chunk)
            out_len += _utf16_len(chunk)
            i = j
    if stack:
        raise _parse_error(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _decode_entity(match: re.Match[str]) -> str | None:
    decimal, hexadecimal, name = match.groups()
    if name is not None:
        return _NAMED_ENTITIES.get(name)
    code = int(decimal) if decimal is not None else int(hexadecimal, 16)
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    return chr(code)


def _open_entity(name: str, attrs: str, source: str, index: int) -> dict[str, Any]:
    kind = _SIMPLE_TAGS.get(name)
    values = {
        m.group(1).lower(): m.group(2) or m.group(3) or m.group(4) or ""
        for m in _ATTR.finditer(attrs)
    }
    if kind is None or (name == "span" and values.get("class") != "tg-spoiler"):
        raise _parse_error(
            f'Unsupported start tag "{name}" at byte offset {_byte_offset(source, index)}'
        )
    entity: dict[str, Any] = {"type": kind}
    if name == "a":
        href = values.get("href", "")
        if not href:
            raise _parse_error(
                f"Can't find end of the URL at byte offset {_byte_offset(source, index)}"
            )
        if href.startswith("tg://user?id="):
            entity = {
                "type": "text_mention",
                "user": {"id": int(href[13:] or 0), "is_bot": False, "first_name": ""},
            }
        else:
            entity["url"] = href
    elif name == "blockquote" and "expandable" in attrs:
        entity["type"] = "expandable_blockquote"
    elif name == "pre" and values.get("language"):
        entity["language"] = values["language"]
    elif name == "tg-emoji":
        entity["custom_emoji_id"] = values.get("emoji-id", "")
    return entity
