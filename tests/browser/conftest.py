"""The browser tests' chromium: launched once per session, with a fresh context in each test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, async_playwright

from tests.browser.kit import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="session")
async def chromium() -> AsyncIterator[Browser]:
    """Debian's chromium, launched once for the session (once per xdist worker).

    Starting chromium takes longer than most of what a test does in it. Each test opens its own
    contexts on it and closes them: a context shares no cookies, storage or pages with another,
    so no test sees what an earlier one left.
    """
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()
