"""What every browser test needs: Debian's chromium, started the way this machine allows, and
signing in to the panel."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
# Browser tests skip, with the reason, where chromium is not installed.
NEEDS_CHROMIUM = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason=f"Debian's chromium is not installed at {CHROMIUM}"
)
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


async def shot(page: Any, name: str, full_page: bool = True) -> None:
    """With SPONSORBOT_SCREENSHOTS=1, write the page to docs/screenshots/<name>.png: the whole
    page, or with `full_page=False` what the viewport shows (the simulated phone: its message
    bar is fixed to the bottom, and a whole-page shot would draw it across the chat)."""
    if os.environ.get("SPONSORBOT_SCREENSHOTS") != "1":
        return
    SHOTS.mkdir(parents=True, exist_ok=True)
    if full_page:
        # From the top: scrolled, the sticky header lands mid-page in a full-page shot.
        await page.evaluate("window.scrollTo(0, 0)")
    await page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)


async def sign_in(page: Any, base: str, email: str, password: str) -> None:
    """Sign in on the panel's page, as a member would, and land on the dashboard."""
    await page.goto(f"{base}/signin")
    await page.fill("#f-email", email)
    await page.fill("#f-password", password)
    await page.click("main button.primary")
    await expect(page.locator("h1")).to_have_text("Dashboard")
