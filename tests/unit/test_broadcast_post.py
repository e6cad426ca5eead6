"""A broadcast's post becomes one Bot API call, or a clear error before anything is queued."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.features.broadcasts.post import Button, Post, build, check_url
from sponsorbot.features.broadcasts.service import progress
from sponsorbot.features.errors import Invalid


def test_a_text_post_with_buttons_and_options() -> None:
    post = Post(
        text="<b>Sale</b> today",
        buttons=(
            (Button("Shop", "https://shop.example"), Button("Chat", "tg://resolve?domain=x")),
        ),
        protect=True,
        silent=True,
        paid=True,
    )
    call = build(post)
    assert call.method == "sendMessage"
    assert call.params == {
        "text": "<b>Sale</b> today",
        "parse_mode": "HTML",
        "reply_markup": {
            "inline_keyboard": [
                [
                    {"text": "Shop", "url": "https://shop.example"},
                    {"text": "Chat", "url": "tg://resolve?domain=x"},
                ]
            ]
        },
        "protect_content": True,
        "disable_notification": True,
        "allow_paid_broadcast": True,
    }
    assert Post.of_json(post.as_json()) == post


def test_media_with_and_without_a_caption() -> None:
    photo = build(Post(text="", media_kind="photo", file_id="AgACAgIAAxkBAAIB"))
    assert photo.method == "sendPhoto" and photo.params == {"photo": "AgACAgIAAxkBAAIB"}
    doc = build(Post(text="<i>Read</i>", media_kind="document", file_id="BQACAgIAAxkBAAIC"))
    assert doc.params["caption"] == "<i>Read</i>" and doc.params["parse_mode"] == "HTML"


@pytest.mark.parametrize(
    ("post", "error"),
    [
        (Post(text=""), "message text is empty"),
        (Post(text=" \n "), "text must be non-empty"),
        (Post(text="<x>hi</x>"), 'Unsupported start tag "x" at byte offset 0'),
        (Post(text="x" * 4097), "message is too long"),
        (Post(text="x" * 1025, media_kind="photo", file_id="AgACAgIAAxkB"), "caption is too long"),
        (Post(text="hi", media_kind="photo"), "file_id"),
        (Post(text="hi", file_id="AgACAgIAAxkB"), "what kind of file"),
        (Post(text="hi", media_kind="sticker", file_id="AgACAgIAAxkB"), "media kind"),
        (Post(text="hi", buttons=((Button("", "https://a.example"),),)), "label"),
        (Post(text="hi", buttons=((Button("Go", "javascript:alert(1)"),),)), "not a valid URL"),
        (Post(text="hi", buttons=((Button("Go", "https://"),),)), "not a valid URL"),
        (Post(text="hi", buttons=tuple((Button("a", "https://a.b"),) for _ in range(11))), "rows"),
    ],
)
def test_what_telegram_would_refuse_is_refused(post: Post, error: str) -> None:
    with pytest.raises(Invalid) as caught:
        build(post)
    assert error in str(caught.value)


@given(
    st.text(
        alphabet=st.characters(blacklist_characters="<&", blacklist_categories=["Cs"]),
        min_size=1,
        max_size=200,
    )
)
def test_plain_text_is_sent_as_written_or_refused_as_empty(text: str) -> None:
    try:
        call = build(Post(text=text))
    except Invalid as exc:
        assert "empty" in str(exc) or "non-empty" in str(exc)
        return
    assert call.params["text"] == text


def test_a_lone_surrogate_is_refused_as_telegram_would() -> None:
    # JSON may carry "\ud800"; it is no UTF-8 text, and nothing of it is stored or sent.
    with pytest.raises(Invalid) as caught:
        build(Post(text="hi \ud800"))
    assert "encoded in UTF-8" in str(caught.value)


def test_urls() -> None:
    assert check_url(" https://a.example/x ") == "https://a.example/x"
    with pytest.raises(Invalid):
        check_url("ftp://a.example")


def test_progress_figures() -> None:
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    row = {
        "sent": 90, "blocked": 5, "failed": 3, "unknown": 2, "recipients": 400, "estimated": 1000,
        "chosen": False, "status": "sending", "started_at": now - timedelta(seconds=10),
    }  # fmt: skip
    figures = progress(row, now)
    assert figures == {
        "done": 100, "total": 1000, "percent": 10.0, "rate_per_s": 10.0, "seconds_left": 90,
    }  # fmt: skip
    finished = progress({**row, "status": "done", "chosen": True}, now)
    assert finished["percent"] == 100.0 and finished["total"] == 400
    assert finished["rate_per_s"] is None
    empty = progress({**row, "sent": 0, "blocked": 0, "failed": 0, "unknown": 0,
                      "recipients": 0, "estimated": 0, "chosen": True}, now)  # fmt: skip
    assert empty["percent"] == 0.0
