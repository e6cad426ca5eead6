"""The panel's paging: the page asked for in the address, the page count, the links beside it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import Request

from sponsorbot.web.panel.paging import neighbours, page_count, page_number


def _asking(query: str) -> Request:
    return Request({"type": "http", "query_string": query.encode(), "headers": []})


def test_page_number_reads_small_whole_numbers_only() -> None:
    assert page_number(_asking("")) == 1
    assert page_number(_asking("page=3")) == 3
    assert page_number(_asking("page=0")) == 1
    assert page_number(_asking("page=-2")) == 1
    assert page_number(_asking("page=2.5")) == 1
    assert page_number(_asking("page=%C2%B2")) == 1  # "²" is a digit int() refuses
    assert page_number(_asking("page=99999")) == 99999
    assert page_number(_asking("page=100000")) == 1


def test_page_number_stops_at_the_last_page() -> None:
    assert page_number(_asking("page=7"), last=5) == 5
    assert page_number(_asking("page=4"), last=5) == 4


@given(st.integers(0, 10_000), st.integers(1, 100))
def test_page_count_holds_every_row_once(total: int, size: int) -> None:
    pages = page_count(total, size)
    assert pages >= 1
    assert (pages - 1) * size <= max(total - 1, 0)
    assert pages * size >= total


@given(st.integers(1, 1000), st.integers(0, 10_000), st.integers(1, 100))
def test_older_link_exactly_when_rows_follow(number: int, total: int, size: int) -> None:
    links = neighbours(number, number < page_count(total, size), lambda n: f"?page={n}")
    assert (links["older"] is not None) == (number * size < total)
    assert links["older"] in (None, f"?page={number + 1}")
    assert links["newer"] == (f"?page={number - 1}" if number > 1 else None)
