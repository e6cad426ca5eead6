"""Persian texts keep their Latin runs in one piece: every run of Latin letters (a /command, an
@handle, an amount's unit, "API") in a Persian text of the panel's catalogue or of the bot sits
inside a bidi isolate (LRI or FSI … PDI), and so do the bot's values that are Latin (hashes,
addresses, moments). Found over every text, not case by case: a new text that forgets one
fails here."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import sponsorbot.features
from sponsorbot.features import texts
from sponsorbot.features.calendar import FSI, LRI, PDI
from sponsorbot.features.texts_shop import SHOP_TEXTS
from sponsorbot.web.panel import i18n
from sponsorbot.web.panel.routes_shop_orders import _who

CATALOG = Path(i18n.__file__).resolve().parent.parent / "locale" / "fa" / "LC_MESSAGES"
# What a text holds that is not prose: tags, entities, placeholders (their values are checked
# apart), backslash escapes.
NOT_PROSE = re.compile(r"<[^>]*>|&[a-z#0-9]+;|%\(\w+\)[sd]|\{\w+\}")
OPENERS = frozenset({LRI, FSI, "\u2067"})
# The bot's placeholders whose values are Latin (or may be): each must be isolated too.
LATIN_VALUES = frozenset(
    {"hash", "address", "to", "expires", "due", "block_time", "title", "titles", "product"}
)
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def loose_latin(text: str) -> list[str]:
    """The Latin letters of `text` outside any isolate (tags and placeholders aside), and the
    problems of the isolates themselves (one left open, a PDI without an opener, an LRM)."""
    masked = NOT_PROSE.sub(lambda m: "\x00" * len(m.group()), text)
    found: list[str] = []
    depth = 0
    for ch in masked:
        if ch in OPENERS:
            depth += 1
        elif ch == PDI:
            if not depth:
                found.append("PDI without an opener")
            depth = max(depth - 1, 0)
        elif ch == "\u200e":
            found.append("LRM (isolates are the convention)")
        elif not depth and ("a" <= ch <= "z" or "A" <= ch <= "Z"):
            found.append(ch)
    if depth:
        found.append("isolate left open")
    return found


def loose_values(text: str) -> list[str]:
    """The Latin-valued placeholders of a bot text that stand outside any isolate."""
    found = []
    for match in PLACEHOLDER.finditer(text):
        if match.group(1) not in LATIN_VALUES:
            continue
        before = text[: match.start()]
        opened = sum(before.count(c) for c in OPENERS) - before.count(PDI)
        if opened <= 0:
            found.append(match.group(0))
    return found


def text_sources() -> Iterator[tuple[str, Mapping[str, str]]]:
    """Every module of the features that holds bot texts the way texts.py does (a dict with an
    "en" and a "fa" dict of strings), and the merged defaults themselves."""
    yield "texts.DEFAULTS", texts.DEFAULTS["fa"]
    seen = {id(texts.DEFAULTS["fa"])}
    for info in pkgutil.walk_packages(sponsorbot.features.__path__, "sponsorbot.features."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                isinstance(value, dict)
                and isinstance(value.get("fa"), dict)
                and isinstance(value.get("en"), dict)
                and value["fa"]
                and all(isinstance(v, str) for v in value["fa"].values())
                and id(value["fa"]) not in seen
            ):
                seen.add(id(value["fa"]))
                yield f"{info.name}.{name}", value["fa"]


def persian_catalog() -> Iterator[tuple[str, str]]:
    with (CATALOG / "messages.po").open("rb") as po:
        for message in read_po(po, locale="fa"):
            if not message.id:
                continue
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            for string in strings:
                yield str(message.id if isinstance(message.id, str) else message.id[0]), str(string)


def test_the_check_finds_what_the_review_found() -> None:
    assert loose_latin("وضعیت سفارش در /orders: کامل شده") == list("orders")
    assert loose_latin("با \u2066/orders\u2069 ببینید") == []
    assert loose_latin("\u200e@name یا سارا") == ["LRM (isolates are the convention)", *"name"]
    assert loose_latin("تا \u2066{due}") == ["isolate left open"]
    assert loose_latin("<b>سفارش</b> {title} <code>۱۲</code>") == []
    assert loose_latin("<code>Button - https://example.com</code>") == list("Buttonhttpsexamplecom")
    assert loose_values("تراکنش {hash} در حال بررسی") == ["{hash}"]
    assert loose_values("تراکنش \u2066{hash}\u2069 در حال بررسی") == []


def test_every_persian_message_of_the_panel_isolates_its_latin_runs() -> None:
    bad = {msgid: loose_latin(text) for msgid, text in persian_catalog() if loose_latin(text)}
    assert not bad, f"{len(bad)} Persian messages with Latin outside an isolate: {bad}"


def test_every_persian_bot_text_isolates_its_latin_runs_and_values() -> None:
    sources = dict(text_sources())
    assert any(v is SHOP_TEXTS["fa"] for v in sources.values())  # the walk finds them
    bad = {
        f"{source}[{key}]": loose_latin(text) + loose_values(text)
        for source, entries in sources.items()
        for key, text in entries.items()
        if loose_latin(text) or loose_values(text)
    }
    assert not bad, f"Persian bot texts with Latin outside an isolate: {bad}"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("@cinema_vault_bot", f"{FSI}@cinema_vault_bot{PDI}"),
        ("۱۲٬۳۴۵", "۱۲٬۳۴۵"),
        ("سارا", "سارا"),
    ],
)
def test_a_latin_value_in_a_persian_panel_sentence_is_isolated(value: str, expected: str) -> None:
    i18n.use_language("fa")
    try:
        assert i18n.isolate(value) == expected
    finally:
        i18n.use_language("en")
    assert i18n.isolate(value) == value  # English sentences are left as they are


def test_the_api_token_actor_of_a_persian_timeline_keeps_its_pieces_in_place() -> None:
    i18n.use_language("fa")
    try:
        label = _who("api:demo set-up", {})
    finally:
        i18n.use_language("en")
    assert label == f"توکن {LRI}API{PDI} «{FSI}demo set-up{PDI}»"
