"""A broadcast in a real browser: the owner sets their Telegram id, writes a post, watches the
audience count follow the filters, sends a preview to themselves, sends it to everyone and
watches the progress bar reach 100% on the same page (no reload), then reads the report.

Set SPONSORBOT_SCREENSHOTS=1 to also write broadcast-form-, broadcast- and broadcasts-
screenshots, in English and Persian, in docs/screenshots/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg
import pytest
from playwright.async_api import Browser

from tests.browser.kit import NEEDS_CHROMIUM, shot, sign_in
from tests.browser.test_panel import serve
from tests.integration.broadcastkit import add_people
from tests.integration.panel_kit import PASSWORD, add_member

pytestmark = [
    pytest.mark.browser,
    NEEDS_CHROMIUM,
]
AUDIENCE = 60


async def test_compose_preview_send_and_watch_the_progress_reach_100(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    from playwright.async_api import Dialog, expect

    async with serve(pool, db_dsn, tmp_path) as app:
        sim: Any = app.sim
        base = app.url
        bot = await sim.create_bot("weekly_news_bot")
        email = await add_member(pool, "owner", "sara@example.com")
        context = await chromium.new_context(viewport={"width": 1280, "height": 900})
        try:
            page = await context.new_page()

            async def accept(dialog: Dialog) -> None:
                await dialog.accept()

            page.on("dialog", accept)  # the confirmations of Send now
            await sign_in(page, base, email, PASSWORD)

            # The bot, and an audience who started it earlier.
            await page.goto(f"{base}/bots")
            await page.fill("#f-token", bot["token"])
            await page.click("main button.primary")
            await expect(page.locator("table.list")).to_contain_text("@weekly_news_bot")
            bot_id = await pool.fetchval(
                "SELECT id FROM bots WHERE username = $1", "weekly_news_bot"
            )
            people = await add_people(sim, pool, bot_id, bot["username"], AUDIENCE)

            # The owner's own Telegram id: one of the people who started the bot.
            me = people[0]
            await page.goto(f"{base}/account")
            await page.fill("#f-telegram_id", str(me))
            await page.click("text=Save the Telegram id")
            await expect(page.locator("#f-telegram_id")).to_have_value(str(me))

            # Compose: none yet, then the form with its live audience count.
            await page.goto(f"{base}/broadcasts")
            await expect(page.locator(".card.empty h2")).to_have_text("No broadcasts yet")
            await page.click("text=Write the first broadcast")
            await expect(page.locator("#audience-count")).to_contain_text("Choose a bot")
            await page.select_option("#f-bot_id", str(bot_id))
            await expect(page.locator("#audience-n")).to_have_text(f"{AUDIENCE} people")
            await page.select_option("#f-language", "fa")
            await expect(page.locator("#audience-n")).to_have_text("0 people")
            await page.select_option("#f-language", "")
            await expect(page.locator("#audience-n")).to_have_text(f"{AUDIENCE} people")
            await page.fill("#f-title", "Spring sale")
            await page.fill("#f-text", "<b>Spring sale</b>\nEverything half price <i>this week</i>")
            await page.fill(
                "#f-buttons",
                "Open the shop | https://example.com/shop ;; Channel | https://t.me/example",
            )
            await page.check("input[name=silent]")
            await shot(page, "broadcast-form-en")

            # A preview to the owner's own chat; the form stays as typed.
            await page.click("button[value=preview]")
            await expect(page.locator(".ok.banner")).to_have_text(
                "The preview was sent to your Telegram."
            )
            await expect(page.locator("#f-title")).to_have_value("Spring sale")
            chat = await sim.read_chat(me, bot["username"])
            assert chat[-1]["text"] == "Spring sale\nEverything half price this week"
            assert [b["text"] for b in chat[-1]["buttons"][0]] == ["Open the shop", "Channel"]

            # Send now: the detail page's bar fills in place, the page is never reloaded.
            await page.click("button[value=send]")
            await expect(page.locator("h1")).to_have_text("Spring sale")
            await page.evaluate("window.stillTheSamePage = true")
            live = page.locator("#live")
            await expect(live.locator(".badge")).to_have_text("Finished", timeout=60_000)
            await expect(live.locator("progress")).to_have_attribute("value", "100.0")
            assert await page.evaluate("window.stillTheSamePage") is True
            await expect(live.locator("#sent")).to_have_text(str(AUDIENCE))
            await expect(live.locator("#blocked")).to_have_text("0")
            await expect(live.locator(".goal")).to_contain_text(f"{AUDIENCE} of {AUDIENCE}")
            await expect(page.locator("#post-text")).to_contain_text("Everything half price")
            await expect(page.locator("table.history")).to_contain_text("Broadcast created")
            last = await sim.read_chat(people[-1], bot["username"])
            assert last[-1]["text"] == "Spring sale\nEverything half price this week"
            await shot(page, "broadcast-en")
            await page.click("main .head a >> text=Broadcasts")
            await expect(page.locator("table.list tbody tr")).to_contain_text("Finished")
            await shot(page, "broadcasts-en")

            # Persian: right to left, Persian digits.
            await page.click("header >> text=فارسی")
            await expect(page.locator("html")).to_have_attribute("dir", "rtl")
            await expect(page.locator("h1")).to_have_text("پیام‌های همگانی")
            await shot(page, "broadcasts-fa")
            await page.click("table.list tbody a")
            await expect(page.locator("#live .badge")).to_have_text("پایان‌یافته")
            await expect(page.locator("#sent")).to_have_text("۶۰")
            await shot(page, "broadcast-fa")
            await page.goto(f"{base}/broadcasts/new?bot={bot_id}")
            await expect(page.locator("#audience-n")).to_have_text("۶۰ نفر")
            await shot(page, "broadcast-form-fa")
        finally:
            await context.close()
