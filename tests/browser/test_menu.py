"""The panel's top menu shows every item: on a laptop's screen all of them, in English and in
Persian (right to left), and on a phone behind a Menu button that opens the full list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg
import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect

from tests.browser.kit import NEEDS_CHROMIUM, sign_in
from tests.browser.test_panel import serve
from tests.integration.panel_kit import PASSWORD, add_member

pytestmark = [pytest.mark.browser, NEEDS_CHROMIUM]

# What an owner's menu holds, in the order of the page.
MENU = [
    "/",
    "/bots",
    "/stats",
    "/visitors",
    "/campaigns",
    "/broadcasts",
    "/shop/orders",
    "/team",
    "/audit",
    "/tokens",
    "/settings",
]
SCREENS = [(1280, 800), (1366, 900)]
PHONE = (390, 844)
EMAIL = "sara@example.com"


async def _inside(page: Any, link: Any, width: int, height: int) -> str | None:
    """Why the link is not fully shown in the viewport, or None when it is."""
    if not await link.is_visible():
        return "hidden"
    box = await link.bounding_box()
    assert box is not None
    inside = (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width
        and box["y"] + box["height"] <= height
    )
    # A parent that scrolls or clips would hide the link although its box is in the viewport.
    clipped = await link.evaluate(
        """(a) => {
            const r = a.getBoundingClientRect();
            const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
            return !(hit === a || a.contains(hit));
        }"""
    )
    if not inside:
        return f"outside the viewport: {box}"
    return "covered or clipped" if clipped else None


async def _signed_in(
    chromium: Browser, pool: asyncpg.Pool, url: str, size: tuple[int, int], lang: str
) -> tuple[BrowserContext, Page]:
    """A fresh context of that viewport size, signed in and reading `lang` (the language is the
    member's, kept from the last switch: put back to English first)."""
    await pool.execute("UPDATE users SET language = 'en' WHERE email = $1", EMAIL)
    context = await chromium.new_context(viewport={"width": size[0], "height": size[1]})
    page = await context.new_page()
    await sign_in(page, url, EMAIL, PASSWORD)
    if lang == "fa":
        await page.click("header button[name=language][value=fa]")
        await expect(page.locator("html")).to_have_attribute("dir", "rtl")
    return context, page


async def test_every_menu_item_is_shown_on_a_laptop_and_behind_menu_on_a_phone(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    async with serve(pool, db_dsn, tmp_path) as app:
        await add_member(pool, "owner", EMAIL)
        # A long name, as the header's tools take room from the menu.
        await pool.execute("UPDATE users SET name = 'Sara Rahimi-Owner' WHERE email = $1", EMAIL)
        failures: list[str] = []
        for width, height in SCREENS:
            for lang in ("en", "fa"):
                context, page = await _signed_in(chromium, pool, app.url, (width, height), lang)
                async with context:
                    links = page.locator("header nav.nav a")
                    assert [await a.get_attribute("href") for a in await links.all()] == MENU
                    await expect(page.locator("details.menu")).to_be_hidden()
                    for link in await links.all():
                        problem = await _inside(page, link, width, height)
                        if problem:
                            name = await link.inner_text()
                            failures.append(f"{width}x{height} {lang} {name}: {problem}")
        for lang in ("en", "fa"):
            context, page = await _signed_in(chromium, pool, app.url, PHONE, lang)
            async with context:
                await expect(page.locator("header nav.nav")).to_be_hidden()
                button = page.locator("details.menu summary")
                await expect(button).to_have_text("Menu" if lang == "en" else "منو")
                listed = page.locator("details.menu nav.menu-list a")
                await expect(listed.first).to_be_hidden()
                await button.click()
                assert [await a.get_attribute("href") for a in await listed.all()] == MENU
                for link in await listed.all():
                    problem = await _inside(page, link, *PHONE)
                    if problem:
                        failures.append(f"phone {lang} {await link.inner_text()}: {problem}")
                await listed.filter(has_text="Settings" if lang == "en" else "تنظیمات").click()
                await expect(page).to_have_url(f"{app.url}/settings")
        assert not failures, "\n".join(failures)
