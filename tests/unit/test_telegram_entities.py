"""Message entities written back as HTML parse mode: to_html, checked by parsing its output.

Two parsers read the HTML back. ``sponsorbot.telegram.html.parse_html`` says whether Telegram
accepts the text and what text it shows, but returns no entities. The simulator's
``parse_html`` (tdlib's, rewritten) returns them as Telegram makes them: a link's URL is checked
and normalised (no entity if it is no URL), ``tg://user?id=N`` is a mention of N if N is a valid
user id. The comparison expects the same. Nothing merges adjacent entities at this stage; an
empty tag makes no entity.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.simulator import html as simulator_html
from sponsorbot.simulator.entities import MAX_USER_ID
from sponsorbot.simulator.formatting import entity_json
from sponsorbot.simulator.textlinks import checked_link, link_user_id
from sponsorbot.telegram.entities import to_html
from sponsorbot.telegram.html import parse_html

Entity = dict[str, Any]
Key = tuple[int, int, str, Any]


def _detail(entity: Entity) -> Any:
    kind = entity["type"]
    if kind == "text_link":
        return entity["url"]
    if kind == "text_mention":
        return entity["user"]["id"]
    if kind == "custom_emoji":
        return entity["custom_emoji_id"]
    return None


def _as_telegram_keeps(kind: str, detail: Any) -> tuple[str, Any] | None:
    """A link or mention as Telegram makes it from the tag: normalised, or gone."""
    if kind == "text_mention":
        if 0 < detail <= MAX_USER_ID:
            return kind, detail
        kind, detail = "text_link", f"tg://user?id={detail}"
    if kind == "text_link":
        if user_id := link_user_id(detail):
            return "text_mention", user_id
        return (kind, url) if (url := checked_link(detail)) else None
    return kind, detail


def _order(key: Key) -> tuple[int, int, str, str]:
    """Entities in a stable order; a detail may be None beside a string (a pre with and
    without a language at one place), which tuples cannot compare."""
    return key[0], key[1], key[2], "" if key[3] is None else repr(key[3])


def expected(entities: list[Entity]) -> list[Key]:
    """The entities sent, as the simulator's parser gives them back."""
    keys: list[Key] = []
    for e in entities:
        detail = e.get("language") if e["type"] == "pre" else _detail(e)
        kept = _as_telegram_keeps(e["type"], detail)
        if kept is not None:
            keys.append((e["offset"], e["length"], *kept))
    return sorted(keys, key=_order)


def read_back(source: str) -> tuple[str, list[Key]]:
    """The text Telegram shows for ``source`` (refusing it fails the test) and its entities."""
    shown = parse_html(source).text
    text, entities = simulator_html.parse_html(source)
    assert text == shown
    keys: list[Key] = []
    for e in map(entity_json, entities):
        detail = e.get("language") if e["type"] == "pre" else _detail(e)
        keys.append((e["offset"], e["length"], e["type"], detail))
    return text, sorted(keys, key=_order)


def assert_round_trip(text: str, entities: list[Entity]) -> str:
    out = to_html(text, entities)
    assert read_back(out) == (text, expected(entities))
    return out


def at(kind: str, offset: int, length: int, **extra: Any) -> Entity:
    return {"type": kind, "offset": offset, "length": length, **extra}


EACH_TYPE = [
    (at("bold", 2, 3), "a <b>bcd</b> e"),
    (at("italic", 2, 3), "a <i>bcd</i> e"),
    (at("underline", 2, 3), "a <u>bcd</u> e"),
    (at("strikethrough", 2, 3), "a <s>bcd</s> e"),
    (at("spoiler", 2, 3), "a <tg-spoiler>bcd</tg-spoiler> e"),
    (at("code", 2, 3), "a <code>bcd</code> e"),
    (at("pre", 2, 3), "a <pre>bcd</pre> e"),
    (at("pre", 2, 3, language="python"), 'a <pre><code class="language-python">bcd</code></pre> e'),
    (at("text_link", 2, 3, url="https://t.me/x"), 'a <a href="https://t.me/x">bcd</a> e'),
    (at("text_mention", 2, 3, user={"id": 42}), 'a <a href="tg://user?id=42">bcd</a> e'),
    (at("blockquote", 2, 3), "a <blockquote>bcd</blockquote> e"),
    (at("expandable_blockquote", 2, 3), "a <blockquote expandable>bcd</blockquote> e"),
]


@pytest.mark.parametrize(("entity", "html_text"), EACH_TYPE)
def test_each_entity_type_has_its_tag(entity: Entity, html_text: str) -> None:
    assert assert_round_trip("a bcd e", [entity]) == html_text


def test_custom_emoji_wraps_its_emoji_counted_in_utf16() -> None:
    entity = at("custom_emoji", 3, 2, custom_emoji_id="5368324170671202286")
    out = assert_round_trip("ok 👍!", [entity])
    assert out == 'ok <tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>!'


def test_a_pre_language_is_an_escaped_class_tdlib_reads_back() -> None:
    out = to_html("x", [at("pre", 0, 1, language='c"<&')])
    assert out == '<pre><code class="language-c&quot;&lt;&amp;">x</code></pre>'
    assert parse_html(out).text == "x"


@pytest.mark.parametrize(
    "kind",
    ["mention", "hashtag", "cashtag", "bot_command", "url", "email", "phone_number", "bank_card"],
)
def test_automatic_entities_stay_plain_text(kind: str) -> None:
    assert to_html("see @x <1>", [at(kind, 4, 2)]) == "see @x &lt;1&gt;"


def test_offsets_count_utf16_code_units_past_emoji() -> None:
    # 😀 is two code units: "bold" begins at 3, not 2.
    assert assert_round_trip("😀 bold", [at("bold", 3, 4)]) == "😀 <b>bold</b>"
    # A flag is two astral characters, four code units.
    text = "🇮🇷🇮🇷 x"
    assert assert_round_trip(text, [at("italic", 4, 4), at("bold", 9, 1)]) == (
        "🇮🇷<i>🇮🇷</i> <b>x</b>"
    )


def test_persian_text_with_an_emoji_between_words() -> None:
    text = "سلام 👋 دنیای من"  # سلام is 4 units, the space 1, 👋 2
    entities = [at("bold", 0, 4), at("spoiler", 5, 2), at("underline", 8, 5)]
    assert assert_round_trip(text, entities) == (
        "<b>سلام</b> <tg-spoiler>👋</tg-spoiler> <u>دنیای</u> من"
    )


def test_text_is_escaped_exactly_and_link_quotes_in_the_attribute() -> None:
    text = "a<b>&c \"q\" 'r' &amp;"
    assert to_html(text, None) == "a&lt;b&gt;&amp;c \"q\" 'r' &amp;amp;"
    assert to_html(text, []) == to_html(text, None)
    link = at("text_link", 0, 1, url='https://x.y/?q="1"&r=<2>')
    out = assert_round_trip(text, [link])
    assert out.startswith('<a href="https://x.y/?q=&quot;1&quot;&amp;r=&lt;2&gt;">a</a>&lt;b')


def test_nested_entities_are_well_nested_whatever_their_order_in_the_list() -> None:
    text = "bold and italic"
    entities = [at("italic", 5, 10), at("bold", 0, 15), at("strikethrough", 9, 6)]
    out = assert_round_trip(text, entities)
    assert out == "<b>bold <i>and <s>italic</s></i></b>"


def test_same_span_puts_blocks_outside_and_custom_emoji_inside() -> None:
    text = "🙂"
    entities = [
        at("custom_emoji", 0, 2, custom_emoji_id="1"),
        at("italic", 0, 2),
        at("text_link", 0, 2, url="https://t.me"),
        at("blockquote", 0, 2),
    ]
    out = assert_round_trip(text, entities)
    assert out == (
        '<blockquote><a href="https://t.me"><i><tg-emoji emoji-id="1">🙂</tg-emoji>'
        "</i></a></blockquote>"
    )


def test_touching_entities_close_before_the_next_opens() -> None:
    entities = [at("bold", 0, 2), at("italic", 2, 2), at("bold", 2, 2)]
    assert assert_round_trip("abcd", entities) == "<b>ab</b><b><i>cd</i></b>"


def test_a_pre_with_a_language_keeps_nested_styles_inside_its_code() -> None:
    out = assert_round_trip("x = 1", [at("pre", 0, 5, language="py"), at("bold", 4, 1)])
    assert out == '<pre><code class="language-py">x = <b>1</b></code></pre>'


def test_partly_overlapping_entities_close_and_reopen_the_later_one() -> None:
    entities = [at("bold", 0, 5), at("italic", 3, 5)]
    out = to_html("abcdefgh", entities)
    assert out == "<b>abc<i>de</i></b><i>fgh</i>"
    assert read_back(out) == (
        "abcdefgh",
        [(0, 5, "bold", None), (3, 2, "italic", None), (5, 3, "italic", None)],
    )


def test_three_crossing_entities_still_nest() -> None:
    entities = [at("bold", 0, 4), at("italic", 2, 4), at("underline", 3, 5)]
    out = to_html("abcdefgh", entities)
    assert out == "<b>ab<i>c<u>d</u></i></b><u><i>ef</i>gh</u>"
    assert parse_html(out).text == "abcdefgh"


MALFORMED: list[Any] = [
    at("bold", -1, 2),
    at("bold", 0, -1),
    at("bold", 0, 0),
    at("bold", 3, 5),  # ends past the text
    at("bold", 7, 1),
    at("bold", 2, 1),  # begins inside 😀's surrogate pair
    at("bold", 0, 2),  # ends inside it
    {"type": "bold", "offset": True, "length": 1},
    {"type": "bold", "offset": "0", "length": 1},
    {"type": "bold", "offset": 0},
    {"offset": 0, "length": 1},
    {"type": None, "offset": 0, "length": 1},
    at("date_time", 0, 1),
    at("no_such_type", 0, 1),
    at("text_link", 0, 1),
    at("text_link", 0, 1, url=""),
    at("text_link", 0, 1, url=5),
    at("text_link", 0, 1, url="a\0b"),
    at("text_mention", 0, 1),
    at("text_mention", 0, 1, user={"id": "42"}),
    at("text_mention", 0, 1, user={"id": 0}),
    at("text_mention", 0, 1, user=7),
    at("custom_emoji", 0, 1),
    at("custom_emoji", 0, 1, custom_emoji_id="abc"),
    at("custom_emoji", 0, 1, custom_emoji_id="007"),
    at("custom_emoji", 0, 1, custom_emoji_id="9" * 19),  # past 2**63 - 1
    None,
    "bold",
    [0, 1],
]


@pytest.mark.parametrize("entity", MALFORMED)
def test_malformed_entities_are_left_out(entity: Any) -> None:
    assert to_html("a😀<b>", [entity]) == "a😀&lt;b&gt;"


def test_a_malformed_entity_does_not_spoil_the_others() -> None:
    assert to_html("a😀<b>", [*MALFORMED, at("bold", 3, 1)]) == "a😀<b>&lt;</b>b&gt;"


def test_a_pre_language_that_is_not_text_leaves_a_plain_pre() -> None:
    assert to_html("x", [at("pre", 0, 1, language=3)]) == "<pre>x</pre>"


# Text with what needs escaping, astral characters and Persian among everything else.
_CHAR = st.one_of(
    st.characters(codec="utf-8"),  # no lone surrogates
    st.sampled_from(list("&<>\"' \n😀👍🏽🇮🇷𝔸\u200dسی۱")),
)
_ATTRIBUTE = st.text(st.characters(codec="utf-8", exclude_characters="\0"))
_KINDS: st.SearchStrategy[Entity] = st.one_of(
    st.sampled_from(
        [{"type": t} for t in ("bold", "italic", "underline", "strikethrough", "spoiler")]
        + [{"type": t} for t in ("code", "pre", "blockquote", "expandable_blockquote")]
    ),
    st.builds(lambda lang: {"type": "pre", "language": lang}, _ATTRIBUTE.filter(bool)),
    st.builds(lambda url: {"type": "text_link", "url": url}, _ATTRIBUTE.filter(bool)),
    st.builds(lambda i: {"type": "text_mention", "user": {"id": i}}, st.integers(1, 2**53)),
    st.builds(
        lambda i: {"type": "custom_emoji", "custom_emoji_id": str(i)}, st.integers(1, 2**63 - 1)
    ),
)


@st.composite
def messages(draw: st.DrawFn) -> tuple[str, list[Entity]]:
    """A text and entities over it that never partly overlap (as Telegram sends them)."""
    text = draw(st.text(_CHAR, max_size=30))
    bounds = [0]
    for char in text:
        bounds.append(bounds[-1] + (2 if ord(char) > 0xFFFF else 1))
    index = st.integers(0, len(bounds) - 1)
    spans: list[tuple[int, int]] = []
    for a, b in draw(st.lists(st.tuples(index, index), max_size=10)):
        lo, hi = sorted((bounds[a], bounds[b]))
        crossing = any(lo < s < hi < e or s < lo < e < hi for s, e in spans)
        if lo < hi and not crossing:
            spans.append((lo, hi))
    return text, [{**draw(_KINDS), "offset": lo, "length": hi - lo} for lo, hi in spans]


@given(messages())
def test_parsing_the_html_gives_back_the_text_and_entities(
    message: tuple[str, list[Entity]],
) -> None:
    text, entities = message
    assert_round_trip(text, entities)


_ANYTHING = st.one_of(st.none(), st.booleans(), st.integers(-3, 40), st.text(max_size=5))
_JUNK = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(st.sampled_from([e["type"] for e, _ in EACH_TYPE]), _ANYTHING),
        "offset": _ANYTHING,
        "length": _ANYTHING,
        "url": _ANYTHING,
        "language": _ANYTHING,
        "custom_emoji_id": st.one_of(_ANYTHING, st.integers(1, 99).map(str)),
        "user": st.one_of(_ANYTHING, st.fixed_dictionaries({"id": _ANYTHING})),
    },
)


@given(st.text(_CHAR, max_size=20), st.lists(st.one_of(_JUNK, _ANYTHING), max_size=8))
def test_any_entities_give_html_telegram_accepts_with_the_same_text(
    text: str, entities: list[Any]
) -> None:
    out = to_html(text, entities)
    assert read_back(out)[0] == text
