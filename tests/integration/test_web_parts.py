"""The app serves what its web parts register: a part left out takes its API routes, panel pages,
menu entry and bot tab with it while the rest works, and every menu entry and tab leads to a
page."""

from __future__ import annotations

import re
from pathlib import Path

import asyncpg

from sponsorbot.web.panel import i18n
from sponsorbot.web.parts.all import WEB_PARTS
from sponsorbot.web.registry import WebPart, menu, tabs
from tests.integration.panel_kit import PanelApp, add_member, client, panel_app, sign_in
from tests.integration.test_panel_roles import api_routes, panel_routes

WITHOUT_SHOP = tuple(part for part in WEB_PARTS if part.name != "shop")
SHOP = next(part for part in WEB_PARTS if part.name == "shop")
MAIN_MENU = re.compile(r'<nav class="nav"[^>]*>(.*?)</nav>', re.DOTALL)
BOT_TABS = re.compile(r'<nav class="tabs"[^>]*>(.*?)</nav>', re.DOTALL)
LINK = re.compile(r'<a href="([^"]+)" ?(aria-current="page")?>([^<]*)</a>')


def _api_paths(app: PanelApp) -> set[str]:
    return set(app.app.openapi()["paths"])


def _part_api_paths(part: WebPart) -> set[str]:
    return {"/api/v1" + r.path for a in part.api for r in api_routes(a.router.routes)}


def _part_panel_routes(part: WebPart) -> set[tuple[str, str]]:
    return {
        (method, r.path)
        for router in part.panel
        for r in api_routes(router.routes)
        for method in r.methods or ()
    }


def _menu(page: str, where: re.Pattern[str] = MAIN_MENU) -> list[tuple[str, bool, str]]:
    """The links of the main menu (or of `where`) on a page: address, marked current, label."""
    found = where.search(page)
    assert found, f"no {where.pattern} on the page"
    return [(href, bool(current), label) for href, current, label in LINK.findall(found[1])]


async def test_an_app_without_the_shop_part_has_no_shop_api_pages_or_menu_entry(
    panel: PanelApp, pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    shop_api, shop_pages = _part_api_paths(SHOP), _part_panel_routes(SHOP)
    assert shop_api and shop_pages
    assert shop_api <= _api_paths(panel) and shop_pages <= panel_routes(panel)
    async with client(panel.app) as http:
        assert (await http.get("/api/v1/shop/transfers")).status_code == 401  # there: no token
    async with panel_app(pool, db_dsn, tmp_path / "no-shop", WITHOUT_SHOP) as without:
        assert _api_paths(without) == _api_paths(panel) - shop_api
        assert panel_routes(without) == panel_routes(panel) - shop_pages
        assert not without.services.serves("shop")
        owner = await add_member(pool, "owner")
        async with client(without.app) as http:
            await sign_in(http, owner)
            assert (await http.get("/api/v1/shop/transfers")).status_code == 404
            assert (await http.get("/shop/orders")).status_code == 404
            home = await http.get("/")
            assert home.status_code == 200
            links = [href for href, _current, _label in _menu(home.text)]
            assert "/shop/orders" not in links
            assert links == [e.href for e in menu(WITHOUT_SHOP)]
            for href in links:  # the rest works
                assert (await http.get(href)).status_code == 200, href
            bot = await without.sim.create_bot("no_shop_bot")  # type: ignore[attr-defined]
            added = await without.engine.bots.add(bot["token"], "polling")
            content = await http.get(f"/bots/{added['id']}/content")
            assert content.status_code == 200
            shown = _menu(content.text, BOT_TABS)
            assert [href.rsplit("/", 1)[1] for href, _c, _l in shown] == [
                "channels",
                "content",
                "settings",
            ]
            assert [href for href, current, _l in shown if current] == [content.url.path]


async def test_every_menu_entry_and_bot_tab_answers_the_owner_and_is_marked_on_its_page(
    panel: PanelApp,
) -> None:
    entries = menu(WEB_PARTS)
    owner = await add_member(panel.pool, "owner")
    async with client(panel.app) as http:
        await sign_in(http, owner)
        for entry in entries:
            page = await http.get(entry.href)
            assert page.status_code == 200, f"{entry.href}: {page.status_code}"
            shown = _menu(page.text)
            assert [(href, label) for href, _c, label in shown] == [
                (e.href, e.label) for e in entries
            ]
            assert [href for href, current, _l in shown if current] == [entry.href]
        bot = await panel.sim.create_bot("tabs_bot")  # type: ignore[attr-defined]
        added = await panel.engine.bots.add(bot["token"], "polling")
        for tab in tabs(WEB_PARTS):
            page = await http.get(tab.href(added["id"]))
            assert page.status_code == 200, f"{tab.href(added['id'])}: {page.status_code}"
            shown = _menu(page.text, BOT_TABS)
            assert [label for _h, _c, label in shown] == [t.label for t in tabs(WEB_PARTS)]
            assert [href for href, current, _l in shown if current] == [tab.href(added["id"])]


async def test_the_menu_shows_a_role_only_its_entries_in_its_language(panel: PanelApp) -> None:
    analyst = await add_member(panel.pool, "analyst")
    await panel.pool.execute("UPDATE users SET language = 'fa' WHERE email = $1", analyst)
    async with client(panel.app) as http:
        await sign_in(http, analyst)
        shown = _menu((await http.get("/stats")).text)
    i18n.use_language("fa")
    try:
        expected = [(e.href, i18n.gettext(e.label)) for e in menu(WEB_PARTS) if not e.permission]
    finally:
        i18n.use_language("en")
    assert [(href, label) for href, _c, label in shown] == expected
    assert ("/", "پیشخوان") in expected and ("/team", "تیم") not in expected
