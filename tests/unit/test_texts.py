"""Visitor texts: the owner's overrides are filled by name only, never by str.format."""

from __future__ import annotations

import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.features.texts import DEFAULTS, KEYS, LANGUAGES, render, text_problem


def test_a_format_spec_in_an_override_is_refused() -> None:
    """M2: `{title:>99999999999999}` passed validation and raised MemoryError per visitor."""
    problem = text_problem("channel_added", "Added {title:>99999999999999}")
    assert problem is not None and problem["problem"] == "placeholders"
    assert problem["unknown"] == ["title:>99999999999999"]
    for spec in ("{title!r}", "{title.__class__}", "{title[0]}", "{0}", "{}"):
        assert text_problem("channel_added", f"x {spec}") is not None, spec


def test_a_stored_override_with_a_format_spec_renders_the_default_without_allocating() -> None:
    """M2: an override stored before the check falls back to our text, cheaply."""
    overrides = {"en": {"channel_added": "Added {title:>2000000000}"}}
    tracemalloc.start()
    try:
        text = render("channel_added", "en", overrides, title="News")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text == render("channel_added", "en", title="News")
    assert peak < 1_000_000


def test_braces_doubled_are_braces_and_a_lone_one_is_unbalanced() -> None:
    assert text_problem("channel_added", "{{note}} {title}") is None
    assert render("channel_added", "en", {"en": {"channel_added": "{{x}} {title}"}}, title="T") == (
        "{x} T"
    )
    assert text_problem("channel_added", "Added { {title}") == {"problem": "unbalanced"}
    assert text_problem("channel_added", "Added }") == {"problem": "unbalanced"}


def test_every_default_renders_with_its_own_placeholders() -> None:
    for lang in LANGUAGES:
        for key in KEYS:
            assert text_problem(key, DEFAULTS[lang][key]) is None, (lang, key)


@given(st.text(max_size=200))
def test_any_override_that_passes_the_check_renders(text: str) -> None:
    """Whatever an owner types either gets a clear problem or renders; nothing raises."""
    if text.strip() and text_problem("channel_added", text) is None:
        assert isinstance(
            render("channel_added", "en", {"en": {"channel_added": text}}, title="T"), str
        )
