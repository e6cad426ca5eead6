"""Content, bot settings and the gate in a real browser: upload progress, QR codes, drag order.

Set SPONSORBOT_SCREENSHOTS=1 to also write these pages' screenshots in docs/screenshots/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg
import pytest
from playwright.async_api import Browser

from sponsorbot.features.accounts.security import qr_svg
from tests.browser.kit import NEEDS_CHROMIUM, shot
from tests.browser.test_panel import serve
from tests.integration.panel_kit import PASSWORD, add_member
from tests.kit import eventually

pytestmark = [
    pytest.mark.browser,
    NEEDS_CHROMIUM,
]
UPLOAD_BYTES = 1_500_000
UPLOAD_RATE = 1_000_000  # bytes a second, so the bar has time to move
# Elements sticking out of a phone's width (the page would scroll sideways).
WIDER_THAN_VIEWPORT = """() => [...document.querySelectorAll("main *")]
  .filter((e) => {
    const r = e.getBoundingClientRect();
    return r.right > innerWidth + 1 || r.left < -1;
  })
  .map((e) => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))
  .slice(0, 5)"""


async def test_upload_with_progress_qr_code_settings_and_gate_order(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    from playwright.async_api import expect

    async with serve(pool, db_dsn, tmp_path) as app:
        sim: Any = app.sim
        base = app.url
        email = await add_member(pool, "owner", "sara@example.com")
        await pool.execute("UPDATE users SET name = 'Sara Karimi'")
        await pool.execute("UPDATE workspace SET name = 'Uploads Co.', time_zone = 'Asia/Tehran'")
        bot = await sim.create_bot("uploads_demo_bot")
        owner = await sim.create_user("Sara")
        storage = await sim.create_channel("Storage", private=True, owner_id=owner["id"])
        await sim.make_admin(storage["id"], bot["id"])
        context = await chromium.new_context(viewport={"width": 1280, "height": 860})
        try:
            page = await context.new_page()
            await page.goto(f"{base}/signin")
            await page.fill("#f-email", email)
            await page.fill("#f-password", PASSWORD)
            await page.click("main button.primary")
            await page.goto(f"{base}/bots")
            await page.fill("#f-token", bot["token"])
            await page.click("main button.primary")
            await page.click("table.list >> text=Settings")

            # No storage chat yet: the content page says what to set, and where.
            await page.click("nav.tabs >> text=Content")
            await expect(page.locator("#no-storage")).to_contain_text("storage chat")
            await expect(page.locator("#f-file")).to_be_disabled()
            await page.click("#no-storage a")
            await page.fill("#f-storage_chat", str(storage["id"]))
            await page.click("#storage button.primary")
            await expect(page.locator(".ok.banner")).to_be_visible()
            join = page.locator("details.text-block").nth(3)
            await join.locator("summary").click()
            await page.fill("#f-en\\.join_button", "Join {title} now")
            await page.click("text=Save the texts")
            await expect(join.locator(".badge")).to_have_text("Custom")
            await join.locator("summary").click()
            await shot(page, "bot-settings-en")

            # Upload on a slowed link: the bar moves through values between 0 and 100.
            await page.click("nav.tabs >> text=Content")
            seen: list[str] = []
            page.on(
                "console",
                lambda m: seen.append(m.text) if m.text.startswith("progress ") else None,
            )
            # Logged after the panel's own progress listener has run: what the owner sees.
            await page.evaluate(
                """() => {
                  const send = XMLHttpRequest.prototype.send;
                  XMLHttpRequest.prototype.send = function (body) {
                    this.upload.addEventListener("progress", () => {
                      const box = document.querySelector("#upload .progress");
                      console.log("progress " + box.querySelector("progress").value + " "
                        + box.querySelector("output").textContent);
                    });
                    return send.call(this, body);
                  };
                }"""
            )
            cdp = await context.new_cdp_session(page)
            await cdp.send("Network.enable")
            await cdp.send(
                "Network.emulateNetworkConditions",
                {
                    "offline": False,
                    "latency": 20,
                    "downloadThroughput": -1,
                    "uploadThroughput": UPLOAD_RATE,
                },
            )
            await page.set_input_files(
                "#f-file",
                {
                    "name": "price-list.pdf",
                    "mimeType": "application/pdf",
                    "buffer": b"%PDF-1.4\n" + b"0" * UPLOAD_BYTES,
                },
            )
            await page.fill("#f-caption", "March price list")
            await page.click("#upload button.primary")
            await expect(page.locator("#upload .progress")).to_be_visible()
            await expect(page.locator("#upload button.primary")).to_be_disabled()
            await eventually(lambda: _moving(seen), timeout=10)
            await shot(page, "content-upload-en")
            await expect(page.locator("li.item")).to_have_count(1, timeout=20_000)
            await cdp.send(
                "Network.emulateNetworkConditions",
                {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
            )
            values = [int(s.split()[1]) for s in seen]
            assert values == sorted(values) and values[-1] == 100, values
            assert any(0 < v < 100 for v in values), values
            assert all(s.endswith("%") for s in seen), seen
            item = page.locator("li.item")
            await expect(item).to_contain_text("March price list")
            await expect(item.locator(".badge").first).to_have_text("Document")

            # The QR code on the page is exactly the QR code of the item's link.
            link = await item.locator("input.copy").input_value()
            assert link.startswith("https://t.me/uploads_demo_bot?start=")
            raw = await page.request.get(page.url)
            assert qr_svg(link) in await raw.text()
            await expect(item.locator(".qr svg")).to_be_visible()
            # Drawn whole at the list's size: the viewBox scales it rather than cutting it off.
            svg = item.locator(".qr svg")
            box = await svg.bounding_box()
            inner = await svg.evaluate("(s) => s.querySelector('g').getBoundingClientRect().width")
            assert box is not None and 80 <= box["width"] < 165
            assert 0.8 * box["width"] < inner <= box["width"]  # within its padding

            # Too large: said next to the field before anything is sent.
            # (the page's limit lowered, so a small file stands for one over 50 MB)
            await page.evaluate("document.querySelector('[data-upload]').dataset.limit = '100'")
            await page.set_input_files(
                "#f-file",
                {"name": "huge.bin", "mimeType": "application/octet-stream", "buffer": b"0" * 1024},
            )
            await expect(page.locator("#e-file")).to_contain_text("larger than 50 MB")

            # A text item too, then search.
            await page.fill("#f-text", "The Wi-Fi password is sunflower")
            await page.click("text=Create and get the link")
            await expect(page.locator("li.item")).to_have_count(2)
            await page.fill("#f-q", "sunflower")
            await page.click("form.search button")
            await expect(page.locator("li.item")).to_have_count(1)
            await page.goto(f"{base}/bots/{bot['id']}/content")
            await page.locator("li.item").first.locator("details.options summary").click()
            await shot(page, "content-en")

            # Two more channels for the gate, then drag the last to the top.
            for name in ("demo_news", "demo_deals", "demo_music"):
                channel = await sim.create_channel(name.replace("_", " ").title(), name)
                await sim.make_admin(channel["id"], bot["id"])
            await page.click("nav.tabs >> text=Channels and gate")
            for name in ("demo_news", "demo_deals", "demo_music"):
                await page.fill("#f-ref", f"@{name}")
                await page.click("main button.primary")
                await expect(page.locator("table.list")).to_contain_text(f"@{name}")
            # (the storage chat is listed too: the bot is an admin there, it just stays out)
            # The bot found them by itself when made admin, in whatever order its updates came:
            # ticked without order numbers, they join the gate in the order the page shows.
            texts = await page.locator("table.list tbody tr").all_inner_texts()
            shown = [n for t in texts for n in ("demo_news", "demo_deals", "demo_music") if n in t]
            for name in ("demo_news", "demo_deals", "demo_music"):
                row = page.locator("table.list tbody tr", has_text=f"@{name}")
                await row.locator("input[name=gate]").check()
            deals = page.locator("table.list tbody tr", has_text="@demo_deals")
            await deals.locator("input[name=requests]").check()
            async with page.expect_navigation():
                await page.click("text=Save the gate")
            await page.wait_for_load_state("load")
            rows = page.locator("table.list tbody tr")
            await expect(rows).to_contain_text([f"@{n}" for n in shown])
            handle = rows.nth(2).locator(".drag")
            await expect(handle).to_be_visible()
            # Mouse coordinates are the viewport's: both rows must be on screen, and stay put.
            await rows.first.scroll_into_view_if_needed()
            target = await rows.first.bounding_box()
            start = await handle.bounding_box()
            assert target is not None and start is not None
            await page.mouse.move(start["x"] + 8, start["y"] + 8)
            await page.mouse.down()
            await page.mouse.move(start["x"] + 8, target["y"] + 12, steps=8)
            await page.mouse.move(start["x"] + 8, target["y"] + 4, steps=4)
            await page.mouse.up()
            await expect(page.locator(".sort-status")).to_have_text("Order saved.")
            await expect(rows.first).to_contain_text(f"@{shown[2]}")
            await expect(rows.first.locator("input[data-number]")).to_have_value("1")
            order = await pool.fetch(
                "SELECT c.username, g.request_counts FROM gate_channels g JOIN channels c "
                "USING (bot_id, chat_id) ORDER BY g.position"
            )
            assert [(r["username"], r["request_counts"]) for r in order] == [
                (name, name == "demo_deals") for name in (shown[2], shown[0], shown[1])
            ]
            await page.reload()
            await expect(rows.first).to_contain_text(f"@{shown[2]}")
            await shot(page, "channels-en")

            # Persian, right to left, then a phone.
            await page.click("header >> text=فارسی")
            await expect(page.locator("html")).to_have_attribute("dir", "rtl")
            await shot(page, "channels-fa")
            await page.click("nav.tabs >> text=محتوا")
            await expect(page.locator(".counts dt").first).to_have_text("باز شد")
            await shot(page, "content-fa")
            await page.goto(f"{base}/bots/{bot['id']}/settings")
            await page.locator("details.text-block").nth(2).locator("summary").click()
            await shot(page, "bot-settings-fa")
            await page.set_viewport_size({"width": 375, "height": 780})
            await page.goto(f"{base}/bots/{bot['id']}/content")
            await shot(page, "content-fa-phone")
            wide = await page.evaluate(WIDER_THAN_VIEWPORT)
            assert not wide, wide
            await page.goto(f"{base}/bots/{bot['id']}/channels")
            await shot(page, "channels-fa-phone")
            wide = await page.evaluate(WIDER_THAN_VIEWPORT)
            assert not wide, wide
        finally:
            await context.close()


async def _moving(seen: list[str]) -> bool:
    return any(0 < int(s.split()[1]) < 100 for s in seen)
