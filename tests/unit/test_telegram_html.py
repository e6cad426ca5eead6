"""Telegram's HTML parse mode, against the rules read in tdlib (td/telegram/MessageEntity.cpp).

Expected texts and errors are tdlib's; the comments cite the source they were read from, and many
cases are tdlib's own (test/message_entities.cpp, TEST(MessageEntities, parse_html)).
"""

from __future__ import annotations

import html

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.telegram.html import HtmlError, Parsed, check_message_text, parse_html

PARSE = "Bad Request: can't parse entities: "


def refusal(text: str) -> str:
    with pytest.raises(HtmlError) as caught:
        parse_html(text)
    return str(caught.value)


# decode_html_entity: only lt, gt, amp and quot are named; the ";" is optional; a numeric
# reference is decimal or "x" hexadecimal, at most nine characters before the ";".
ENTITIES = [
    ("a & b", "a & b"),
    ("&", "&"),
    ("&;", "&;"),
    ("&&amp;", "&&"),
    ("&lt;&gt;&amp;&quot;", '<>&"'),
    ("&lt&gt&amp&quot", '<>&"'),
    ("&lt1", "<1"),
    ("&ltx;", "&ltx;"),
    ("&LT;", "&LT;"),
    ("&nbsp;", "&nbsp;"),
    ("&apos;&ge;&laquo;&Or;", "&apos;&ge;&laquo;&Or;"),
    ("&lt;b&gt;x&lt;/b&gt;", "<b>x</b>"),
    ("&#65;&#x41;&#65&#x41", "AAAA"),
    ("&#X41;", "&#X41;"),
    ("&#x;&#;&#a;", "&#x;&#;&#a;"),
    ("&#0;&#x0;", "&#0;&#x0;"),
    ("&#0000065;", "A"),
    ("&#00000065;", "&#00000065;"),
    ("&#x000041;", "A"),
    ("&#x0000041;", "&#x0000041;"),
    ("&#12345678;", "&#12345678;"),
    ("&#1114110;&#x10fffe;", "\U0010fffe\U0010fffe"),
    ("&#1114111;&#x10FFFF;", "&#1114111;&#x10FFFF;"),
    ("&#128512;", "\U0001f600"),
    ("<code>&lt;b&gt;</code>", "<b>"),
]


@pytest.mark.parametrize(("text", "visible"), ENTITIES)
def test_entities_decode_as_decode_html_entity_does(text: str, visible: str) -> None:
    assert parse_html(text).text == visible


def test_a_bare_ampersand_or_unknown_entity_is_literal_text_not_an_error() -> None:
    assert parse_html("Tom & Jerry&nbsp;&copy; 2024").text == "Tom & Jerry&nbsp;&copy; 2024"


def test_lt_without_semicolon_is_still_decoded_as_tdlib_does() -> None:
    # Browsers and tdlib agree: the ";" ends a reference but is not needed.
    assert parse_html("1 &lt 2").text == "1 < 2"


def test_a_decoded_surrogate_is_refused_once_everything_else_parsed() -> None:
    error = (
        "Text contains invalid Unicode characters after decoding HTML entities, "
        "check for unmatched surrogate code units"
    )
    for text in ("&#57311;", "&#xDFDF;", "&#xDFDF", "&#55357;&#56832;", "<b>&#xD800;</b>"):
        assert refusal(text) == PARSE + error
    assert refusal("&#xD800;<b>") == PARSE + 'Can\'t find end tag corresponding to start tag "b"'


TAGS = [
    "<b>x</b>",
    "<strong>x</strong>",
    "<i>x</i>",
    "<em>x</em>",
    "<u>x</u>",
    "<ins>x</ins>",
    "<s>x</s>",
    "<strike>x</strike>",
    "<del>x</del>",
    '<span class="tg-spoiler">x</span>',
    "<span class=tg-spoiler>x</span>",
    "<span class=TG-SPOILER>x</span>",
    "<tg-spoiler>x</tg-spoiler>",
    '<a href="https://t.me/x?a=1&amp;b=2">x</a>',
    "<a href=telegram.org>x</a>",
    '<a href="">x</a>',
    "<a>x</a>",
    '<a HREF="not checked">x</a>',
    "<code>x</code>",
    '<code class="language-python">x</code>',
    '<pre><code class="language-python">x</code></pre>',
    "<pre>x</pre>",
    "<blockquote>x</blockquote>",
    "<blockquote expandable>x</blockquote>",
    '<tg-emoji emoji-id="5368324170671202286">x</tg-emoji>',
    "<tg-emoji emoji-id=-1>x</tg-emoji>",
    '<tg-emoji emoji-id="0"></tg-emoji>x',
    '<tg-time unix="1700000000" format="wDT">x</tg-time>',
    "<tg-time unix=1700000000 format=r>x</tg-time>",
    '<tg-time unix="1700000000">x</tg-time>',
    '<tg-time unix=1 format="rt"></tg-time>x',
    "<B>x</b>",
    "<b>x</>",
    "<i>x</    >",
    "<i>x</i   >",
    "<b\tclass\n=\rc\v>x</b>",
    '<b foo="1" bar=2 baz>x</b>',
    '<a href="x"title="y">x</a>',
    "<b><i><u>x</u></i></b>",
]


@pytest.mark.parametrize("text", TAGS)
def test_tags_tdlib_accepts_vanish_from_the_text(text: str) -> None:
    assert parse_html(text) == Parsed("x", 1)


SPAN_ERROR = 'Tag "span" must have class "tg-spoiler" at byte offset 0'
# parse_html's errors: every offset is the byte offset of the tag's "<" (or of the name token)
# in the UTF-8 text.
ERRORS = [
    ("<foo>x</foo>", 'Unsupported start tag "foo" at byte offset 0'),
    ("<FOO>", 'Unsupported start tag "foo" at byte offset 0'),
    ("a<br>", 'Unsupported start tag "br" at byte offset 1'),
    ("<br/>", 'Unsupported start tag "br/" at byte offset 0'),
    ("<b/>", 'Unsupported start tag "b/" at byte offset 0'),
    ("<>", 'Unsupported start tag "" at byte offset 0'),
    ("< b>", 'Unsupported start tag "" at byte offset 0'),
    ("1 < 2", 'Unsupported start tag "" at byte offset 2'),
    ("<b\f>x</b>", 'Unsupported start tag "b\f" at byte offset 0'),
    ("é<foo>", 'Unsupported start tag "foo" at byte offset 2'),
    ("🏟 🏟&lt;<abac>", 'Unsupported start tag "abac" at byte offset 13'),
    ("<b", "Unclosed start tag at byte offset 0"),
    ("x <b\0>y</b>", "Unclosed start tag at byte offset 2"),
    ("<b ", 'Empty attribute name in the tag "b" at byte offset 0'),
    ("<i   =aba>", 'Empty attribute name in the tag "i" at byte offset 0'),
    ('<a href="x"/>y</a>', 'Empty attribute name in the tag "a" at byte offset 0'),
    ('<b foo"bar">x</b>', 'Empty attribute name in the tag "b" at byte offset 0'),
    ("<a href", 'Unclosed start tag "a" at byte offset 0'),
    ("<a href=  ", 'Unclosed start tag "a" at byte offset 0'),
    ('<a href="https://t.me', "Unclosed start tag at byte offset 0"),
    ("<a href=t.me", "Unclosed start tag at byte offset 0"),
    ("<a href=https://t.me>x</a>", "Unexpected end of name token at byte offset 8"),
    ("<span class=tg-&#115;poiler>x</span>", "Unexpected end of name token at byte offset 12"),
    ("<span>x</span>", 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
    ('<span class="tg-x">x</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
    (
        '<span class="TG-SPOILER">x</span>',
        'Tag "span" must have class "tg-spoiler" at byte offset 0',
    ),
    ("</b>", "Unexpected end tag at byte offset 0"),
    ("x</>", "Unexpected end tag at byte offset 1"),
    ("<b></b></b>", "Unexpected end tag at byte offset 7"),
    ("<b>x</b", "Unclosed end tag at byte offset 4"),
    ("<i>a</i b>", "Unclosed end tag at byte offset 4"),
    ("<b>x</i>", 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'),
    ("<b><i>x</b></i>", 'Unmatched end tag at byte offset 7, expected "</i>", found "</b>"'),
    ("<strong>x</b>", 'Unmatched end tag at byte offset 9, expected "</strong>", found "</b>"'),
    ("<b>x", 'Can\'t find end tag corresponding to start tag "b"'),
    ("<b><i>x", 'Can\'t find end tag corresponding to start tag "i"'),
    ("<i    aba>", 'Can\'t find end tag corresponding to start tag "i"'),
    ("<tg-emoji>x</tg-emoji>", "Invalid custom emoji identifier specified"),
    ('<tg-emoji emoji-id="0">x</tg-emoji>', "Invalid custom emoji identifier specified"),
    ('<tg-emoji emoji-id="01">x</tg-emoji>', "Invalid custom emoji identifier specified"),
    ('<tg-emoji emoji-id="1e3">x</tg-emoji>', "Invalid custom emoji identifier specified"),
    ("<tg-emoji emoji-id=9223372036854775808>x</>", "Invalid custom emoji identifier specified"),
    ('<tg-time unix="1" format="rt">x</tg-time>', "Invalid date format used"),
    ('<tg-time unix="1" format="ts">x</tg-time>', "Invalid date format used"),
]


@pytest.mark.parametrize(("text", "error"), ERRORS)
def test_errors_are_parse_htmls_with_byte_offsets(text: str, error: str) -> None:
    assert refusal(text) == PARSE + error


def test_an_unquoted_href_must_be_a_name_token() -> None:
    # Only letters, digits, "." and "-" may go unquoted: "https:" stops at the colon.
    assert refusal("<a href=https://t.me/x>x</a>") == (
        PARSE + "Unexpected end of name token at byte offset 8"
    )
    assert parse_html('<a href="https://t.me/x">x</a>').text == "x"


def test_the_first_error_met_wins() -> None:
    assert refusal("<b>x</i><foo>") == (
        PARSE + 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'
    )


def test_entities_in_quoted_attribute_values_are_decoded() -> None:
    assert parse_html('<span class="tg-&#115;poiler">x</span>').text == "x"
    assert parse_html("<tg-emoji emoji-id='&#49;'>x</tg-emoji>").text == "x"


def test_length_counts_utf16_code_units() -> None:
    assert parse_html("🏟 <b>é</b>&#128512;") == Parsed("🏟 é\U0001f600", 6)


def test_text_is_neither_trimmed_nor_cleaned_by_parse_html() -> None:
    assert parse_html("  <i>\t\r\n</i>  ") == Parsed("  \t\r\n  ", 7)


def test_a_string_that_is_not_unicode_is_refused_as_tdlib_does() -> None:
    with pytest.raises(HtmlError, match=r"^Bad Request: text must be encoded in UTF-8$"):
        parse_html("half a pair: \ud83d")


def test_an_empty_text_parameter_is_refused_before_parsing() -> None:
    with pytest.raises(HtmlError, match=r"^Bad Request: message text is empty$"):
        check_message_text("")


@pytest.mark.parametrize(
    "text",
    ["<b></b>", " ", " \n\n ", "<b> </b>\n", "\r\t\v\f", "\u200b\u00a0", "&#8203;", "\u2028"],
)
def test_a_text_nothing_visible_is_left_of_is_refused_by_fix_formatted_text(text: str) -> None:
    with pytest.raises(HtmlError, match=r"^Bad Request: text must be non-empty$"):
        check_message_text(text)


def test_a_caption_may_be_empty() -> None:
    assert check_message_text("", limit=1024, what="caption") == Parsed("", 0)
    assert check_message_text(" <i>\n</i> ", limit=1024, what="caption") == Parsed("", 0)


def test_parse_errors_come_through_check_message_text() -> None:
    with pytest.raises(HtmlError, match=r"^Bad Request: can\'t parse entities: Unsupported start"):
        check_message_text("<p>hello</p>")


def test_spaces_and_newlines_are_trimmed_but_leading_ones_only_up_to_the_first_entity() -> None:
    assert check_message_text("  \n hi \n ").text == "hi"
    assert check_message_text("  <b>hi</b>  ").text == "hi"
    assert check_message_text(" <b> hi</b> ") == Parsed(" hi", 3)
    assert check_message_text("\u00a0hi").text == "\u00a0hi"  # only " " and "\n" are trimmed


def test_control_characters_are_cleaned_as_clean_input_string_does() -> None:
    assert check_message_text("a\tb\rc\0d\u2028e\u202ef").text == "a bc def"
    assert check_message_text("x\u200e\u200f\u200e").text == "x\u200c\u200c\u200e"


def test_a_long_text_is_refused_by_its_visible_length() -> None:
    assert check_message_text("a" * 4096).length == 4096
    assert check_message_text("<b>" + "&amp;" * 4096 + "</b>").length == 4096
    with pytest.raises(HtmlError, match=r"^Bad Request: message is too long$"):
        check_message_text("a" * 4097)
    with pytest.raises(HtmlError, match=r"^Bad Request: message is too long$"):
        check_message_text("🏟" * 2049)  # 2049 code points, 4098 UTF-16 code units


def test_a_long_caption_has_its_own_message() -> None:
    assert check_message_text("a" * 1024, limit=1024, what="caption").length == 1024
    with pytest.raises(HtmlError, match=r"^Bad Request: message caption is too long$"):
        check_message_text("a" * 1025, limit=1024, what="caption")


def test_the_bot_api_refuses_more_than_32_kib_of_html_before_parsing() -> None:
    with pytest.raises(HtmlError, match=r"^Bad Request: text is too long$"):
        check_message_text("<i></i>" * 5000 + "x")


_NOT_MARKUP = st.characters(codec="utf-8", exclude_characters="<&")
# Characters clean_input_string keeps as they are and is_empty_string does not count as empty.
_KEPT = st.characters(
    codec="utf-8",
    exclude_categories=["Cn", "Cc", "Zs", "Zl", "Zp", "Cf"],
    exclude_characters="\u030a\u0333\u033f\u2800\ufffc",
) | st.sampled_from(" \n")


@given(st.text(_NOT_MARKUP))
def test_text_without_markup_parses_to_itself(text: str) -> None:
    parsed = parse_html(text)
    assert parsed.text == text
    assert parsed.length == len(text.encode("utf-16-le")) // 2


@given(st.text())
def test_escaped_text_parses_back_to_itself(text: str) -> None:
    assert parse_html(html.escape(text, quote=False)).text == text


@given(st.text(_KEPT, min_size=1))
def test_escaped_text_is_sent_as_the_trimmed_text(text: str) -> None:
    trimmed = text.strip(" \n")
    escaped = html.escape(text, quote=False)
    if not trimmed:
        with pytest.raises(HtmlError, match=r"^Bad Request: text must be non-empty$"):
            check_message_text(escaped, limit=1 << 20)
    else:
        assert check_message_text(escaped, limit=1 << 20).text == trimmed
