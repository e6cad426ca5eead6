"""The Jalali calendar, Persian digits and separators, both ways; and the shop's deadlines as an
advertiser reads them (the workspace's zone, Jalali in Persian)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.features.calendar import (
    from_jalali,
    jalali_text,
    latin_digits,
    local_moment,
    parse_jalali,
    persian_number,
    to_jalali,
)
from sponsorbot.features.shop import notices

# jdatetime covers Jalali years 1..9377; the panel's dates are well inside.
DAYS = st.dates(min_value=date(1900, 1, 1), max_value=date(2200, 12, 31))


@given(DAYS)
def test_gregorian_to_jalali_and_back_is_the_same_day(day: date) -> None:
    assert from_jalali(*to_jalali(day)) == day


@given(DAYS, st.booleans())
def test_a_jalali_date_as_typed_reads_back_as_its_day(day: date, persian: bool) -> None:
    typed = jalali_text(day)
    if persian:
        typed = persian_number(typed)
    assert parse_jalali(typed) == (day, None)


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=0, max_value=999))
def test_persian_separators_read_back_as_the_number(whole: int, cents: int) -> None:
    written = persian_number(f"{whole:,}.{cents:03d}")
    assert "," not in written and "." not in written
    assert Decimal(latin_digits(written).replace(",", "")) == Decimal(f"{whole}.{cents:03d}")


def test_known_days_and_what_a_persian_keyboard_types() -> None:
    assert to_jalali(date(2026, 12, 5)) == (1405, 9, 14)
    assert parse_jalali("۱۴۰۵/۰۹/۱۴ ۱۸:۳۰") == (date(2026, 12, 5), time(18, 30))
    assert parse_jalali("1405-9-14") == (date(2026, 12, 5), None)
    assert parse_jalali("١٤٠٥.٠٩.١٤") == (date(2026, 12, 5), None)  # Arabic-Indic digits
    assert persian_number("1,234.5") == "۱٬۲۳۴٫۵"


@pytest.mark.parametrize("typed", ["", "1405/13/01", "1405/12/31", "14050914", "1405/09/14 25:00"])
def test_what_is_not_a_jalali_date_is_refused(typed: str) -> None:
    with pytest.raises(ValueError):
        parse_jalali(typed)


def test_a_moment_in_the_workspace_zone() -> None:
    at = datetime(2026, 12, 5, 20, 11, tzinfo=UTC)
    assert local_moment(at, "Asia/Tehran", "en") == "2026-12-05 23:41 (Asia/Tehran)"
    assert local_moment(at, "Asia/Tehran", "fa") == "۱۴۰۵/۰۹/۱۴ ۲۳:۴۱ (Asia/Tehran)"


def order(language: str) -> dict[str, object]:
    return {
        "id": 11,
        "user_id": 42,
        "language": language,
        "zone": "Asia/Tehran",
        "network": "mainnet",
        "address": bytes.fromhex("41" + "11" * 20),
        "accept_usdt": True,
        "accept_trx": False,
        "due_usdt": Decimal("15.000123"),
        "usdt_per_trx": None,
        "due_trx": None,
        "expires_at": datetime(2026, 12, 5, 20, 11, tzinfo=UTC),
    }


def test_the_payment_request_gives_the_deadline_in_the_workspace_zone() -> None:
    english = notices.payment_request(order("en"), {}).params["text"]
    assert "Pay by 2026-12-05 23:41 (Asia/Tehran)" in english
    assert "(UTC)" not in english and "(mainnet)" in english
    persian = notices.payment_request(order("fa"), {}).params["text"]
    assert "\u2066۱۴۰۵/۰۹/۱۴ ۲۳:۴۱ (Asia/Tehran)\u2069" in persian
    assert "mainnet" not in persian and "(شبکهٔ اصلی)" in persian
    assert "\u206615.000123 USDT (TRC-20)\u2069" in persian.replace("<code>", "").replace(
        "</code>", ""
    ).replace("<b>", "").replace("</b>", "")
