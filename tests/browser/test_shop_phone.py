"""The ad shop's advertiser side on the simulator's phone page, in a real browser: an advertiser
books a banner in the bot, the owner approves, the phone shows the payment request (address, QR
photo, amounts), the advertiser pays from the phone's TRON wallet and sends the hash with the
wallet's own button, the bot answers "checking" and then "paid in full", and the order runs. Once
in English (the menu from /advertise) and once in Persian (the menu from the welcome's button).

What the advertiser types (/advertise, and the banner's two lines with Shift+Enter between them)
is typed in the phone's message box and sent with Enter or the Send button. The QR code shows as
the very PNG the bot uploaded, and the Persian messages read right to left.

Set SPONSORBOT_SCREENSHOTS=1 to also write shop-phone-request- and shop-phone-paid- screenshots
in English and Persian in docs/screenshots/.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from playwright.async_api import Browser

from sponsorbot.features.shop.rules import show
from sponsorbot.features.shop.service import qr_png
from tests.browser.kit import NEEDS_CHROMIUM, shot
from tests.integration.shopkit import BOT, Shop, shop

pytestmark = [
    pytest.mark.browser,
    NEEDS_CHROMIUM,
]
# Bot answers go through the inbox, a handler, the outbox and the simulator: allow a few seconds.
WAIT_MS = 15_000
# A Base58 TRON address, as the payment request shows it.
ADDRESS = re.compile(r"\bT[1-9A-HJ-NP-Za-km-z]{33}\b")
BANNER = "Visit us\nhttps://example.com"
# Whether the first two characters of `run` in an element's text are drawn left to right (as a
# left-to-right run reads), from where the browser put them.
DRAWN_IN_ORDER = """(element, run) => {
  const node = element.firstChild;
  const at = node.textContent.indexOf(run);
  if (at < 0) return false;
  const box = (i) => { const r = document.createRange(); r.setStart(node, i);
                       r.setEnd(node, i + 1); return r.getBoundingClientRect(); };
  const [a, b] = [box(at), box(at + 1)];
  return Math.abs(a.y - b.y) < 2 && a.x < b.x;
}"""


@dataclass(frozen=True)
class Words:
    """What the advertiser reads and presses, in one language."""

    language: str
    shop_button: str  # the welcome's button to the shop
    ask_banner: str
    submit: str
    submitted: str
    pay: str
    checking: str
    paid: str


ENGLISH = Words(
    "en",
    "📣 Advertise here",
    "Send the banner",
    "Submit ✅",
    "is submitted",
    "Please pay",
    "Checking transaction",
    "paid in full",
)
PERSIAN = Words(
    "fa",
    "📣 تبلیغ در این ربات",
    "بنر را بفرستید",
    "ثبت ✅",
    "ثبت شد",
    "به این آدرس بپردازید",
    "در حال بررسی است",
    "کامل پرداخت شد",
)


async def book_and_pay(browser: Browser, s: Shop, words: Words, *, typed_command: bool) -> None:
    """One advertiser's whole journey on the phone, in `words.language`."""
    from playwright.async_api import expect

    user = await s.advertiser(words.language)
    await s.pool.execute("UPDATE workspace SET time_zone = 'Asia/Tehran' WHERE id = 1")
    context = await browser.new_context(viewport={"width": 420, "height": 860})
    try:
        page = await context.new_page()
        await page.goto(f"{s.tg.url}/_sim/phone?user={user}&bot={BOT}")
        await expect(page.locator("#user")).to_have_value(str(user))
        await expect(page.locator("#bot option:checked")).to_have_text(f"@{BOT}")
        bot_messages = page.locator(".msg.bot")

        def bot_says(part: str) -> Any:
            return bot_messages.filter(has_text=part).last

        # The menu: from /advertise, or from the welcome's button after opening the bot.
        if typed_command:
            await page.fill("#message", "/advertise")
            await page.click("#send")
            await expect(page.locator("#status")).to_have_text("Sent")
            await expect(page.locator(".msg.user .text").last).to_have_text("/advertise")
            await expect(page.locator("#message")).to_have_value("")
        else:
            await page.click("#open")
            await expect(page.locator("#status")).to_have_text("Sent /start")
            await bot_says(words.shop_button).locator("button.inline").click()
        # A Persian label isolates the title and the price (Banner · 5 USDT, with marks between).
        menu = bot_messages.filter(has_text=re.compile(r"Banner\W+·\W+5 USDT")).last
        await menu.locator("button.inline", has_text="Banner").click()
        await expect(bot_says(words.ask_banner)).to_be_visible(timeout=WAIT_MS)
        # Two lines: Shift+Enter breaks the line, Enter sends.
        first, second = BANNER.split("\n")
        await page.fill("#message", first)
        await page.press("#message", "Shift+Enter")
        await page.locator("#message").press_sequentially(second)
        await expect(page.locator("#message")).to_have_value(BANNER)
        await page.press("#message", "Enter")
        await expect(page.locator(".msg.user .text").last).to_have_text(BANNER)
        await expect(page.locator("#message")).to_have_value("")
        summary = bot_says("https://example.com")
        await expect(summary).to_contain_text("Visit us", timeout=WAIT_MS)
        await summary.locator("button.inline", has_text=words.submit).click()
        await expect(bot_says(words.submitted)).to_be_visible(timeout=WAIT_MS)

        order = await s.order_of(user)
        assert order["state"] == "submitted"
        assert order["kind"] == "banner" and order["price_usdt"] == "5"
        assert order["material"] == {"text": "Visit us", "url": "https://example.com"}
        assert order["language"] == words.language
        await expect(bot_says(words.submitted)).to_contain_text(f"#{order['id']}")

        # The owner approves: the phone shows the address, the amounts and the QR code.
        approved = await s.features.shop.approve(order["id"], "owner")
        assert approved["state"] == "awaiting_payment"
        request = bot_says(words.pay)
        await expect(request).to_contain_text(s.address, timeout=WAIT_MS)
        # The order's own exact amounts: 5 USDT or 20 TRX (at the 0.25 USDT per TRX locked),
        # each with the order's tail of millionths.
        due = approved["due_usdt"]
        assert due.startswith("5.00") and approved["due_trx"].startswith("20.00")
        await expect(request).to_contain_text(f"{due} USDT")
        await expect(request).to_contain_text(f"{approved['due_trx']} TRX")
        # Persian reads right to left, though the request holds Latin, digits and an address.
        reading = "rtl" if words.language == "fa" else "ltr"
        await expect(request).to_have_attribute("dir", reading)
        # As drawn, each Latin run keeps its order: "/orders" (not "orders/") and the deadline
        # with its year first, whatever the line breaks.
        for run in ("/orders", "(Asia/Tehran)"):
            assert await request.locator(".text").evaluate(DRAWN_IN_ORDER, run), run
        qr = bot_messages.filter(has=page.locator("img.picture")).last
        await expect(qr).to_contain_text(s.address, timeout=WAIT_MS)
        await expect(qr).to_contain_text(f"#{order['id']}")
        # The QR code is the picture itself, the very PNG the bot uploaded, loaded and decoded.
        picture = qr.locator("img.picture")
        png = qr_png(s.address)
        width = await picture.evaluate(
            "async (img) => { await img.decode(); return img.naturalWidth; }"
        )
        assert width == int.from_bytes(png[16:20], "big") > 0  # the PNG header's width
        served = await context.request.get(await picture.evaluate("(img) => img.src"))
        assert served.headers["content-type"] == "image/png"
        assert await served.body() == png
        await shot(page, f"shop-phone-request-{words.language}", full_page=False)
        # The advertiser takes the address from the chat, as they would copy it.
        found = ADDRESS.findall(await request.locator(".text").inner_text())
        assert found == [s.address], found

        # The wallet: a new funded one pays the exact amount to the shop and sends the hash.
        await page.click("#wallet summary")
        await page.click("#w-new")
        await expect(page.locator("#w-address")).to_have_text(ADDRESS)
        wallet = await page.locator("#w-address").inner_text()
        await expect(page.locator("#w-balance")).to_have_text("1000 USDT · 10000 TRX on mainnet")
        await page.fill("#w-to", found[0])
        await page.fill("#w-amount", due)
        await page.select_option("#w-coin", "USDT")
        await page.click("#w-pay")
        await expect(page.locator("#status")).to_have_text(f"Paid {due} USDT")
        await expect(page.locator("#w-hash")).to_have_text(re.compile(r"^[0-9a-f]{64}$"))
        tx_hash = await page.locator("#w-hash").inner_text()
        await expect(page.locator("#w-link")).to_have_text(
            f"https://tronscan.org/#/transaction/{tx_hash}"
        )
        left = show(Decimal(1000) - Decimal(due))
        await expect(page.locator("#w-balance")).to_have_text(f"{left} USDT · 10000 TRX on mainnet")
        await page.click("#w-send")
        await expect(page.locator("#status")).to_have_text("Sent the hash")
        sent = page.locator(".msg.user .text").last
        await expect(sent).to_have_text(tx_hash)
        await expect(bot_says(words.checking)).to_contain_text(tx_hash[:8], timeout=WAIT_MS)
        # A line with a 64-character Latin hash in it still reads in the message's language.
        await expect(bot_says(words.checking)).to_have_attribute("dir", reading)
        await expect(bot_says(words.paid)).to_contain_text(f"#{order['id']}", timeout=WAIT_MS)
        # "Checking" came first, "paid in full" after it, in the phone's chat.
        texts = await page.locator(".msg.bot .text").all_inner_texts()
        checking = next(i for i, t in enumerate(texts) if words.checking in t)
        paid = next(i for i, t in enumerate(texts) if words.paid in t)
        assert checking < paid, texts
        await expect(page.locator("#w-state")).to_contain_text("confirmed", timeout=WAIT_MS)
        await shot(page, f"shop-phone-paid-{words.language}", full_page=False)

        # The order runs, paid by this wallet's transaction.
        running = await s.state_of(order["id"], "running")
        assert running["paid_usdt"] == due and running["left_usdt"] == "0"
        assert running["started_at"] is not None and running["ends_at"] is not None
        assert (running["ends_at"] - running["started_at"]).days == 7
        (payment,) = running["payments"]
        assert payment["status"] == "credited" and payment["reason"] is None
        assert payment["tx_hash"] == tx_hash and payment["source"] == "bot"
        assert payment["coin"] == "USDT" and payment["amount"] == due
        assert payment["credited_usdt"] == due
        assert payment["from_address"] == wallet and payment["to_address"] == s.address
        kinds = [step["kind"] for step in running["timeline"]]
        for kind in ("submitted", "approved", "hash_submitted", "payment_credited", "paid"):
            assert kind in kinds, kinds
        assert kinds.index("started") > kinds.index("paid"), kinds
    finally:
        await context.close()


async def test_advertisers_book_and_pay_on_the_phone_in_english_and_persian(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    async with shop(pool, db_dsn, tmp_path) as s:
        await s.tg.sim.set_price("0.25")
        # Confirmed as soon as its block is made, not 19 blocks (a minute) later.
        await s.tg.sim.tron_set_network(solidify_blocks=0)
        await book_and_pay(chromium, s, ENGLISH, typed_command=True)
        await book_and_pay(chromium, s, PERSIAN, typed_command=False)
