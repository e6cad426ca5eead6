"""The statistics CSV export on its own: text others choose (a channel's title, a campaign's
name) never reaches a spreadsheet as a formula."""

from __future__ import annotations

import pytest

from sponsorbot.web.panel.routes_stats import csv_cell


@pytest.mark.parametrize(
    "risky", ["=1+2", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx", '=HYPERLINK("https://x.example")']
)
def test_text_that_would_start_a_formula_gets_a_leading_quote(risky: str) -> None:
    assert csv_cell(risky) == "'" + risky


def test_other_text_and_numbers_are_written_as_they_are() -> None:
    for plain in ("Ada's channel", "کانال آدا", "", "1-2", "a=b", " =x"):
        assert csv_cell(plain) == plain
    for number in (-5, 0, 3.5, -1001234567890):
        assert csv_cell(number) == number
