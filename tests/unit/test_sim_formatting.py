"""How the simulator stores a message text: tdlib's fix_formatted_text (clean, trim, nest,
add automatic entities) and the Bot API server's handling of parse_mode and ``entities``.

Each case names what Telegram does; the fix_formatted_text inputs are mostly those of tdlib's
test (test/message_entities.cpp, TEST(MessageEntities, fix_formatted_text)), the error texts
those of telegram-bot-api's Client.cpp and tdlib.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.simulator.autoentities import finder
from sponsorbot.simulator.entities import SPLITTABLE, Entity, TextError, fix_formatted_text
from sponsorbot.simulator.errors import ApiError
from sponsorbot.simulator.formatting import format_text, user_text
from sponsorbot.simulator.world import Account


def fixed(
    text: str, *entities: tuple[str, int, int], allow_empty: bool = False
) -> tuple[object, ...]:
    got, kept = fix_formatted_text(
        text, [Entity(*e) for e in entities], allow_empty=allow_empty, find=finder()
    )
    return got, [(e.kind, e.offset, e.length) for e in kept]


FIXES = [
    ("tdlib: controls become spaces, \\r goes, then trimmed", "\t a\r\x01b \n", (), ("a b", [])),
    ("tdlib: trim spaces and newlines", "  aba\n ", (), ("aba", [])),
    (
        "tdlib: automatic entities after the trim",
        "  /test @abaca #ORD $ABC  telegram.org ",
        (),
        (
            "/test @abaca #ORD $ABC  telegram.org",
            [
                ("bot_command", 0, 5),
                ("mention", 6, 6),
                ("hashtag", 13, 4),
                ("cashtag", 18, 4),
                ("url", 24, 12),
            ],
        ),
    ),
    (
        "tdlib: leading spaces stay inside an entity",
        "  a",
        (("bold", 0, 3),),
        ("  a", [("bold", 0, 3)]),
    ),
    ("tdlib: trailing ones are cut off it", "a  ", (("bold", 0, 3),), ("a", [("bold", 0, 1)])),
    (
        "tdlib: \\r removed inside entities",
        "a\rbc\r",
        (("italic", 0, 1), ("bold", 0, 2), ("italic", 3, 2), ("bold", 3, 1)),
        ("abc", [("bold", 0, 1), ("italic", 0, 1), ("bold", 2, 1), ("italic", 2, 1)]),
    ),
    (
        "tdlib: touching styles merge",
        "abc",
        (("italic", 0, 2), ("italic", 2, 1)),
        ("abc", [("italic", 0, 3)]),
    ),
    (
        "tdlib: crossing styles split",
        "abc",
        (("italic", 0, 2), ("bold", 1, 2)),
        ("abc", [("italic", 0, 1), ("bold", 1, 2), ("italic", 1, 1)]),
    ),
    (
        "tdlib: styles split around mentions",
        "@tests @tests",
        (("italic", 0, 13),),
        (
            "@tests @tests",
            [
                ("mention", 0, 6),
                ("italic", 0, 6),
                ("italic", 6, 1),
                ("mention", 7, 6),
                ("italic", 7, 6),
            ],
        ),
    ),
    (
        "tdlib: nothing inside pre",
        "abc",
        (("pre", 0, 3), ("strikethrough", 1, 1)),
        ("abc", [("pre", 0, 3)]),
    ),
    (
        "tdlib: a style around pre is cut",
        "abc",
        (("pre", 1, 1), ("strikethrough", 0, 3)),
        ("abc", [("strikethrough", 0, 1), ("pre", 1, 1), ("strikethrough", 2, 1)]),
    ),
    (
        "tdlib: pre inside a blockquote",
        "abc",
        (("blockquote", 0, 3), ("pre", 1, 1)),
        ("abc", [("blockquote", 0, 3), ("pre", 1, 1)]),
    ),
    (
        "tdlib: a blockquote inside pre wins",
        "abc",
        (("pre", 0, 3), ("blockquote", 1, 1)),
        ("abc", [("blockquote", 1, 1)]),
    ),
    (
        "tdlib: found links never overlap given entities",
        "example.com",
        (("pre", 0, 3),),
        ("example.com", [("pre", 0, 3)]),
    ),
    (
        "tdlib: found links go inside a blockquote",
        "example.com",
        (("blockquote", 0, 11),),
        ("example.com", [("blockquote", 0, 11), ("url", 0, 11)]),
    ),
    (
        "tdlib: a style around a link is split",
        "a example.com",
        (("italic", 0, 13),),
        ("a example.com", [("italic", 0, 2), ("url", 2, 11), ("italic", 2, 11)]),
    ),
    (
        "tdlib: the later of two crossing links goes",
        "abadcaba",
        (("text_mention", 0, 3), ("code", 2, 3)),
        ("abadcaba", [("text_mention", 0, 3)]),
    ),
]


@pytest.mark.parametrize(("case", "text", "entities", "expected"), FIXES, ids=[c[0] for c in FIXES])
def test_fixed_as_tdlib_fixes(
    case: str, text: str, entities: tuple[tuple[str, int, int], ...], expected: tuple[object, ...]
) -> None:
    if any(e[0] == "text_mention" for e in entities):
        mentions = [
            Entity(*e, user_id=1) if e[0] == "text_mention" else Entity(*e) for e in entities
        ]
        got, kept = fix_formatted_text(text, mentions, allow_empty=False, find=finder())
        assert (got, [(e.kind, e.offset, e.length) for e in kept]) == expected
    else:
        assert fixed(text, *entities) == expected


@pytest.mark.parametrize(
    ("text", "entity", "error"),
    [
        # tdlib: "👉 👉  " is 7 UTF-16 units; an entity may not split an emoji
        (
            "👉 👉  ",
            ("bold", 0, 1),
            "Entity beginning at UTF-16 offset 0 ends in a middle of a UTF-16 symbol "
            "at byte offset 4",
        ),
        (
            "👉 👉  ",
            ("bold", 1, 1),
            "Entity begins in a middle of a UTF-16 symbol at byte offset 4",
        ),
        ("👉 👉  ", ("bold", 8, 1), "Entity begins after the end of the text at UTF-16 offset 8"),
        (
            "aba caba",
            ("bold", 6, 5),
            "Entity beginning at UTF-16 offset 6 ends after the end of the text "
            "at UTF-16 offset 11",
        ),
        ("aba caba", ("bold", -1, 2), "Receive an entity with incorrect offset -1"),
        ("aba caba", ("bold", 1, -2), "Receive an entity with incorrect length -2"),
        ("  \n ", ("bold", 0, 1), "Text must be non-empty"),
        ("\u200b\u200f\u00a0", ("bold", 0, 1), "Text must be non-empty"),
    ],
)
def test_entities_refused_as_tdlib_refuses(
    text: str, entity: tuple[str, int, int], error: str
) -> None:
    with pytest.raises(TextError, match="^" + error.replace("(", r"\(") + "$"):
        fixed(text, entity)


def test_an_empty_caption_is_allowed_and_lrm_runs_are_rewritten() -> None:
    # tdlib: captions may be empty; in a run of LRM/RLM marks all but the last become ZWNJ
    assert fixed(" \n", allow_empty=True) == ("", [])
    assert fixed("\u200f\u200f a") == ("\u200c\u200f a", [])


KINDS = st.sampled_from(
    [
        "bold",
        "italic",
        "underline",
        "strikethrough",
        "spoiler",
        "code",
        "pre",
        "blockquote",
        "text_link",
        "custom_emoji",
    ]
)
PRE = {"pre", "code"}


@st.composite
def text_with_entities(draw: st.DrawFn) -> tuple[str, list[Entity]]:
    text = draw(st.text(alphabet="ab @#./:\n", min_size=1, max_size=20))
    entities = []
    for _ in range(draw(st.integers(0, 8))):
        offset = draw(st.integers(0, len(text) - 1))
        length = draw(st.integers(0, len(text) - offset))
        entities.append(Entity(draw(KINDS), offset, length, url="http://a.io/", custom_emoji_id=5))
    return text, entities


@given(text_with_entities())
def test_fixed_entities_are_sorted_nested_and_inside_the_text(
    case: tuple[str, list[Entity]],
) -> None:
    # tdlib's own random test of fix_formatted_text, as an invariant.
    source, entities = case
    try:
        text, kept = fix_formatted_text(source, entities, allow_empty=True, find=finder())
    except TextError:
        return
    for i, outer in enumerate(kept):
        assert outer.offset >= 0 and outer.length > 0 and outer.end <= len(text)
        for inner in kept[i + 1 :]:
            assert (inner.offset, -inner.length) >= (outer.offset, -outer.length)  # sorted
            if inner.offset < outer.end:  # nested, never crossing
                assert inner.end <= outer.end and inner.kind != outer.kind
                assert outer.kind not in PRE
                if outer.kind not in (*SPLITTABLE, "blockquote"):
                    assert inner.kind in SPLITTABLE


def api_error(*args: object, **kwargs: object) -> str:
    with pytest.raises(ApiError) as caught:
        format_text(*args, **kwargs)  # type: ignore[arg-type]
    assert caught.value.error_code == 400
    return caught.value.description


@pytest.mark.parametrize(
    ("case", "call", "description"),
    [
        ("bot api: no text at all", ("", None), "Bad Request: message text is empty"),
        ("tdlib: nothing visible", ("  \n\t ", None), "Bad Request: text must be non-empty"),
        (
            "tdlib: nothing visible once parsed",
            ("<b> </b>", "HTML"),
            "Bad Request: text must be non-empty",
        ),
        ("bot api: unknown parse mode", ("x", "Foo"), "Bad Request: unsupported parse_mode"),
        (
            "tdlib: bad HTML",
            ("<b>x", "html"),
            "Bad Request: can't parse entities: "
            'Can\'t find end tag corresponding to start tag "b"',
        ),
        (
            "tdlib: MarkdownV2 reserved dot",
            ("Hi.", "MarkdownV2"),
            "Bad Request: can't parse entities: "
            "Character '.' is reserved and must be escaped with the preceding '\\'",
        ),
        (
            "tdlib: legacy Markdown",
            ("*x", "Markdown"),
            "Bad Request: can't parse entities: "
            "Can't find end of the entity starting at byte offset 0",
        ),
        ("bot api: 32 KiB before parsing", ("x" * 32769, None), "Bad Request: text is too long"),
        (
            "bot api: entity not an object",
            ("x", None, [1]),
            "Bad Request: can't parse MessageEntity: expected an Object",
        ),
        (
            "bot api: entity without offset",
            ("x", None, [{"type": "bold"}]),
            "Bad Request: can't parse MessageEntity: Can't find field \"offset\"",
        ),
        (
            "bot api: offset not a number",
            ("x", None, [{"type": "bold", "offset": True, "length": 1}]),
            'Bad Request: can\'t parse MessageEntity: Field "offset" must be a Number',
        ),
        (
            "bot api: offset a fraction",
            ("x", None, [{"type": "bold", "offset": 0.5, "length": 1}]),
            'Bad Request: can\'t parse MessageEntity: Field "offset" must be a valid Number',
        ),
        (
            "bot api: empty type",
            ("x", None, [{"type": "", "offset": 0, "length": 1}]),
            "Bad Request: can't parse MessageEntity: Type is not specified",
        ),
        (
            "bot api: unknown type",
            ("x", None, '[{"type": "blink", "offset": 0, "length": 1}]'),
            "Bad Request: can't parse MessageEntity: Unsupported type specified",
        ),
        (
            "bot api: text_link without url",
            ("x", None, [{"type": "text_link", "offset": 0, "length": 1}]),
            "Bad Request: can't parse MessageEntity: Can't find field \"url\"",
        ),
        (
            "bot api: text_mention user not an object",
            ("x", None, [{"type": "text_mention", "offset": 0, "length": 1, "user": 5}]),
            'Bad Request: can\'t parse MessageEntity: Field "user" must be of type Object',
        ),
        (
            "bot api: bad date-time format",
            (
                "x",
                None,
                [
                    {
                        "type": "date_time",
                        "offset": 0,
                        "length": 1,
                        "unix_time": 1,
                        "date_time_format": "x",
                    }
                ],
            ),
            "Bad Request: can't parse MessageEntity: Invalid date-time format specified",
        ),
        (
            "tdlib: text_link URL checked",
            ("x", None, [{"type": "text_link", "offset": 0, "length": 1, "url": "nope"}]),
            "Bad Request: entity URL 'nope' is invalid: Wrong HTTP URL",
        ),
        (
            "tdlib: text_mention of no valid user",
            ("x", None, [{"type": "text_mention", "offset": 0, "length": 1, "user": {"id": 0}}]),
            "Bad Request: user not found",
        ),
        (
            "tdlib: entity past the end",
            ("x", None, [{"type": "bold", "offset": 0, "length": 2}]),
            "Bad Request: entity beginning at UTF-16 offset 0 ends after the end of the text "
            "at UTF-16 offset 2",
        ),
    ],
)
def test_refused_as_the_bot_api_refuses(
    case: str, call: tuple[object, ...], description: str
) -> None:
    assert api_error(*call) == description


def test_empty_caption_and_no_length_limit_here() -> None:
    assert format_text("", "Foo", caption=True) == ("", [])  # no text: the mode is not looked at
    assert format_text("  ", None, caption=True) == ("", [])
    # tdlib checks 4096/1024 characters once the chat is known: sending.py does
    assert format_text("x" * 1025, None, caption=True)[0] == "x" * 1025
    assert format_text("<b>" + "x" * 4097 + "</b>", "HTML")[0] == "x" * 4097


def test_explicit_entities_are_kept_trimmed_and_joined_by_found_ones() -> None:
    text, entities = format_text(
        "  Join /start now  ",
        None,
        '[{"type": "bold", "offset": 2, "length": 4},'
        ' {"type": "mention", "offset": 0, "length": 1}]',
    )
    assert text == "Join /start now"
    assert entities == [
        {"offset": 0, "length": 4, "type": "bold"},
        {"offset": 5, "length": 6, "type": "bot_command"},
    ]
    # bot api: entities JSON that does not parse is ignored, and so is entities with a parse mode
    assert format_text("a", None, "[oops") == ("a", [])
    assert format_text("<i>a</i>", "HTML", [{"type": "bold", "offset": 0, "length": 1}]) == (
        "a",
        [{"offset": 0, "length": 1, "type": "italic"}],
    )


def test_entity_json_as_the_bot_api_writes_it() -> None:
    ann = Account(42, "Ann", username="ann")
    html = (
        '<a href="tg://user?id=42">Ann</a> <a href="tg://user?id=7">Bob</a> <tg-emoji emoji-id="5">'
        '👍</tg-emoji> <tg-time unix="1700000000" format="Dwt">then</tg-time> <pre><code '
        'class="language-python">x</code></pre>'
    )
    text, entities = format_text(html, "HTML", users={42: ann})
    assert text == "Ann Bob 👍 then x"
    assert entities == [
        {"offset": 0, "length": 3, "type": "text_mention", "user": ann.json()},
        # tdlib/telegram-bot-api#687: a mention of someone unknown is dropped
        {"offset": 8, "length": 2, "type": "custom_emoji", "custom_emoji_id": "5"},
        {
            "offset": 11,
            "length": 4,
            "type": "date_time",
            "unix_time": 1700000000,
            "date_time_format": "wDt",
        },
        {"offset": 16, "length": 1, "type": "pre", "language": "python"},
    ]
    _, [mention] = format_text('<a href="tg://user?id=7">Bob</a>', "HTML")
    assert mention["user"] == {"id": 7, "is_bot": False, "first_name": ""}


def test_a_person_sends_text_as_their_app_does() -> None:
    assert user_text("  /start@gate_bot go \r\n") == (
        "/start@gate_bot go",
        [{"offset": 0, "length": 15, "type": "bot_command"}],
    )
    with pytest.raises(ValueError, match="Text must be non-empty"):
        user_text(" \n ")


def test_a_text_formatted_again_comes_from_the_cache_as_a_copy_of_its_own() -> None:
    # The same text is formatted once; what a caller gets is its own to change.
    html = "<b>Join</b> /start at https://t.me/news"
    first = format_text(html, "HTML")
    first[1][0]["type"] = "changed"
    first[1].clear()
    again = format_text(html, "HTML")
    assert again == ("Join /start at https://t.me/news", again[1])
    assert [e["type"] for e in again[1]] == ["bold", "bot_command", "url"]
    # The raw entities JSON is part of the key: text or decoded array, the same answer.
    as_text = format_text("ab", None, '[{"type": "bold", "offset": 0, "length": 1}]')
    as_array = format_text("ab", None, [{"type": "bold", "offset": 0, "length": 1}])
    assert as_text == as_array == ("ab", [{"offset": 0, "length": 1, "type": "bold"}])
    assert format_text("ab", None, [{"type": "italic", "offset": 1, "length": 1}])[1] == [
        {"offset": 1, "length": 1, "type": "italic"}
    ]
    # A caption and a text of the same words differ: an empty caption is allowed.
    assert format_text(" ", None, caption=True) == ("", [])
    assert api_error(" ", None) == "Bad Request: text must be non-empty"


@pytest.mark.parametrize("users_first", [False, True])
def test_who_a_mention_names_is_looked_up_on_every_call(users_first: bool) -> None:
    # Without users every mention is kept (and cached); with users, a mention of someone
    # unknown is dropped (tdlib/telegram-bot-api#687), whatever was cached before.
    html = '<a href="tg://user?id=77">Zed</a> hi'
    ann = Account(42, "Ann")
    calls = [({42: ann}, []), (None, ["text_mention"])]
    for users, kinds in reversed(calls) if users_first else calls:
        _, entities = format_text(html, "HTML", users=users)
        assert [e["type"] for e in entities] == kinds
    zed = Account(77, "Zed")
    _, [mention] = format_text(html, "HTML", users={77: zed})
    assert mention["user"] == zed.json()
