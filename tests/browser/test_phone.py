"""The phone page in a real browser: open a link, see the bot's buttons, press them, type."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Browser

from sponsorbot.simulator.client import SimulatorClient
from tests.browser.kit import NEEDS_CHROMIUM
from tests.kit import simulated_telegram

pytestmark = [
    pytest.mark.browser,
    NEEDS_CHROMIUM,
]


@pytest.fixture
async def simulator_url() -> AsyncIterator[str]:
    async with simulated_telegram(seed=3) as telegram:
        yield telegram.url


class FakeBot:
    """The test plays the bot over the real Bot API."""

    def __init__(self, http: aiohttp.ClientSession, base: str, token: str) -> None:
        self.http, self.base, self.token, self.offset = http, base, token, 0

    async def call(self, method: str, **params: Any) -> Any:
        url = f"{self.base}/bot{self.token}/{method}"
        async with self.http.post(url, json=params) as response:
            body = await response.json()
        assert body["ok"], body
        return body["result"]

    async def next_update(self, kind: str) -> dict[str, Any]:
        """The next update of ``kind``, skipping others (my_chat_member and the like)."""
        while True:
            updates = await self.call("getUpdates", offset=self.offset, timeout=10, limit=1)
            assert updates, "no update within the poll timeout"
            self.offset = updates[0]["update_id"] + 1
            if kind in updates[0]:
                update: dict[str, Any] = updates[0][kind]
                return update


async def test_visitor_walks_through_the_gate(simulator_url: str, chromium: Browser) -> None:
    from playwright.async_api import expect

    async with SimulatorClient(simulator_url) as sim, aiohttp.ClientSession() as http:
        bot_info = await sim.create_bot("files_bot")
        user = await sim.create_user("Visitor")
        channel = await sim.create_channel("News", username="news")
        await sim.make_admin(channel["id"], bot_info["id"])
        bot = FakeBot(http, simulator_url, bot_info["token"])

        context = await chromium.new_context()
        try:
            page = await context.new_page()
            await page.goto(f"{simulator_url}/_sim/phone?user={user['id']}&bot=files_bot")
            await page.fill("#payload", "c0ffee")
            await page.click("#open")

            start = await bot.next_update("message")
            assert start["text"] == "/start c0ffee"
            uid = start["chat"]["id"]
            await bot.call(
                "sendMessage",
                chat_id=uid,
                text="Join <b>News</b> first",
                parse_mode="HTML",
                reply_markup={
                    "inline_keyboard": [
                        [{"text": "Join News", "url": "https://t.me/news"}],
                        [{"text": "I've joined", "callback_data": "check:c0ffee"}],
                    ]
                },
            )
            await expect(page.locator(".msg.bot .text")).to_have_text("Join News first")

            await page.locator("button.inline", has_text="Join News").click()
            await expect(page.locator("#status")).to_have_text("Joined: member")
            member = await bot.call("getChatMember", chat_id="@news", user_id=uid)
            assert member["status"] == "member"

            await page.locator("button.inline", has_text="I've joined").click()
            query = await bot.next_update("callback_query")
            assert query["data"] == "check:c0ffee" and query["from"]["id"] == uid
            await bot.call("answerCallbackQuery", callback_query_id=query["id"], text="Thanks!")
            await bot.call("sendMessage", chat_id=uid, text="Here is your file")

            await expect(page.locator("#toast")).to_have_text("Thanks!")
            await expect(page.locator(".msg.bot .text").last).to_have_text("Here is your file")

            # The visitor types: a command sent with Enter, then two lines (Shift+Enter
            # between them) sent with the Send button; the bot gets exactly what was typed.
            await page.fill("#message", "/help")
            await page.press("#message", "Enter")
            assert (await bot.next_update("message"))["text"] == "/help"
            await page.fill("#message", "سلام")
            await page.press("#message", "Shift+Enter")
            await page.locator("#message").press_sequentially("a1b2c3 رسید")
            await page.click("#send")
            typed = await bot.next_update("message")
            assert typed["text"] == "سلام\na1b2c3 رسید" and typed["from"]["id"] == uid
            mine = page.locator(".msg.user").last
            await expect(mine.locator(".text")).to_have_text("سلام\na1b2c3 رسید")
            await expect(mine).to_have_attribute("dir", "rtl")
            await expect(page.locator("#message")).to_have_value("")
        finally:
            await context.close()
