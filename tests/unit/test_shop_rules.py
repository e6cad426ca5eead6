"""The shop's pure rules: prices, TRX amounts at a locked rate, part payments, reminders,
order moves, and what the dialogue takes as material, shows in its summary and takes as a hash."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.features.broadcasts.post import check_url
from sponsorbot.features.errors import Invalid
from sponsorbot.features.shop.dialogue import (
    HASHY,
    Unusable,
    advertiser_url,
    banner_of,
    describe,
    post_of,
)
from sponsorbot.features.shop.rules import (
    MOVES,
    STATES,
    MoneyError,
    after_credit,
    can,
    parse_price,
    reminders_due,
    show,
    trx_in_usdt,
    trx_to_ask,
)
from sponsorbot.telegram.html import check_message_text

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
prices = st.decimals(min_value=Decimal("0.000001"), max_value=Decimal("999999"), places=6)
rates = st.decimals(min_value=Decimal("0.0001"), max_value=Decimal("100"), places=8)


def test_prices_are_positive_usdt_with_six_places_at_most() -> None:
    assert parse_price("12.5") == Decimal("12.500000")
    assert parse_price(" 7,25 ") == Decimal("7.25")
    for bad, why in (
        ("0", "more than 0"),
        ("-1", "more than 0"),
        ("abc", "not a number"),
        ("NaN", "not a number"),
        ("Infinity", "not a number"),
        ("1.0000001", "6 decimal places"),
        ("1000000", "below"),
    ):
        with pytest.raises(MoneyError, match=why):
            parse_price(bad)


@given(prices, rates)
def test_paying_the_trx_asked_for_always_covers_the_price(usdt: Decimal, rate: Decimal) -> None:
    asked = trx_to_ask(usdt, rate)
    assert asked == asked.quantize(Decimal("0.01"))
    assert trx_in_usdt(asked, rate) >= usdt
    # And never more than a cent of TRX over what is needed.
    assert (asked - Decimal("0.01")) * rate < usdt


def test_trx_is_counted_down_to_six_places_never_through_a_float() -> None:
    assert trx_in_usdt(Decimal("100"), Decimal("0.2873333")) == Decimal("28.733330")
    assert trx_in_usdt(Decimal("0.000001"), Decimal("0.29")) == Decimal("0")
    assert trx_to_ask(Decimal("10"), Decimal("0.3")) == Decimal("33.34")
    assert show(Decimal("10.500000")) == "10.5"
    assert show(Decimal("1E+3")) == "1000"


def test_a_part_payment_gets_48_hours_from_the_first_part() -> None:
    first = after_credit("awaiting_payment", Decimal(10), Decimal(0), Decimal(4), None, NOW)
    assert (first.state, first.paid, first.left) == ("partly_paid", Decimal(4), Decimal(6))
    assert first.due_at == NOW + timedelta(hours=48)
    later = NOW + timedelta(hours=30)
    second = after_credit("partly_paid", Decimal(10), first.paid, Decimal(1), first.due_at, later)
    assert second.due_at == first.due_at
    done = after_credit("partly_paid", Decimal(10), Decimal(5), Decimal(7), first.due_at, later)
    assert (done.state, done.extra, done.left) == ("paid", Decimal(2), Decimal(0))


@given(st.lists(prices, min_size=1, max_size=6), prices)
def test_payments_add_up_and_paid_means_the_price_is_reached(
    parts: list[Decimal], price: Decimal
) -> None:
    paid, state, due = Decimal(0), "awaiting_payment", None
    for part in parts:
        step = after_credit(state, price, paid, part, due, NOW)
        paid, state, due = step.paid, step.state, step.due_at
        assert (state == "paid") == (paid >= price)
        assert step.left + min(paid, price) == price
    assert paid == sum(parts)


def test_reminders_go_at_24_and_4_hours_before_the_end_and_only_once() -> None:
    due = NOW + timedelta(hours=48)
    assert reminders_due(due, 0, NOW) == 0
    assert reminders_due(due, 0, due - timedelta(hours=24)) == 1
    assert reminders_due(due, 1, due - timedelta(hours=5)) == 1
    assert reminders_due(due, 1, due - timedelta(hours=4)) == 2
    assert reminders_due(due, 2, due + timedelta(hours=1)) == 2


def test_moves_name_real_states_and_money_is_never_left_in_a_dead_end() -> None:
    for sources in MOVES.values():
        assert set(sources) <= set(STATES)
    assert can("approve", "submitted") and not can("approve", "rejected")
    assert not can("cancel", "paid")  # paid money is refunded, not cancelled away
    for state in ("partly_paid", "paid", "running", "completed", "expired"):
        assert can("refund", state)


def test_a_post_keeps_its_text_media_and_button_lines() -> None:
    post = post_of(
        {
            "caption": "New <films> & more\nWatch - https://example.com/w\nJoin | tg://resolve?d=x",
            "photo": [{"file_id": "AgACAgIAAxkBAAMs"}, {"file_id": "AgACAgIAAxkBAAMt"}],
        }
    )
    assert post.text == "New &lt;films&gt; &amp; more"
    assert (post.media_kind, post.file_id) == ("photo", "AgACAgIAAxkBAAMt")
    assert [[(b.text, b.url) for b in row] for row in post.buttons] == [
        [("Watch", "https://example.com/w")],
        [("Join", "tg://resolve?d=x")],
    ]
    with pytest.raises(Unusable):
        post_of({"text": "   "})
    with pytest.raises(Invalid):
        post_of({"text": "x" * 5000})


def test_a_post_keeps_the_advertisers_formatting_but_not_that_of_its_button_lines() -> None:
    post = post_of(
        {
            "text": "Big 🎬 sale today\nShop - https://shop.example",
            "entities": [
                {"type": "bold", "offset": 0, "length": 3},
                {"type": "text_link", "offset": 7, "length": 4, "url": "https://x.example/?a&b"},
                {"type": "url", "offset": 25, "length": 20},
            ],
        }
    )
    assert post.text == '<b>Big</b> 🎬 <a href="https://x.example/?a&amp;b">sale</a> today'
    assert [b.text for row in post.buttons for b in row] == ["Shop"]


def test_a_banner_is_a_line_of_text_and_a_link() -> None:
    assert banner_of({"text": "Visit us\n https://example.com "}) == {
        "text": "Visit us",
        "url": "https://example.com",
    }
    for bad in ("only text", "a\nb\nc", "Visit\nnot a link"):
        with pytest.raises((Unusable, Invalid)):
            banner_of({"text": bad})


def test_an_advertisers_links_are_https_or_tg_resolve_and_nothing_else() -> None:
    for good in ("https://shop.example/a?b=1", "HTTPS://Shop.example", "tg://resolve?domain=ada"):
        assert advertiser_url(f" {good} ") == good
    for bad in (
        "http://shop.example",
        "tg://proxy?server=p.example&port=443&secret=ee00",
        "tg://socks?server=p.example&port=1080",
        "tg://resolve",
        "tg://resolve/x?domain=ada",
        "https://",
        "https://[::1",
        "https://shop.example/a b",
        "javascript:alert(1)",
        "ftp://shop.example",
    ):
        with pytest.raises(Unusable):
            advertiser_url(bad)
    # A banner's link and a post's button lines are checked so; the owner's own posts are not.
    with pytest.raises(Unusable):
        banner_of({"text": "Visit us\nhttp://shop.example"})
    with pytest.raises(Unusable):
        post_of({"text": "Sale\nFaster - tg://proxy?server=p.example&port=443&secret=ee00"})
    assert check_url("http://shop.example") == "http://shop.example"


def test_a_long_posts_summary_is_cut_in_its_text_and_telegram_can_parse_it() -> None:
    text = "a" * 295 + " bold, <b> & more" * 20
    bold = {"type": "bold", "offset": 295, "length": len(text) - 295}
    post = post_of({"text": text, "entities": [bold]})
    assert post.text.startswith("a" * 295 + "<b> bold, &lt;b&gt;")
    summary = describe("broadcast", {"post": post.as_json()})
    # Cut in the HTML, at 300 characters, this was an unclosed <b> Telegram refuses.
    assert check_message_text(summary).text == f"📝 {text[:300]}…"
    short = describe("broadcast", {"post": post_of({"text": "<i>Hi</i> & bye"}).as_json()})
    assert short == "📝 &lt;i&gt;Hi&lt;/i&gt; &amp; bye"


def test_what_looks_like_a_hash_is_taken_as_one_and_words_are_not() -> None:
    h = "a" * 64
    for text in (h, "0x" + h.upper(), f"https://tronscan.org/#/transaction/{h}", "a1" * 20):
        assert HASHY.search(text)
    for text in ("hello", "/start abc", "I paid", "12345"):
        assert not HASHY.search(text)
