"""The simulator's HTML parse mode against tdlib's parse_html (td/telegram/MessageEntity.cpp).

Each case names what Telegram does; many inputs are those of tdlib's own test
(test/message_entities.cpp, TEST(MessageEntities, parse_html)). Offsets count UTF-16 code units
("🏟" counts 2, "➡️" is two characters of which the first counts 1), error positions UTF-8 bytes.
"""

from __future__ import annotations

import html

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.simulator.entities import Entity, TextError, utf16_len
from sponsorbot.simulator.html import parse_html


def shape(entities: list[Entity]) -> list[tuple[object, ...]]:
    """Entities as (kind, offset, length) plus the value their kind carries."""
    out: list[tuple[object, ...]] = []
    for e in entities:
        extra = {
            "text_link": e.url,
            "pre_code": e.language,
            "text_mention": e.user_id,
            "custom_emoji": e.custom_emoji_id,
            "date_time": (e.unix_time, e.date_flags),
        }.get(e.kind)
        out.append(
            (e.kind, e.offset, e.length) if extra is None else (e.kind, e.offset, e.length, extra)
        )
    return out


def refusal(text: str) -> str:
    with pytest.raises(TextError) as caught:
        parse_html(text)
    return str(caught.value)


SURROGATE = (
    "Text contains invalid Unicode characters after decoding HTML entities, "
    "check for unmatched surrogate code units"
)

ERRORS = [
    ("tdlib: a decoded lone surrogate is refused", "&#57311;", SURROGATE),
    ("tdlib: the ; is optional, still a surrogate", "&#xDFDF", SURROGATE),
    ("tdlib: even a decoded surrogate pair is refused", "&#55357;&#56832;", SURROGATE),
    ("tdlib: tag never closed", "🏟 🏟&lt;<abacaba", "Unclosed start tag at byte offset 13"),
    ("tdlib: a < at the very end", "a <", "Unclosed start tag at byte offset 2"),
    (
        "tdlib: unknown tag, offset in bytes",
        "🏟 🏟&lt;<abac aba>",
        'Unsupported start tag "abac" at byte offset 13',
    ),
    ("tdlib: a bare < is a start tag", "1 < 2", 'Unsupported start tag "" at byte offset 2'),
    ("tdlib: <br> is not supported", "a<br>b", 'Unsupported start tag "br" at byte offset 1'),
    (
        "tdlib: attribute without a name",
        "🏟 🏟&lt;<i   =aba>",
        'Empty attribute name in the tag "i" at byte offset 13',
    ),
    (
        "tdlib: a self-closing slash is an empty attribute name",
        "<b />",
        'Empty attribute name in the tag "b" at byte offset 0',
    ),
    (
        "tdlib: an attribute without value, tag left open",
        "🏟 🏟&lt;<i    aba>",
        'Can\'t find end tag corresponding to start tag "i"',
    ),
    (
        "tdlib: text ends after =",
        "🏟 🏟&lt;<i    aba  =  ",
        'Unclosed start tag "i" at byte offset 13',
    ),
    (
        "tdlib: an unquoted value is a name token",
        "🏟 🏟&lt;<i    aba  =  190azAz-.,",
        "Unexpected end of name token at byte offset 27",
    ),
    (
        "tdlib: unquoted href=https://... is refused at the colon",
        "<a href=https://t.me/news>x</a>",
        "Unexpected end of name token at byte offset 8",
    ),
    (
        "tdlib: quoted value never closed",
        '🏟 🏟&lt;<i    aba  =  "&lt;&gt;&quot;>',
        "Unclosed start tag at byte offset 13",
    ),
    ("tdlib: end tag with nothing open", "🏟 🏟&lt;</", "Unexpected end tag at byte offset 13"),
    ("tdlib: end tag after all closed", "🏟 🏟&lt;<b></b></", "Unexpected end tag at byte offset 20"),
    ("tdlib: end tag never closed", "🏟 🏟&lt;<i>a</i   ", "Unclosed end tag at byte offset 17"),
    (
        "tdlib: wrong end tag",
        "🏟 🏟&lt;<i>a</em   >",
        'Unmatched end tag at byte offset 17, expected "</i>", found "</em>"',
    ),
    (
        "tdlib: crossing tags",
        "<b>x<i>y</b></i>",
        'Unmatched end tag at byte offset 8, expected "</i>", found "</b>"',
    ),
    ("tdlib: unclosed tag", "<b>open", 'Can\'t find end tag corresponding to start tag "b"'),
    (
        "tdlib: a span must be a spoiler",
        "<span>x</span>",
        'Tag "span" must have class "tg-spoiler" at byte offset 0',
    ),
    (
        "tdlib: a span of another class",
        'x<span class="bold">y</span>',
        'Tag "span" must have class "tg-spoiler" at byte offset 1',
    ),
    (
        "tdlib: custom emoji id must be a canonical non-zero integer",
        '<tg-emoji emoji-id="012">x</tg-emoji>',
        "Invalid custom emoji identifier specified",
    ),
    (
        "tdlib: tg-time with r and t mixed",
        '<tg-time unix="12345" format="rt">x</tg-time>',
        "Invalid date format used",
    ),
    (
        "tdlib: tg-time with an unknown letter",
        '<tg-time unix="12345" format="ts">x</tg-time>',
        "Invalid date format used",
    ),
    (
        "tdlib: the surrogate check comes last",
        "&#xD800;<b>",
        'Can\'t find end tag corresponding to start tag "b"',
    ),
]


@pytest.mark.parametrize(("case", "text", "error"), ERRORS, ids=[c[0] for c in ERRORS])
def test_html_refused_as_tdlib_refuses(case: str, text: str, error: str) -> None:
    assert refusal(text) == error


PARSED = [
    ("tdlib: empty text", "", "", []),
    (
        "tdlib: only named entities lt gt amp quot",
        "&ge;&lt;&gt;&amp;&quot;&laquo;",
        '&ge;<>&"&laquo;',
        [],
    ),
    ("tdlib: unknown named entity is literal", "&Or;&nbsp;", "&Or;&nbsp;", []),
    ("tdlib: a bare & is literal text", "Tom & Jerry", "Tom & Jerry", []),
    ("tdlib: &lt without ; is decoded", "1 &lt 2", "1 < 2", []),
    ("tdlib: &ltx; is literal", "&ltx;", "&ltx;", []),
    ("tdlib: names are case-sensitive", "&LT;", "&LT;", []),
    ("tdlib: numeric references, ; optional", "&#65;&#x41;&#65&#x41", "AAAA", []),
    ("tdlib: upper-case X is literal", "&#X41;", "&#X41;", []),
    (
        "tdlib: too long a reference is literal",
        "&#12345678;&#x0000041;",
        "&#12345678;&#x0000041;",
        [],
    ),
    ("tdlib: U+10FFFF itself is refused", "&#x10FFFF;", "&#x10FFFF;", []),
    ("tdlib: italic after emoji", "➡️ ➡️<i>➡️ ➡️</i>", "➡️ ➡️➡️ ➡️", [("italic", 5, 5)]),
    ("tdlib: em", "➡️ ➡️<em>➡️ ➡️</em>", "➡️ ➡️➡️ ➡️", [("italic", 5, 5)]),
    ("tdlib: strong", "<strong>x</strong>", "x", [("bold", 0, 1)]),
    ("tdlib: ins", "<ins>x</ins>", "x", [("underline", 0, 1)]),
    (
        "tdlib: strike and del",
        "<strike>x</strike><del>y</del>",
        "xy",
        [("strikethrough", 0, 1), ("strikethrough", 1, 1)],
    ),
    ("tdlib: upper-case tags", "<B>x</B>", "x", [("bold", 0, 1)]),
    ("tdlib: </> closes what is open", "<b>x</>", "x", [("bold", 0, 1)]),
    ("tdlib: </ > with spaces", "🏟 🏟&lt;<i>a</    >", "🏟 🏟<a", [("italic", 6, 1)]),
    ("tdlib: an empty tag makes no entity", "🏟 🏟&lt;<b></b>", "🏟 🏟<", []),
    (
        "tdlib: attributes are skipped",
        "🏟 🏟<i>🏟 &gt;<b aba   =   caba>&lt🏟</b></i>",
        "🏟 🏟🏟 ><🏟",
        [("italic", 5, 7), ("bold", 9, 3)],
    ),
    ("tdlib: span tg-spoiler", '<span class = "tg-spoiler">x</span>', "x", [("spoiler", 0, 1)]),
    ("tdlib: tg-spoiler", "<tg-spoiler>x</tg-spoiler>", "x", [("spoiler", 0, 1)]),
    (
        "tdlib: unquoted link is lower-cased",
        "<a href=telegram.org>\t</a>",
        "\t",
        [("text_link", 0, 1, "http://telegram.org/")],
    ),
    (
        "tdlib: quoted href, query kept",
        "<a   href=  'telegram.org?&lt;'   > </a>",
        " ",
        [("text_link", 0, 1, "http://telegram.org/?<")],
    ),
    ("tdlib: <a> without href and not a URL", "<a> </a>", " ", []),
    ('tdlib: <a href=""> is accepted, no link', '<a href="">x</a>', "x", []),
    (
        "tdlib: <a> without href links its text",
        "<a>telegram.org</a>",
        "telegram.org",
        [("text_link", 0, 12, "http://telegram.org/")],
    ),
    ("tdlib: an invalid URL makes no link", '<a href="not a url">x</a>', "x", []),
    (
        "tdlib: tg://user?id= is a mention",
        '<a href="tg://user?id=123">u</a>',
        "u",
        [("text_mention", 0, 1, 123)],
    ),
    (
        "tdlib: an id past 2^40 is a tg link",
        '<a href="tg://user?id=2199023255552">u</a>',
        "u",
        [("text_link", 0, 1, "tg://user?id=2199023255552")],
    ),
    ("tdlib: pre", "🏟 🏟&lt;<pre  >🏟 🏟&lt;</>", "🏟 🏟<🏟 🏟<", [("pre", 6, 6)]),
    (
        "tdlib: pre code without language is two",
        "<pre><code>x</code></pre>",
        "x",
        [("pre", 0, 1), ("code", 0, 1)],
    ),
    (
        "tdlib: pre code with a language is one pre",
        '<pre><code class="language-python">x</code></pre>',
        "x",
        [("pre_code", 0, 1, "python")],
    ),
    (
        "tdlib: code outside pre works too",
        '<code class="language-fift"><pre>x</></>',
        "x",
        [("pre_code", 0, 1, "fift")],
    ),
    (
        "tdlib: empty language",
        '<pre><code class="language-">x</code></pre>',
        "x",
        [("pre", 0, 1), ("code", 0, 1)],
    ),
    (
        "tdlib: pre longer than its code",
        '<pre><code class="language-fift">x</> </>',
        "x ",
        [("pre", 0, 2), ("code", 0, 1)],
    ),
    (
        "tdlib: a language on code alone is dropped",
        '<code class="language-c">x</code>',
        "x",
        [("code", 0, 1)],
    ),
    (
        "tdlib: custom emoji",
        '➡️ ➡️<tg-emoji emoji-id = "12345">➡️ ➡️</tg-emoji>',
        "➡️ ➡️➡️ ➡️",
        [("custom_emoji", 5, 5, 12345)],
    ),
    (
        "tdlib: tg-time relative",
        '<tg-time unix = "12345", format = "r">x</tg-time>',
        "x",
        [("date_time", 0, 1, (12345, 1))],
    ),
    (
        "tdlib: tg-time every flag",
        '<tg-time unix="12345" format="tttTTdDwW">x</tg-time>',
        "x",
        [("date_time", 0, 1, (12345, 62))],
    ),
    ("tdlib: tg-time without unix makes no entity", '<tg-time format="t">x</tg-time>', "x", []),
    (
        "tdlib: blockquote with unknown attributes",
        '<blockquote   cite="" askdlbas nasjdbaj nj12b3>a&lt;<pre  >b;</></>',
        "a<b;",
        [("blockquote", 0, 4), ("pre", 2, 2)],
    ),
    (
        "tdlib: blockquote expandable",
        "<blockquote   expandable>a</>",
        "a",
        [("expandable_blockquote", 0, 1)],
    ),
    (
        "tdlib: expandable=false still expands",
        "<blockquote expandable=false>a</>",
        "a",
        [("expandable_blockquote", 0, 1)],
    ),
    (
        "tdlib: nesting sorted by offset, longer first",
        "<i><b> </b> <code> </code></i>",
        "   ",
        [("italic", 0, 3), ("bold", 0, 1), ("code", 2, 1)],
    ),
]


@pytest.mark.parametrize(
    ("case", "text", "visible", "entities"), PARSED, ids=[c[0] for c in PARSED]
)
def test_html_parsed_as_tdlib_parses(
    case: str, text: str, visible: str, entities: list[tuple[object, ...]]
) -> None:
    got, found = parse_html(text)
    assert (got, shape(found)) == (visible, entities)


@given(st.text())
def test_escaped_plain_text_comes_back_unchanged(text: str) -> None:
    visible, entities = parse_html(html.escape(text, quote=False))
    assert (visible, entities) == (text, [])


TAGS = st.sampled_from(["b", "i", "u", "s", "code", "tg-spoiler", "pre", "blockquote"])


@st.composite
def markup(draw: st.DrawFn, depth: int = 0) -> str:
    """Well-formed HTML: escaped text and properly nested supported tags."""
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        if depth < 3 and draw(st.booleans()):
            tag = draw(TAGS)
            parts.append(f"<{tag}>{draw(markup(depth + 1))}</{tag}>")
        else:
            parts.append(html.escape(draw(st.text(max_size=5)), quote=False))
    return "".join(parts)


@given(markup())
def test_entities_lie_within_the_text(source: str) -> None:
    visible, entities = parse_html(source)
    size = utf16_len(visible)
    for entity in entities:
        assert entity.offset >= 0
        assert entity.length > 0
        assert entity.offset + entity.length <= size
