"""The panel in a real browser: setup, two-step sign-in, a bot, Persian, the audit log.

Set SPONSORBOT_SCREENSHOTS=1 to also write the screenshots in docs/screenshots/ (the content,
channels and bot settings pages come from test_panel_content.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import asyncpg
import jdatetime
import pyotp
import pytest
import uvicorn
from playwright.async_api import Browser

from sponsorbot.db.database import Database
from sponsorbot.features.all import install
from sponsorbot.features.base import Options
from sponsorbot.web.app import create_app
from sponsorbot.web.panel import PanelConfig, announce_setup_code
from tests.browser.kit import NEEDS_CHROMIUM, shot
from tests.integration.test_panel_roles import POLICY, PUBLIC, concrete
from tests.kit import eventually, make_settings, running_engine, simulated_telegram
from tests.processes import free_port

PERSIAN_DIGITS = set("۰۱۲۳۴۵۶۷۸۹")
PASSWORD = "a long owner password"

pytestmark = [
    pytest.mark.browser,
    NEEDS_CHROMIUM,
]


class _Server(uvicorn.Server):
    """uvicorn without signal handlers: the test owns the process."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class Running:
    url: str
    sim: object
    pool: asyncpg.Pool
    code: str


@contextlib.asynccontextmanager
async def serve(pool: asyncpg.Pool, dsn: str, tmp_path: Path) -> AsyncIterator[Running]:
    """The api app and a worker on the test database, against a simulated Telegram."""
    async with simulated_telegram() as telegram:
        settings = make_settings(dsn, telegram.url, tmp_path)
        async with running_engine(settings, pool, dsn, worker=False) as running:
            features = install(running.engine, options=Options(channel_check_every_s=3600))
            stop = asyncio.Event()
            worker = asyncio.create_task(running.engine.run_worker(stop))
            app = create_app(settings, Database(dsn, pool, None), features, PanelConfig())
            port = free_port()
            config = uvicorn.Config(
                app,
                host="127.0.0.1",
                port=port,
                log_config=None,
                access_log=False,
                lifespan="off",
            )
            server = _Server(config)
            task = asyncio.create_task(server.serve())
            try:
                await eventually(lambda: _started(server), timeout=10)
                code = await announce_setup_code(pool)
                assert code is not None
                yield Running(f"http://127.0.0.1:{port}", telegram.sim, pool, code)
            finally:
                server.should_exit = True
                await task
                stop.set()
                await worker


async def _started(server: uvicorn.Server) -> bool:
    return server.started


async def test_owner_sets_up_signs_in_with_two_step_adds_a_bot_and_reads_persian(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path, chromium: Browser
) -> None:
    from playwright.async_api import expect

    async with serve(pool, db_dsn, tmp_path) as app:
        sim = app.sim
        bot = await sim.create_bot("uploads_demo_bot")  # type: ignore[attr-defined]
        context = await chromium.new_context(viewport={"width": 1280, "height": 860})
        try:
            page = await context.new_page()
            base = app.url

            # A signed-out visitor is sent to sign in, which points to the first-run setup.
            await page.goto(f"{base}/bots")
            assert page.url == f"{base}/signin?next=%2Fbots"
            await shot(page, "signin-en")
            await page.click("text=Start the first-run setup")
            await page.fill("#f-code", app.code)
            await page.fill("#f-name", "Sara Owner")
            await page.fill("#f-email", "sara@example.com")
            await page.fill("#f-password", PASSWORD)
            await page.fill("#f-password2", PASSWORD)
            await shot(page, "setup-en")
            await page.click("main button.primary")
            await expect(page.locator("h1")).to_have_text("Dashboard")
            await expect(page.locator(".card.empty h2")).to_have_text("No bots yet")

            # Workspace settings: the Tehran zone.
            await page.goto(f"{base}/settings")
            await page.select_option("#f-time_zone", "Asia/Tehran")
            await page.fill("#f-name", "Uploads Co.")
            await page.click("main button.primary")
            await expect(page.locator(".ok.banner")).to_be_visible()

            # Two-step sign-in on, then sign out and back in with it.
            await page.goto(f"{base}/account")
            await page.click("text=Turn two-step sign-in on")
            await expect(page.locator(".qr svg")).to_be_visible()
            secret = (await page.locator("code.secret").inner_text()).strip()
            await page.fill("#f-code", pyotp.TOTP(secret).now())
            await page.click("main button.primary")
            await expect(page.locator("ul.codes li")).to_have_count(10)
            await page.click("header >> text=Sign out")
            await page.fill("#f-email", "sara@example.com")
            await page.fill("#f-password", PASSWORD)
            await page.click("main button.primary")
            assert page.url.endswith("/signin/two-step")
            await page.fill("#f-code", pyotp.TOTP(secret).now())
            await page.click("main button.primary")
            await expect(page.locator("h1")).to_have_text("Dashboard")

            # A bot against the simulator: a wrong token first, then the right one.
            await page.goto(f"{base}/bots")
            await page.fill("#f-token", "123:nope")
            await page.click("main button.primary")
            await expect(page.locator("#e-token")).to_contain_text("not a bot token")
            await page.fill("#f-token", bot["token"])
            await page.click("main button.primary")
            row = page.locator("table.list tbody tr")
            await expect(row).to_contain_text("@uploads_demo_bot")
            await expect(row).to_contain_text("…" + bot["token"][-4:])
            await shot(page, "bots-en")

            # A channel for the gate, then a content item and its link.
            channel = await sim.create_channel("Demo News", username="demo_news")  # type: ignore[attr-defined]
            await sim.make_admin(channel["id"], bot["id"])  # type: ignore[attr-defined]
            await page.click("table.list >> text=@uploads_demo_bot")
            # (the bot may already list it: my_chat_member tells it about new admin rights)
            await page.fill("#f-ref", "https://t.me/nobody_here_at_all")
            await page.click("main button.primary")
            await expect(page.locator("#e-ref")).to_be_visible()
            await page.fill("#f-ref", "@demo_news")
            await page.click("main button.primary")
            gate_row = page.locator("table.list tbody tr")
            await expect(gate_row).to_contain_text("Demo News")
            await expect(gate_row.locator(".badge")).to_have_text("Ready")
            await gate_row.locator("input[name=gate]").check()
            await page.click("text=Save the gate")
            await expect(page.locator("input[name=gate]")).to_be_checked()
            await page.click("nav.tabs >> text=Content")
            await expect(page.locator(".card.empty h2")).to_have_text("No content yet")
            await page.fill("#f-text", "The price list for March")
            await page.click("text=Create and get the link")
            link = await page.locator("input.copy").first.input_value()
            assert link.startswith("https://t.me/uploads_demo_bot?start=")
            await context.grant_permissions(["clipboard-read", "clipboard-write"])
            await page.click("text=Copy link")
            await expect(page.locator(".copy-button.done")).to_have_count(1)
            assert await page.evaluate("navigator.clipboard.readText()") == link
            await expect(page.locator(".item .qr svg")).to_have_count(1)
            # A visitor opens the link: not in the channel yet, so the gate is shown.
            visitor = await sim.create_user("Visitor")  # type: ignore[attr-defined]
            await sim.open_url(visitor["id"], link)  # type: ignore[attr-defined]

            async def gated() -> bool:
                n = await pool.fetchval("SELECT count(*) FROM events WHERE kind = 'gate_shown'")
                return bool(n == 1)

            await eventually(gated)
            await page.reload()
            # Opened and gated once (the started event names the item); not passed, not sent.
            counts = page.locator(".item .counts dd")
            await expect(counts).to_have_text(["1", "1", "0", "0"])

            # Some visitors, so the dashboard has figures.
            for name in ("Ali", "Mina", "Reza"):
                user = await sim.create_user(name)  # type: ignore[attr-defined]
                await sim.send_text(user["id"], "uploads_demo_bot", "hello")  # type: ignore[attr-defined]

            async def visitors() -> bool:
                n = await pool.fetchval("SELECT count(*) FROM people")
                return bool(n == 4)

            await eventually(visitors)
            await page.goto(f"{base}/")
            await expect(page.locator(".figures dd").first).to_have_text("4")
            await shot(page, "dashboard-en")

            # Persian: right to left, Persian digits, a Jalali date in Tehran time.
            await page.click("header >> text=فارسی")
            await expect(page.locator("html")).to_have_attribute("dir", "rtl")
            await expect(page.locator("h1")).to_have_text("پیشخوان")
            await expect(page.locator(".figures dd").first).to_have_text("۴")
            today = jdatetime.date.fromgregorian(
                date=datetime.now(UTC).astimezone(ZoneInfo("Asia/Tehran")).date()
            )
            jalali = today.strftime("%Y/%m/%d").translate(str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹"))
            await expect(page.locator(".head .muted")).to_contain_text(jalali)
            await shot(page, "dashboard-fa")
            await page.goto(f"{base}/bots")
            await shot(page, "bots-fa")
            await page.set_viewport_size({"width": 375, "height": 780})
            await page.goto(f"{base}/")
            await shot(page, "dashboard-fa-phone")
            await page.set_viewport_size({"width": 1280, "height": 860})

            # The audit log lists what happened, each with who and from where.
            await page.goto(f"{base}/audit")
            await shot(page, "audit-fa")
            await page.click("header >> text=English")
            await expect(page.locator("html")).to_have_attribute("dir", "ltr")
            text = await page.locator("table.audit").inner_text()
            for label in (
                "Owner created at setup",
                "Settings changed",
                "Two-step sign-in turned on",
                "Signed in",
                "Bot added",
                "Channel added",
                "Gate changed",
                "Content created",
            ):
                assert label in text, label
            assert "127.0.0.1" in text and "sara@example.com" in text
            await page.goto(f"{base}/team")
            await shot(page, "team-en")

            # No page shows the token: every page a signed-in owner can open.
            pages = [
                concrete(p)
                for (m, p), allowed in POLICY.items()
                if m == "GET" and allowed != PUBLIC
            ]
            bot_id = bot["id"]
            pages = [p.replace("999999", str(bot_id)) for p in pages] + ["/audit?kind=bot"]
            for path in [p for p in pages if p.endswith(".csv")]:
                # A download, not a page: read it as the browser's session would.
                got = await page.request.get(f"{base}{path}")
                assert got.ok and bot["token"].split(":")[1] not in await got.text(), path
            for path in [p for p in pages if not p.endswith(".csv")]:
                for language in ("en", "fa"):
                    await page.goto(f"{base}{path}")
                    content = await page.content()
                    assert bot["token"] not in content, path
                    assert bot["token"].split(":")[1] not in content, path
                    if language == "en":
                        await page.click("header >> text=فارسی")
                    else:
                        await page.click("header >> text=English")
            rows = await pool.fetch("SELECT before::text, after::text, target FROM audit_log")
            assert all(bot["token"] not in str(tuple(r)) for r in rows)

            # Remove the bot, with a confirmation page first.
            await page.goto(f"{base}/bots")
            await page.click("text=Remove")
            await expect(page.locator("h1")).to_contain_text("@uploads_demo_bot")
            await page.click("main button.danger")
            await expect(page.locator(".card.empty h2")).to_have_text("No bots yet")

            # Signed out, every page sends the visitor to sign in.
            await page.click("header >> text=Sign out")
            for path in pages:
                await page.goto(f"{base}{path}")
                assert "/signin" in page.url, path
        finally:
            await context.close()
