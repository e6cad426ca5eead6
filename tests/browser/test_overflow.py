"""Every page of the panel fits its screen: on the demo's data, at 1280, 1366 and 390 px wide,
in English and in Persian, no page scrolls sideways and no element runs past the viewport.

The pages are the panel's own GET routes (a route added without a page here fails
`test_every_panel_page_is_visited`), with the demo's records for the detail pages.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
from fastapi.routing import APIRoute
from playwright.async_api import Browser, Page, expect

import sponsorbot.web.panel
from sponsorbot.demo.campaigns import report_token
from sponsorbot.demo.setup import OWNER_EMAIL, OWNER_PASSWORD
from tests.browser.kit import NEEDS_CHROMIUM, sign_in
from tests.integration.demokit import running_demo

pytestmark = [pytest.mark.browser, pytest.mark.slow, NEEDS_CHROMIUM]

WIDTHS = (1280, 1366, 390)
HEIGHT = 900
# GET routes that are not pages: downloads, fragments a page fetches, a step that needs a
# half-finished sign-in. Each page that holds a fragment is visited with it.
NOT_PAGES = {
    "/stats.csv": "a CSV download",
    "/broadcasts/audience": "the audience count, a fragment of /broadcasts/new",
    "/broadcasts/{bot_id}/{broadcast_id}/progress": "a fragment of the broadcast's page",
    "/signin/two-step": "needs a sign-in waiting for its second step",
}
# Pages of the panel for someone signed out, then for the demo's owner.
SIGNED_OUT = ("/signin", "/setup", "/invite/{token}", "/reset/{token}", "/r/{token}")

# What runs past the viewport: the page's own width, and each outermost element whose box
# passes the left or right edge. An element inside a box that scrolls or clips sideways (a
# wide chart in its own scroller, the visually hidden labels) is that box's business.
OVERFLOW_JS = """
() => {
  const view = document.documentElement.clientWidth;
  const found = [];
  const page = document.documentElement.scrollWidth;
  if (page > view) found.push(`the page is ${page} px wide`);
  const name = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (typeof el.className === "string" && el.className.trim())
      s += "." + el.className.trim().split(/\\s+/).join(".");
    const text = (el.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 40);
    return text ? `${s} "${text}"` : s;
  };
  const clipped = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const style = getComputedStyle(p);
      if (style.overflowX !== "visible" || style.clipPath !== "none") return true;
    }
    return false;
  };
  const outside = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return false;
    return r.right > view + 0.5 || r.left < -0.5;
  };
  for (const el of document.body.querySelectorAll("*")) {
    if (!outside(el) || clipped(el)) continue;
    if (el.parentElement && el.parentElement !== document.body && outside(el.parentElement))
      continue;
    const r = el.getBoundingClientRect();
    found.push(`${name(el)} spans ${Math.round(r.left)}..${Math.round(r.right)} px`);
  }
  return found;
}
"""


@dataclass
class Records:
    """The demo's records each detail page is shown for."""

    bots: list[int]
    shop_bot: int
    product: int
    campaigns: list[int]
    broadcasts: list[tuple[int, int]]
    editable_broadcast: tuple[int, int] | None
    orders: list[int]
    visitor: tuple[int, int]
    report: str


async def _records(pool: asyncpg.Pool) -> Records:
    bots = [r["id"] for r in await pool.fetch("SELECT id FROM bots ORDER BY username")]
    product = await pool.fetchrow("SELECT id, bot_id FROM shop_products ORDER BY id LIMIT 1")
    broadcasts = [
        (r["bot_id"], r["id"])
        for r in await pool.fetch("SELECT bot_id, id FROM broadcasts ORDER BY bot_id, id")
    ]
    editable = await pool.fetchrow(
        "SELECT bot_id, id FROM broadcasts WHERE status IN ('draft', 'scheduled') LIMIT 1"
    )
    visitor = await pool.fetchrow(
        "SELECT bot_id, user_id FROM people ORDER BY bot_id, user_id LIMIT 1"
    )
    token = await report_token(pool)
    assert product and visitor and token
    return Records(
        bots=bots,
        shop_bot=product["bot_id"],
        product=product["id"],
        campaigns=[r["id"] for r in await pool.fetch("SELECT id FROM campaigns ORDER BY id")],
        broadcasts=broadcasts,
        editable_broadcast=(editable["bot_id"], editable["id"]) if editable else None,
        orders=[r["id"] for r in await pool.fetch("SELECT id FROM shop_orders ORDER BY id")],
        visitor=(visitor["bot_id"], visitor["user_id"]),
        report=token,
    )


def signed_out_pages(records: Records) -> dict[str, list[str]]:
    """Each signed-out route with the addresses it is visited at."""
    return {
        "/signin": ["/signin"],
        "/setup": ["/setup"],
        "/invite/{token}": ["/invite/no-such-invitation"],
        "/reset/{token}": ["/reset/no-such-reset"],
        "/r/{token}": [f"/r/{records.report}", "/r/no-such-report"],
    }


def signed_in_pages(records: Records) -> dict[str, list[str]]:
    """Each signed-in route with the addresses it is visited at: every campaign, broadcast
    and order of the demo, each bot's pages."""
    bot, shop = records.bots, records.shop_bot
    return {
        "/": ["/"],
        "/account": ["/account"],
        "/account/two-step": ["/account/two-step"],
        "/notifications": ["/notifications"],
        "/audit": ["/audit"],
        "/bots": ["/bots"],
        "/bots/{bot_id}/channels": [f"/bots/{b}/channels" for b in bot],
        "/bots/{bot_id}/content": [f"/bots/{b}/content" for b in bot],
        "/bots/{bot_id}/remove": [f"/bots/{bot[0]}/remove"],
        "/bots/{bot_id}/settings": [f"/bots/{shop}/settings"],
        "/bots/{bot_id}/shop": [f"/bots/{shop}/shop"],
        "/bots/{bot_id}/shop/products": [f"/bots/{shop}/shop/products"],
        "/bots/{bot_id}/shop/products/new": [f"/bots/{shop}/shop/products/new"],
        "/bots/{bot_id}/shop/products/{product_id}/edit": [
            f"/bots/{shop}/shop/products/{records.product}/edit"
        ],
        "/broadcasts": ["/broadcasts"],
        "/broadcasts/new": ["/broadcasts/new"],
        "/broadcasts/{bot_id}/{broadcast_id}": [
            f"/broadcasts/{b}/{n}" for b, n in records.broadcasts
        ],
        "/broadcasts/{bot_id}/{broadcast_id}/edit": (
            [f"/broadcasts/{b}/{n}/edit" for b, n in [records.editable_broadcast]]
            if records.editable_broadcast
            else []
        ),
        "/campaigns": ["/campaigns", "/campaigns?status=running"],
        "/campaigns/new": ["/campaigns/new"],
        "/campaigns/{campaign_id}": [f"/campaigns/{n}" for n in records.campaigns],
        "/campaigns/{campaign_id}/edit": [f"/campaigns/{records.campaigns[-1]}/edit"],
        "/settings": ["/settings"],
        "/shop/orders": ["/shop/orders"],
        "/shop/orders/{order_id}": [f"/shop/orders/{n}" for n in records.orders],
        "/shop/payments": ["/shop/payments"],
        "/shop/transfers": ["/shop/transfers"],
        "/stats": ["/stats", "/stats?range=30d"],
        "/team": ["/team"],
        "/tokens": ["/tokens"],
        "/visitors": ["/visitors", "/visitors?q=a"],
        "/visitors/{bot_id}/{user_id}": ["/visitors/{}/{}".format(*records.visitor)],
        "not found": ["/nope", "/campaigns/abc", "/campaigns/999999"],
    }


def panel_get_routes() -> set[str]:
    """Every GET route the panel serves, read from its routes_* modules' routers."""
    found: set[str] = set()
    for module in pkgutil.iter_modules(sponsorbot.web.panel.__path__):
        if module.name.startswith("routes_"):
            router = importlib.import_module(f"sponsorbot.web.panel.{module.name}").router
            for route in router.routes:
                if isinstance(route, APIRoute) and "GET" in (route.methods or ()):
                    found.add(route.path)
    return found


def test_every_panel_page_is_visited() -> None:
    records = Records([1], 1, 1, [1], [(1, 1)], (1, 1), [1], (1, 1), "t")
    visited = set(signed_out_pages(records)) | set(signed_in_pages(records))
    routes = panel_get_routes()
    assert "/campaigns/{campaign_id}" in routes
    assert routes - set(NOT_PAGES) <= visited, "add the new page to the test"


async def _language(page: Page, lang: str) -> None:
    """Switch the page's language with the header's link, if it is not already `lang`."""
    if await page.locator("html").get_attribute("lang") != lang:
        await page.click(f"header button[name=language][value={lang}]")
        await expect(page.locator("html")).to_have_attribute("lang", lang)


async def _walk(page: Page, base: str, addresses: list[str], lang: str) -> list[str]:
    """Open each address once and measure it at each width: what overflows, named."""
    failures: list[str] = []
    for address in addresses:
        await page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
        # The sponsor's report takes its language from the link, not the viewer.
        report = address.startswith("/r/")
        answer = await page.goto(base + address + (f"?lang={lang}" if report else ""))
        assert answer is not None and answer.status < 500, f"{address}: {answer and answer.status}"
        assert await page.locator("html").get_attribute("lang") == lang, address
        for width in WIDTHS:
            await page.set_viewport_size({"width": width, "height": HEIGHT})
            for problem in await page.evaluate(OVERFLOW_JS):
                failures.append(f"{lang} {width}px {address}: {problem}")
    return failures


async def test_no_panel_page_overflows_at_1280_1366_or_390_in_either_language(
    tmp_path: Path, chromium: Browser
) -> None:
    async with running_demo(tmp_path / "demo") as demo:
        records = await _records(demo.pool)
        outside = [a for addresses in signed_out_pages(records).values() for a in addresses]
        inside = [a for addresses in signed_in_pages(records).values() for a in addresses]
        began = time.monotonic()
        failures: list[str] = []
        async with await chromium.new_context(
            viewport={"width": WIDTHS[0], "height": HEIGHT}
        ) as context:
            page = await context.new_page()
            for lang in ("en", "fa"):
                await page.goto(f"{demo.panel}/signin")
                await _language(page, lang)
                failures += await _walk(page, demo.panel, outside, lang)
            await page.goto(f"{demo.panel}/signin")
            await _language(page, "en")
            await sign_in(page, demo.panel, OWNER_EMAIL, OWNER_PASSWORD)
            for lang in ("en", "fa"):
                await _language(page, lang)
                failures += await _walk(page, demo.panel, inside, lang)
        seconds = time.monotonic() - began
        pages = 2 * (len(outside) + len(inside))
        assert not failures, f"{len(failures)} overflows:\n" + "\n".join(failures)
        assert seconds < 120, f"{pages} pages at {len(WIDTHS)} widths took {seconds:.0f} s"
