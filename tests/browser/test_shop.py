"""The ad shop's owner side in a real browser: the owner opens the bot's shop (a mistyped address
is refused with a clear reason), adds a product (a price of 0 is refused), finds an advertiser's
order in the list, approves it, adds the advertiser's hashes (one paid elsewhere, one a part
payment) and reads the verdicts, amounts and timeline on the order page, in English and Persian.

Set SPONSORBOT_SCREENSHOTS=1 to also write shop-settings-, shop-orders- and shop-order-
screenshots in English and Persian, and shop-products-en and shop-payments-en, in
docs/screenshots/.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import uvicorn
from playwright.async_api import Browser

from sponsorbot.db.database import Database
from sponsorbot.features.all import install
from sponsorbot.features.base import Options
from sponsorbot.web.app import create_app
from sponsorbot.web.panel import PanelConfig
from tests.browser.kit import NEEDS_CHROMIUM, shot, sign_in
from tests.browser.test_panel import Running, _Server, _started
from tests.integration.panel_kit import PASSWORD, add_member
from tests.kit import eventually, make_settings, running_engine, simulated_telegram, tron_urls
from tests.processes import free_port

pytestmark = [
    pytest.mark.browser,
    NEEDS_CHROMIUM,
]
BOT = "spring_ads_bot"
POST = {
    "text": "<b>Spring sale</b>\nEverything half price this week, in every shop of the city.",
    "media_kind": None,
    "file_id": None,
    "buttons": [[{"text": "Open the shop", "url": "https://example.com/shop"}]],
    "protect": False,
    "silent": False,
    "paid": False,
}


@contextlib.asynccontextmanager
async def serve(pool: asyncpg.Pool, dsn: str, tmp_path: Path) -> AsyncIterator[Running]:
    """The app and a worker, against a simulated Telegram that also stands in for TronGrid and
    the price sources."""
    async with simulated_telegram() as telegram:
        urls = tron_urls(telegram.url)
        settings = make_settings(dsn, telegram.url, tmp_path, **urls)
        async with running_engine(settings, pool, dsn) as running:
            options = Options(channel_check_every_s=3600, shop_check_every_s=0.3)
            features = install(running.engine, options=options)
            app = create_app(settings, Database(dsn, pool, None), features, PanelConfig())
            port = free_port()
            config = uvicorn.Config(
                app, host="127.0.0.1", port=port, log_config=None, access_log=False, lifespan="off"
            )
            server = _Server(config)
            task = asyncio.create_task(server.serve())
            try:
                await eventually(lambda: _started(server), timeout=10)
                yield Running(f"http://127.0.0.1:{port}", telegram.sim, pool, "")
            finally:
                server.should_exit = True
                await task


async def place_order(pool: asyncpg.Pool, bot_id: int, user_id: int) -> int:
    """An advertiser's order as the bot's dialogue leaves it."""
    order_id: int = await pool.fetchval(
        "INSERT INTO shop_orders (bot_id, kind, title, user_id, user_name, language, material,"
        " price_usdt) VALUES ($1, 'broadcast', 'Post to everyone', $2, 'Ada Lovelace', 'en',"
        " $3, 25) RETURNING id",
        bot_id,
        user_id,
        {"post": POST},
    )
    await pool.execute(
        "INSERT INTO shop_order_log (bot_id, order_id, kind, actor)"
        " SELECT bot_id, id, 'submitted', $2 FROM shop_orders WHERE id = $1",
        order_id,
        f"tg:{user_id}",
    )
    return order_id


async def test_the_owner_sets_up_the_shop_and_approves_an_order(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    from playwright.async_api import expect

    async with serve(pool, db_dsn, tmp_path) as app:
        sim: Any = app.sim
        base = app.url
        bot = await sim.create_bot(BOT)
        (advertiser,) = await sim.create_users(1, language_code="en", started=BOT)
        shop_wallet = (await sim.tron_create_wallet())["address"]
        payer = (await sim.tron_create_wallet())["address"]
        elsewhere = (await sim.tron_create_wallet())["address"]
        email = await add_member(pool, "owner", "sara@example.com")
        context = await chromium.new_context(viewport={"width": 1280, "height": 900})
        try:
            page = await context.new_page()
            await sign_in(page, base, email, PASSWORD)

            await page.goto(f"{base}/bots")
            await page.fill("#f-token", bot["token"])
            await page.click("main button.primary")
            await expect(page.locator("table.list")).to_contain_text(f"@{BOT}")
            bot_id = await pool.fetchval("SELECT id FROM bots WHERE username = $1", BOT)

            # The shop's settings: a mistyped address is refused beside its field.
            await page.goto(f"{base}/bots/{bot_id}/channels")
            await page.click("nav.tabs >> text=Shop")
            await expect(page.locator("#shop h2")).to_have_text("The shop of this bot")
            await page.check("#f-enabled")
            typo = shop_wallet[:10] + ("2" if shop_wallet[10] != "2" else "3") + shop_wallet[11:]
            await page.fill("#f-address", typo)
            await page.fill("#f-api_key", "d9c2e5f0-4b1a-4c3e-8f7d-000000001234")
            await page.click("text=Save the shop settings")
            await expect(page.locator("#e-address")).to_contain_text("checksum does not match")
            await expect(page.locator("#f-address")).to_have_value(typo)
            await page.fill("#f-address", shop_wallet)
            await page.fill("#f-api_key", "d9c2e5f0-4b1a-4c3e-8f7d-000000001234")
            # Where the money goes is confirmed with the owner's password (ADR 0009).
            await page.fill("#f-confirm", PASSWORD)
            await page.click("text=Save the shop settings")
            await expect(page.locator(".ok.banner")).to_have_text("Saved.")
            await expect(page.locator("#f-api_key ~ .hint")).to_contain_text("ends in …1234")
            await expect(page.locator("#f-api_key")).to_have_value("")
            await shot(page, "shop-settings-en")

            # A product: a price of 0 is refused, 25 USDT is saved.
            await page.click("nav.filter-tabs >> text=Products")
            await page.click("text=New product")
            await page.select_option("#f-kind", "broadcast")
            await page.fill("#f-title", "Post to everyone")
            await page.fill("#f-price_usdt", "0")
            await page.click("text=Add the product")
            await expect(page.locator("#e-price_usdt")).to_have_text(
                "The price must be more than 0."
            )
            await page.fill("#f-price_usdt", "25")
            await page.click("text=Add the product")
            await expect(page.locator("table.products")).to_contain_text("25 USDT")
            await shot(page, "shop-products-en")

            # An advertiser's order: in the list, waiting for approval.
            order_id = await place_order(pool, bot_id, int(advertiser))
            await page.click("header >> text=Shop")
            await expect(page.locator("#states [data-state=submitted] .badge")).to_have_text("1")
            await shot(page, "shop-orders-en")
            await page.click(f"a[href='/shop/orders/{order_id}']")
            await expect(page.locator("h1")).to_have_text(f"Order #{order_id}")
            await expect(page.locator("#material-body")).to_contain_text("Everything half price")

            # Approve: the rate is locked and the advertiser is asked to pay.
            await page.click("text=Approve and send the payment request")
            await expect(page.locator("#state")).to_have_text("Awaiting payment")
            await expect(page.locator("#rate")).to_contain_text("USDT per TRX, from")
            await expect(page.locator("#amounts")).to_contain_text(shop_wallet)

            async def asked() -> bool:
                chat = await sim.read_chat(int(advertiser), BOT)
                return any(shop_wallet in str(m.get("text") or "") for m in chat)

            await eventually(asked)

            # The advertiser's hashes, added for them: one paid elsewhere, one a part payment.
            stray = await sim.tron_usdt(payer, elsewhere, "25", solidify="now")
            part = await sim.tron_usdt(payer, shop_wallet, "10", solidify="now")
            for tx in (stray, part):
                await page.click("text=Add a hash for the advertiser")
                await page.fill("#f-hash", f"https://tronscan.org/#/transaction/{tx['hash']}")
                await page.click("text=Check this hash")
                await expect(page.locator("#payments")).to_contain_text(tx["hash"][:10])

            # The part payment is not the order's exact amount: it waits for the owner on the
            # Transfers page, with the order that claimed it, and the owner assigns it.
            async def held() -> bool:
                await page.reload()
                return "Held for the owner" in await page.locator("#payments").inner_text()

            await eventually(held, timeout=30, every=0.5)
            await page.click("main .head a >> text=Orders")
            await page.click("nav.tabs >> text=Transfers")
            waiting = page.locator("table.transfers tbody tr")
            await expect(waiting).to_have_count(1)
            await expect(waiting).to_contain_text("Not the exact amount of any open order")
            await expect(waiting.locator("input[name=order_id]")).to_have_value(str(order_id))
            await shot(page, "shop-transfers-en")
            await waiting.locator("text=Assign").click()
            await expect(page.locator("#state")).to_have_text("Partly paid")
            await expect(page.locator("#payments")).to_contain_text(
                f"The coins went to {elsewhere}, not to the shop's address"
            )
            await expect(page.locator("#left")).to_contain_text("15 USDT")
            link = page.locator(f"#payments a[href$='{part['hash']}']")
            await expect(link).to_have_attribute(
                "href", f"https://tronscan.org/#/transaction/{part['hash']}"
            )
            await expect(page.locator("#timeline")).to_contain_text("TRX rate locked")
            await expect(page.locator("#timeline")).to_contain_text("Payment counted: 10 USDT")
            await shot(page, "shop-order-en")

            # Every hash over every order: the refused one, with its order.
            await page.click("main .head a >> text=Orders")
            await page.click("nav.tabs >> text=Payments")
            await page.select_option("#f-status", "rejected")
            await page.click("main form.filters button")
            rows = page.locator("table.payments tbody tr")
            await expect(rows).to_have_count(1)
            await expect(rows).to_contain_text("Refused")
            await expect(rows.locator(f"a[href='/shop/orders/{order_id}']")).to_be_visible()
            await shot(page, "shop-payments-en")
            await page.goto(f"{base}/shop/orders/{order_id}")

            # Persian: right to left, Persian digits, the same facts.
            await page.click("header >> text=فارسی")
            await expect(page.locator("html")).to_have_attribute("dir", "rtl")
            await expect(page.locator("#state")).to_have_text("بخشی پرداخت‌شده")
            await expect(page.locator("#left")).to_contain_text("۱۵ USDT")
            await expect(page.locator("#payments")).to_contain_text(elsewhere)
            await shot(page, "shop-order-fa")
            await page.goto(f"{base}/shop/orders")
            await expect(page.locator("h1")).to_have_text("فروشگاه")
            await shot(page, "shop-orders-fa")
            await page.goto(f"{base}/bots/{bot_id}/shop")
            await expect(page.locator("#f-api_key ~ .hint")).to_contain_text("…1234")
            await shot(page, "shop-settings-fa")
        finally:
            await context.close()
