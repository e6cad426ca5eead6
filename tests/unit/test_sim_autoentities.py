"""The entities the simulator adds by itself, against tdlib's find_entities
(td/telegram/MessageEntity.cpp). Each case names what Telegram does; many inputs are those of
tdlib's own tests (test/message_entities.cpp: mention, bot_command, hashtag, cashtag, tg_url,
url, is_email_address)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.simulator.autoentities import find_entities, is_email_address
from sponsorbot.simulator.entities import utf16_len


def found(text: str, kind: str | None = None) -> list[str]:
    """The pieces of ``text`` found (only those of ``kind`` if given)."""
    units = text.encode("utf-16-le")
    return [
        units[2 * e.offset : 2 * (e.offset + e.length)].decode("utf-16-le")
        for e in find_entities(text)
        if kind is None or e.kind == kind
    ]


CASES = [
    # mentions: @ plus 2 to 32 of [A-Za-z0-9_], not inside a word; 2-3 letters only for a few
    ("mention", "tdlib: a mention", " @mention ", ["@mention"]),
    ("mention", "tdlib: not inside a word", "no@mention нет@mention", []),
    ("mention", "tdlib: one letter is too short", "@n", []),
    ("mention", "tdlib: 33 characters is too long", "@abcdefghijklmnopqrstuvwxyz1234567", []),
    (
        "mention",
        "tdlib: short names only from a list",
        "@ya @gif @vid @cap @wiki",
        ["@gif", "@vid", "@wiki"],
    ),
    ("mention", "tdlib: @a@b", "@xxxxx@yyyyy @ttttt", ["@xxxxx", "@ttttt"]),
    # bot commands: / plus 1 to 64 of [A-Za-z0-9_], optionally @bot
    ("bot_command", "tdlib: a command", " /abc ", ["/abc"]),
    ("bot_command", "tdlib: with the bot's name", "/a@abc", ["/a@abc"]),
    ("bot_command", "tdlib: a name under 3 letters spoils it", "/a@b", []),
    ("bot_command", "tdlib: no command name", "/@bfdsa", []),
    ("bot_command", "tdlib: a path is no command", "/test/ a/b", []),
    ("bot_command", "common: /start with a payload", "/start abc123", ["/start"]),
    # hashtags: at least one letter, up to 256 characters, not followed by #
    ("hashtag", "tdlib: a hashtag", " #a ", ["#a"]),
    ("hashtag", "tdlib: any script", " #я ", ["#я"]),
    ("hashtag", "tdlib: digits only is no hashtag", " #123 #123a ", ["#123a"]),
    ("hashtag", "tdlib: ends before another #", "#a#b #c #d", ["#c", "#d"]),
    ("hashtag", "tdlib: with a chat name", "#test@abc #t@ab", ["#test@abc", "#t"]),
    ("hashtag", "tdlib: middle dot is a letter", "#te·st", ["#te·st"]),
    ("hashtag", "tdlib: stops at a symbol", "#a\u2122", ["#a"]),
    # cashtags: $ plus 1 to 8 capital letters (or 1INCH)
    ("cashtag", "tdlib: a cashtag", " $XYZ ", ["$XYZ"]),
    ("cashtag", "tdlib: lower case is none", "$abc $A", ["$A"]),
    ("cashtag", "tdlib: 9 letters is too many", "$ABCDEFGHJ", []),
    ("cashtag", "tdlib: 1INCH", "...$1INCH...", ["$1INCH"]),
    ("cashtag", "tdlib: $$ and letters around", " $$XYZ А$ABC $ABC1 ", []),
    # tg:// and ton:// links
    ("url", "tdlib: tg link", "tg://resolve", ["tg://resolve"]),
    ("url", "tdlib: a scheme inside a word", "stg://a", ["tg://a"]),
    ("url", "tdlib: bad path ends dropped", "tg://test/?.:;,('?!`", ["tg://test/"]),
    ("url", "tdlib: host stops at a dot", "tg://google.com", ["tg://google"]),
    # links and e-mail addresses
    ("url", "tdlib: bare domain", "telegram.org", ["telegram.org"]),
    ("url", "tdlib: inside brackets", "(telegram.org)", ["telegram.org"]),
    ("url", "tdlib: after a dot", ".telegram.org)", []),
    ("url", "tdlib: unknown TLD", "test.abd a.ab", []),
    ("url", "tdlib: country TLD", "'views.py'", ["views.py"]),
    ("url", "tdlib: trailing dots dropped", " telegram.org. ", ["telegram.org"]),
    (
        "url",
        "tdlib: with protocol",
        "Такой сайт: http://www.google.com или такой telegram.org ",
        ["http://www.google.com", "telegram.org"],
    ),
    (
        "url",
        "tdlib: query punctuation at the end dropped",
        "http://telegram.org/?asd=123#123.",
        ["http://telegram.org/?asd=123#123"],
    ),
    ("url", "tdlib: unknown protocol", "ftps://telegram.org sHTTP://telegram.org", []),
    (
        "url",
        "tdlib: protocol is case-insensitive",
        "hTtPs://telegram.org",
        ["hTtPs://telegram.org"],
    ),
    ("url", "tdlib: port", "google.com:65535 google.com:65536", ["google.com:65535", "google.com"]),
    ("url", "tdlib: IPv4", "127.0.0.1 127.0.0.256 1.0", ["127.0.0.1"]),
    ("url", "tdlib: unicode domain", "www.🤙.tk", ["www.🤙.tk"]),
    (
        "url",
        "tdlib: capital TLD only first letter is none",
        "telegram.Org telegram.ORG",
        ["telegram.ORG"],
    ),
    (
        "url",
        "tdlib: brackets balanced in the path",
        "http://test.google.com/?q=abc()}[]def",
        ["http://test.google.com/?q=abc()"],
    ),
    ("url", "tdlib: a look-alike of telegram.org", "teiegram.org/test", []),
    ("url", "tdlib: userinfo", "http://test@google.com", ["http://test@google.com"]),
    ("url", "tdlib: ellipsis ends the link", "https://t.me/abcdef…", ["https://t.me/abcdef"]),
    ("url", "tdlib: underscore before the TLD", "http://google_.com _.test.com", ["_.test.com"]),
    ("email", "tdlib: an e-mail address", "a.bc@c.com", ["a.bc@c.com"]),
    (
        "email",
        "tdlib: mailto: is not part of it",
        "Look mailto:test@example.com",
        ["test@example.com"],
    ),
    ("email", "tdlib: a bracket splits link and address", "https://a.de[bc@c.com", ["bc@c.com"]),
    ("email", "tdlib: two @ is none", "a@b@c.com", []),
]


@pytest.mark.parametrize(("kind", "case", "text", "expected"), CASES, ids=[c[1] for c in CASES])
def test_found_as_tdlib_finds(kind: str, case: str, text: str, expected: list[str]) -> None:
    assert found(text, kind) == expected


def test_overlapping_finds_keep_the_first_and_offsets_count_utf16() -> None:
    # tdlib: sorted by offset, then longer first; an overlapping later one is dropped.
    text = "🏟 /start@gate_bot see https://t.me/news #news $USD me@x.org @ann_lee"
    assert [(e.kind, e.offset, e.length) for e in find_entities(text)] == [
        ("bot_command", 3, 15),
        ("url", 23, 17),
        ("hashtag", 41, 5),
        ("cashtag", 47, 4),
        ("email", 52, 8),
        ("mention", 61, 8),
    ]
    assert find_entities("/help", bot_commands=False) == []


@pytest.mark.parametrize(
    ("address", "valid"),
    [
        ("security@telegram.org", True),
        ("A@a.a.a.ab", True),
        ("test@test.abd", True),  # tdlib: any 2-8 letter TLD for an address
        ("a.a.a.a.a.a.a.a.a.a.a.a@a.ab", False),  # tdlib: at most 11 parts before @
        ("a@a.a.a.a.a.a.a.ab", False),  # tdlib: at most 7 parts after @
        ("a@-b.ab", False),
        ("a@b.a1", False),
        ("telegram.org", False),
    ],
)
def test_email_address_as_tdlib_checks(address: str, valid: bool) -> None:
    assert is_email_address(address) is valid


@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("@/#$.:_-")))
def test_found_entities_are_sorted_disjoint_and_inside_the_text(text: str) -> None:
    entities = find_entities(text)
    size = utf16_len(text)
    end = 0
    for entity in entities:
        assert entity.offset >= end and entity.length > 0
        end = entity.offset + entity.length
    assert end <= size
