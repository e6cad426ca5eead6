"""The simulator's MarkdownV2 and Markdown parse modes against tdlib's parse_markdown_v2 and
parse_markdown (td/telegram/MessageEntity.cpp).

Each case names what Telegram does; many MarkdownV2 inputs are those of tdlib's own test
(test/message_entities.cpp, TEST(MessageEntities, parse_markdown)).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.simulator.entities import TextError, utf16_len
from sponsorbot.simulator.markdown import parse_markdown, parse_markdown_v2
from tests.unit.test_sim_html import shape

RESERVED = "_*[]()~`>#+-=|{}.!"


def refusal(text: str, legacy: bool = False) -> str:
    with pytest.raises(TextError) as caught:
        (parse_markdown if legacy else parse_markdown_v2)(text)
    return str(caught.value)


@pytest.mark.parametrize("char", sorted(set("]()#+-=|{}.!")))
def test_v2_reserved_character_alone_is_refused_and_escaped_is_text(char: str) -> None:
    # tdlib: any of these outside an entity must be escaped
    assert (
        refusal(char)
        == f"Character '{char}' is reserved and must be escaped with the preceding '\\'"
    )
    assert parse_markdown_v2("\\" + char) == (char, [])


V2_ERRORS = [
    (
        "tdlib: italic never closed",
        "🏟 🏟_abacaba",
        "Can't find end of Italic entity at byte offset 9",
    ),
    (
        "tdlib: inner bold never closed",
        "🏟 🏟_abac * asd ",
        "Can't find end of Bold entity at byte offset 15",
    ),
    ("tdlib: code never closed", "🏟 🏟`", "Can't find end of Code entity at byte offset 9"),
    ("tdlib: pre never closed", "🏟 🏟```", "Can't find end of Pre entity at byte offset 9"),
    (
        "tdlib: pre with a language never closed",
        "🏟 🏟```a ",
        "Can't find end of PreCode entity at byte offset 9",
    ),
    ("tdlib: __ then _", "🏟 🏟__🏟 🏟_", "Can't find end of Italic entity at byte offset 20"),
    ("tdlib: _ then __", "🏟 🏟_🏟 🏟__", "Can't find end of Underline entity at byte offset 19"),
    (
        "tdlib: an escaped ) does not end the URL",
        "[telegram\\.org](asd\\)",
        "Can't find end of a URL at byte offset 16",
    ),
    (
        "tdlib: URL never closed",
        "[telegram\\.org](asd",
        "Can't find end of a URL at byte offset 16",
    ),
    (
        "tdlib: spoiler never closed",
        "🏟 🏟||test\\|",
        "Can't find end of Spoiler entity at byte offset 9",
    ),
    (
        "tdlib: a single |",
        "a|b",
        "Character '|' is reserved and must be escaped with the preceding '\\'",
    ),
    (
        "tdlib: ! must be escaped",
        "🏟 🏟!",
        "Character '!' is reserved and must be escaped with the preceding '\\'",
    ),
    (
        "tdlib: > only at a line start",
        "🏟 🏟>",
        "Character '>' is reserved and must be escaped with the preceding '\\'",
    ),
    (
        "tdlib: a dot must be escaped",
        "Hello.",
        "Character '.' is reserved and must be escaped with the preceding '\\'",
    ),
    (
        "tdlib: custom emoji without URL",
        "🏟 🏟![👍]",
        "The entity must contain a tg://emoji or tg://time URL",
    ),
    (
        "tdlib: custom emoji with a bad URL",
        "🏟 🏟![👍](t://emoji?id=1234)",
        "Invalid tg://emoji or tg://time URL specified",
    ),
    (
        "tdlib: custom emoji id with a leading zero",
        "![👍](tg://emoji?test=1231&id=025)",
        "Invalid tg://emoji or tg://time URL specified",
    ),
    (
        "tdlib: bold across quote lines",
        ">*b\n>ld \n>bo\nld*\nasd\ndef",
        "Can't find end of Bold entity at byte offset 1",
    ),
    (
        "tdlib: || inside a quote line",
        ">asd\n>q||ew\n||asdad",
        "Can't find end of Spoiler entity at byte offset 7",
    ),
]


@pytest.mark.parametrize(("case", "text", "error"), V2_ERRORS, ids=[c[0] for c in V2_ERRORS])
def test_v2_refused_as_tdlib_refuses(case: str, text: str, error: str) -> None:
    assert refusal(text) == error


V2_PARSED = [
    ("tdlib: empty", "", "", []),
    ("tdlib: escaped backslash", "\\\\", "\\", []),
    ("tdlib: any ASCII may be escaped", "\\a\\b\\1\\➡️\\", "ab1\\➡️\\", []),
    ("tdlib: empty code makes no entity", "🏟 🏟``", "🏟 🏟", []),
    ("tdlib: escapes inside italic", "🏟 🏟_abac \\* asd _", "🏟 🏟abac * asd ", [("italic", 5, 11)]),
    ("tdlib: bold inside italic", "🏟 🏟_🏟 *🏟*_", "🏟 🏟🏟 🏟", [("italic", 5, 5), ("bold", 8, 2)]),
    (
        "tdlib: underline inside italic",
        "🏟 🏟_🏟 __🏟___",
        "🏟 🏟🏟 🏟",
        [("italic", 5, 5), ("underline", 8, 2)],
    ),
    (
        "tdlib: italic inside underline",
        "🏟 🏟__🏟 _🏟_ __",
        "🏟 🏟🏟 🏟 ",
        [("underline", 5, 6), ("italic", 8, 2)],
    ),
    ("tdlib: code ends at the first backtick", "🏟 🏟`🏟 🏟```", "🏟 🏟🏟 🏟", [("code", 5, 5)]),
    ("tdlib: the word after ``` is a language", "🏟 🏟```🏟 🏟```", "🏟 🏟 🏟", [("pre_code", 5, 3, "🏟")]),
    (
        "tdlib: one newline after the language is dropped",
        "🏟 🏟```🏟\n🏟```",
        "🏟 🏟🏟",
        [("pre_code", 5, 2, "🏟")],
    ),
    ("tdlib: \\r\\n counts as one newline", "🏟 🏟```🏟\r\n🏟```", "🏟 🏟🏟", [("pre_code", 5, 2, "🏟")]),
    ("tdlib: only one newline is dropped", "🏟 🏟```🏟\n\n🏟```", "🏟 🏟\n🏟", [("pre_code", 5, 3, "🏟")]),
    (
        "common: fenced python block",
        "```python\nprint(1)\n```",
        "print(1)\n",
        [("pre_code", 0, 9, "python")],
    ),
    ("tdlib: spoiler", "||test||", "test", [("spoiler", 0, 4)]),
    ("tdlib: strikethrough", "~x~", "x", [("strikethrough", 0, 1)]),
    ("tdlib: reserved characters are text in code", "`_* *_`", "_* *_", [("code", 0, 5)]),
    ("tdlib: empty link text, no entity", "[](telegram.org)", "", []),
    ("tdlib: link", "[ ](telegram.org)", " ", [("text_link", 0, 1, "http://telegram.org/")]),
    ("tdlib: not a URL, no link", "[ ](as)", " ", []),
    (
        "tdlib: link text is the URL",
        "[telegram\\.org]",
        "telegram.org",
        [("text_link", 0, 12, "http://telegram.org/")],
    ),
    (
        "tdlib: escapes in the URL",
        "[telegram\\.org](https://telegram.dog?\\\\\\()",
        "telegram.org",
        [("text_link", 0, 12, "https://telegram.dog/?\\(")],
    ),
    (
        "tdlib: tg:user?id= is a mention",
        "[telegram\\.org](tg:user?id=123456)",
        "telegram.org",
        [("text_mention", 0, 12, 123456)],
    ),
    (
        "tdlib: custom emoji",
        "🏟 🏟![👍](TG://EMoJI/?test=1231&id=25#id=32)a",
        "🏟 🏟👍a",
        [("custom_emoji", 5, 2, 25)],
    ),
    (
        "tdlib: tg://time",
        "🏟 🏟![👍](TG://TiME/?test=1231&format=Wt&unix=25#unix=32)a",
        "🏟 🏟👍a",
        [("date_time", 5, 2, (25, 34))],
    ),
    ("tdlib: quote lines", "> \n> \n>", " \n \n", [("blockquote", 0, 4)]),
    (
        "tdlib: quote in the middle",
        "abc\n> \n> \n>\ndef",
        "abc\n \n \n\ndef",
        [("blockquote", 4, 5)],
    ),
    ("tdlib: > alone quotes nothing", ">", "", []),
    (
        "tdlib: bold in a quote",
        ">*b\n>ld \n>bo\n>ld*\nasd\ndef",
        "b\nld \nbo\nld\nasd\ndef",
        [("blockquote", 0, 12), ("bold", 0, 11)],
    ),
    (
        "tdlib: || at a quote's end expands it",
        ">asd\n>q||e||w||\nasdad",
        "asd\nqew\nasdad",
        [("expandable_blockquote", 0, 8), ("spoiler", 5, 1)],
    ),
    (
        "tdlib: a spoiler ending the quote",
        ">asd\n>q||ew||\nasdad",
        "asd\nqew\nasdad",
        [("blockquote", 0, 8), ("spoiler", 5, 2)],
    ),
    (
        "tdlib: expandable quote at the text end",
        ">asd\r\n>q||e||w||",
        "asd\r\nqew",
        [("expandable_blockquote", 0, 8), ("spoiler", 6, 1)],
    ),
]


@pytest.mark.parametrize(
    ("case", "text", "visible", "entities"), V2_PARSED, ids=[c[0] for c in V2_PARSED]
)
def test_v2_parsed_as_tdlib_parses(
    case: str, text: str, visible: str, entities: list[tuple[object, ...]]
) -> None:
    got, found = parse_markdown_v2(text)
    assert (got, shape(found)) == (visible, entities)


LEGACY = [
    (
        "tdlib: bold, italic, code",
        "*b* _i_ `c`",
        "b i c",
        [("bold", 0, 1), ("italic", 2, 1), ("code", 4, 1)],
    ),
    ("tdlib: dots and dashes need no escape", "v1.2 - ok!", "v1.2 - ok!", []),
    ("tdlib: escapes only for _*`[", "\\_\\*\\`\\[\\.", "_*`[\\.", []),
    ("tdlib: nothing is escaped inside an entity", "*a\\*", "a\\", [("bold", 0, 2)]),
    ("tdlib: a link", "[x](http://a.com)", "x", [("text_link", 0, 1, "http://a.com/")]),
    (
        "tdlib: a link without ) takes the rest",
        "[x](http://a.com",
        "x",
        [("text_link", 0, 1, "http://a.com/")],
    ),
    ("tdlib: pre with a language", "```py\nx```", "x", [("pre_code", 0, 1, "py")]),
    ("tdlib: tg://user?id= is a mention", "[u](tg://user?id=7)", "u", [("text_mention", 0, 1, 7)]),
    ("tdlib: empty entity, the URL stays text", "[](http://a.com)", "(http://a.com)", []),
    (
        "tdlib: [text] links to the text read back from overwritten bytes",
        "[example.com]",
        "example.com",
        [("text_link", 0, 11, "http://xample.comm/")],
    ),
]


@pytest.mark.parametrize(
    ("case", "text", "visible", "entities"), LEGACY, ids=[c[0] for c in LEGACY]
)
def test_legacy_markdown_parsed_as_tdlib_parses(
    case: str, text: str, visible: str, entities: list[tuple[object, ...]]
) -> None:
    got, found = parse_markdown(text)
    assert (got, shape(found)) == (visible, entities)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("*open", "Can't find end of the entity starting at byte offset 0"),
        ("🏟 _open", "Can't find end of the entity starting at byte offset 5"),
        ("```py\nno end``", "Can't find end of the entity starting at byte offset 0"),
    ],
)
def test_legacy_markdown_refused_as_tdlib_refuses(text: str, error: str) -> None:
    # tdlib: legacy Markdown has one error, at the byte where the open entity began
    assert refusal(text, legacy=True) == error


def escape_v2(text: str) -> str:
    return "".join("\\" + c if c in RESERVED or c == "\\" else c for c in text)


@given(st.text())
def test_v2_escaped_plain_text_comes_back_unchanged(text: str) -> None:
    assert parse_markdown_v2(escape_v2(text)) == (text, [])


MARKS = st.sampled_from(["*", "_", "__", "~", "||", "`"])


@given(st.lists(st.tuples(MARKS, st.text(min_size=1, max_size=6))))
def test_v2_entities_lie_within_the_text(pieces: list[tuple[str, str]]) -> None:
    # Marks around non-empty text, apart: "_" + "" + "_" would be an unclosed "__".
    source = " ".join(f"{mark}{escape_v2(body)}{mark}" for mark, body in pieces)
    visible, entities = parse_markdown_v2(source)
    size = utf16_len(visible)
    assert all(e.offset >= 0 and e.length > 0 and e.offset + e.length <= size for e in entities)
