"""A campaign in a real browser: the owner creates it in the panel, a visitor on the simulator's
phone page passes the gate through the campaign's own link, the sponsor's report shows the join.

Set SPONSORBOT_SCREENSHOTS=1 to also write campaigns-, campaign- and report- screenshots, in
English and Persian, in docs/screenshots/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg
import pytest
from playwright.async_api import Browser

from tests.browser.kit import NEEDS_CHROMIUM, shot, sign_in
from tests.browser.test_panel import serve
from tests.integration.panel_kit import PASSWORD, add_member

pytestmark = [
    pytest.mark.browser,
    NEEDS_CHROMIUM,
]


async def test_a_visitor_joins_through_the_campaign_link_and_the_report_shows_it(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    from playwright.async_api import expect

    async with serve(pool, db_dsn, tmp_path) as app:
        sim: Any = app.sim
        base = app.url
        bot = await sim.create_bot("sponsor_demo_bot")
        sponsor = await sim.create_user("Sponsor")
        channel = await sim.create_channel(
            "Sponsor News", username="sponsor_news", owner_id=sponsor["id"]
        )
        await sim.make_admin(channel["id"], bot["id"])
        email = await add_member(pool, "owner", "sara@example.com")
        context = await chromium.new_context(viewport={"width": 1280, "height": 860})
        try:
            page = await context.new_page()
            await sign_in(page, base, email, PASSWORD)

            # A bot and a content item whose link the visitor opens.
            await page.goto(f"{base}/bots")
            await page.fill("#f-token", bot["token"])
            await page.click("main button.primary")
            await page.click("table.list >> text=@sponsor_demo_bot")
            await page.click("nav.tabs >> text=Content")
            await page.fill("#f-text", "The price list for March")
            await page.click("text=Create and get the link")
            link = await page.locator("input.copy").first.input_value()
            code = link.split("?start=", 1)[1]

            # The campaign: none yet, then created through the form.
            await page.click("nav.nav >> text=Campaigns")
            await expect(page.locator(".card.empty h2")).to_have_text("No campaigns yet")
            await page.click("text=Create the first campaign")
            await page.fill("#f-name", "Winter sponsor: Sponsor News")
            await page.fill("#f-channel", "@nobody_here_at_all")
            await page.check("input[name=bot_ids]")
            await page.click("text=Check the channel and start")
            await expect(page.locator("#e-channel")).to_be_visible()
            await expect(page.locator("#f-name")).to_have_value("Winter sponsor: Sponsor News")
            await page.screenshot(path=str(tmp_path / "form-error.png"), full_page=True)
            await page.fill("#f-channel", "@sponsor_news")
            await page.check("input[name=bot_ids]")
            await page.fill("#f-goal_joins", "10")
            await page.select_option("#f-goal_kind", "joins")
            await page.click("text=Check the channel and start")
            await expect(page.locator("h1")).to_have_text("Winter sponsor: Sponsor News")
            await expect(page.locator(".head .badge")).to_have_text("Running")
            invite = await page.locator("table.list input.copy").input_value()
            assert invite.startswith("https://t.me/+")
            report = await page.locator("#report-link").input_value()
            assert report.startswith(f"{base}/r/")

            # The visitor on the phone page: the gate's button carries the campaign's link.
            visitor = await sim.create_user("Visitor")
            phone = await context.new_page()
            await phone.goto(f"{sim.base_url}/_sim/phone?user={visitor['id']}&bot=sponsor_demo_bot")
            await phone.fill("#payload", code)
            await phone.click("#open")
            join = phone.locator(".msg button.inline", has_text="Sponsor News")
            await expect(join).to_have_count(1, timeout=10_000)
            [gate] = [
                m
                for m in await sim.read_chat(visitor["id"], "sponsor_demo_bot")
                if m["from"] == "bot" and m["buttons"]
            ]
            assert [b["url"] for row in gate["buttons"] for b in row if "url" in b] == [invite]
            await join.click()
            await expect(phone.locator("#status")).to_have_text("Joined: member")
            await phone.locator(".msg:not(.deleted) button.inline").last.click()
            await expect(phone.locator(".msg.bot .text").last).to_have_text(
                "The price list for March", timeout=10_000
            )

            # The sponsor's report: no sign-in (a fresh browser context), the join counted.
            sponsor_view = await chromium.new_context(
                viewport={"width": 1280, "height": 860}, locale="en-US"
            )
            try:
                sponsor_page = await sponsor_view.new_page()
                for _attempt in range(40):
                    await sponsor_page.goto(report)
                    if await sponsor_page.locator("#joins").inner_text() == "1":
                        break
                    await sponsor_page.wait_for_timeout(250)
                await expect(sponsor_page.locator("#joins")).to_have_text("1")
                await expect(sponsor_page.locator(".goal")).to_contain_text("1 of 10 joins")
                await expect(sponsor_page.locator("nav")).to_have_count(0)
                await expect(sponsor_page.locator("table.list tbody tr")).to_contain_text(
                    "@sponsor_demo_bot"
                )
                await expect(sponsor_page.locator(".chart rect.joins")).to_have_count(1)
                await shot(sponsor_page, "report-en")

                await page.reload()
                await expect(page.locator("table.list tbody td").nth(2)).to_have_text("1")
                await shot(page, "campaign-en")
                await page.click("nav.nav >> text=Campaigns")
                await expect(page.locator("table.list tbody tr")).to_contain_text("1 of 10 joins")
                await shot(page, "campaigns-en")

                # Persian: the panel pages right to left, the report by its ?lang=fa link.
                await page.click("header >> text=فارسی")
                await expect(page.locator("html")).to_have_attribute("dir", "rtl")
                await expect(page.locator("h1")).to_have_text("کارزارها")
                await shot(page, "campaigns-fa")
                await page.click("table.list tbody a")
                await expect(page.locator(".head .badge")).to_have_text("در حال اجرا")
                await shot(page, "campaign-fa")
                await sponsor_page.goto(report + "?lang=fa")
                await expect(sponsor_page.locator("html")).to_have_attribute("dir", "rtl")
                await expect(sponsor_page.locator("#joins")).to_have_text("۱")
                await shot(sponsor_page, "report-fa")

                # The gate page of the bot shows the campaign's slot.
                await page.click("header >> text=English")
                await page.goto(f"{base}/bots")
                await page.click("table.list >> text=@sponsor_demo_bot")
                await expect(page.locator("table.slots")).to_contain_text("Winter sponsor")
            finally:
                await sponsor_view.close()
        finally:
            await context.close()
