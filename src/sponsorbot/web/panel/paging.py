"""Numbered pages of the panel's lists: the page a viewer asked for, and the links to the pages
beside it, read and built the same way on every list page."""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request

# A page number longer than this is not one anybody typed on purpose: it reads as page 1.
MAX_DIGITS = 5


def page_number(request: Request, last: int | None = None) -> int:
    """The page asked for in `?page=`: 1 when it is missing or not a small whole number, and
    at most `last` when a list has a last page it can reach."""
    raw = request.query_params.get("page", "1")
    number = max(int(raw), 1) if raw.isdecimal() and len(raw) <= MAX_DIGITS else 1
    return number if last is None else min(number, last)


def page_count(total: int, size: int) -> int:
    """How many pages of `size` rows `total` rows fill (an empty list is one empty page)."""
    return max((total + size - 1) // size, 1)


def neighbours(number: int, more: bool, url: Callable[[int], str]) -> dict[str, str | None]:
    """The Newer and Older links around page `number` (None where there is no such page);
    `more` says whether rows follow this page."""
    return {
        "newer": url(number - 1) if number > 1 else None,
        "older": url(number + 1) if more else None,
    }
