"""The web parts' registry: every route module registered once, the main menu as it was written
by hand in base.html, and a list that contradicts itself refused."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from dataclasses import replace
from pathlib import Path
from typing import get_type_hints

import pytest

from sponsorbot.web import api, panel
from sponsorbot.web.deps import Services
from sponsorbot.web.parts.all import WEB_PARTS
from sponsorbot.web.registry import (
    TEMPLATES,
    BotTab,
    NavEntry,
    WebPart,
    check,
    menu,
    tabs,
    template_dirs,
)

# The menu base.html drew before it was read from the parts: link, label, who sees it (a
# permission, None for every member), and the paths on which it is the current page (a prefix,
# None for the link alone).
HAND_WRITTEN_MENU = [
    ("/", "Dashboard", None, None),
    ("/bots", "Bots", None, "/bots"),
    ("/stats", "Statistics", None, "/stats"),
    ("/visitors", "Visitors", None, "/visitors"),
    ("/campaigns", "Campaigns", None, "/campaigns"),
    ("/broadcasts", "Broadcasts", None, "/broadcasts"),
    ("/shop/orders", "Shop", None, "/shop"),
    ("/team", "Team", "team", "/team"),
    ("/audit", "Audit log", "audit", "/audit"),
    ("/tokens", "API tokens", "settings", "/tokens"),
    ("/settings", "Settings", "settings", "/settings"),
]

# The tabs _bot_tabs.html drew by hand: page, label, permission, and whether the tab is current
# on every path holding "/<page>" (True) or on its own page only (False).
HAND_WRITTEN_TABS = [
    ("channels", "Channels and gate", None, False),
    ("content", "Content", None, False),
    ("shop", "Shop", None, True),
    ("settings", "Bot settings", "bots", False),
]


def _route_modules() -> dict[str, object]:
    """Every `routes_*` module of the owner API and the panel, by name, with its router."""
    found = {}
    for package in (api, panel):
        for module in pkgutil.iter_modules(package.__path__):
            if module.name.startswith("routes_"):
                name = f"{package.__name__}.{module.name}"
                found[name] = importlib.import_module(name).router
    return found


def test_every_route_module_is_in_exactly_one_part() -> None:
    registered = [a.router for part in WEB_PARTS for a in part.api] + [
        router for part in WEB_PARTS for router in part.panel
    ]
    modules = _route_modules()
    assert len(modules) > 20
    missing = [name for name, router in modules.items() if router not in registered]
    assert not missing, f"register these routers in a web part (web/parts/): {missing}"
    assert len({id(router) for router in registered}) == len(registered), "a router twice"


def test_the_menu_is_the_one_written_by_hand() -> None:
    entries = menu(WEB_PARTS)
    assert [(e.href, e.label, e.permission, e.section) for e in entries] == HAND_WRITTEN_MENU


def test_the_bot_tabs_are_the_ones_written_by_hand() -> None:
    found = [(t.page, t.label, t.permission, t.deep) for t in tabs(WEB_PARTS)]
    assert found == HAND_WRITTEN_TABS
    by_page = {tab.page: tab for tab in tabs(WEB_PARTS)}
    assert by_page["shop"].href(7) == "/bots/7/shop"
    assert by_page["shop"].current("/bots/7/shop/products/new")
    assert by_page["content"].current("/bots/7/content")
    assert not by_page["content"].current("/bots/7/content/upload")
    assert not by_page["settings"].current("/bots/7/texts")


def test_a_menu_entry_marks_its_own_pages_only() -> None:
    by_href = {entry.href: entry for entry in menu(WEB_PARTS)}
    assert by_href["/"].current("/")
    assert not by_href["/"].current("/bots")
    assert by_href["/shop/orders"].current("/shop/payments")
    assert by_href["/bots"].current("/bots/3/shop")  # a bot's shop tab is under Bots
    assert not by_href["/shop/orders"].current("/bots/3/shop")
    assert not by_href["/settings"].current("/bots/3/settings")


def test_each_part_s_templates_are_found_in_its_own_directory() -> None:
    directories = template_dirs(WEB_PARTS)
    assert directories[0] == TEMPLATES
    stats = next(part for part in WEB_PARTS if part.name == "stats")
    assert stats.template_dir in directories
    assert stats.template_dir is not None and (stats.template_dir / "dashboard.html").is_file()
    assert not (TEMPLATES / "dashboard.html").exists()
    check(WEB_PARTS)  # no template name in two places


def test_a_list_that_contradicts_itself_is_refused() -> None:
    base = WebPart("notes", nav=(NavEntry("/notes", "Notes", 150),))
    with pytest.raises(ValueError, match="named twice"):
        check((*WEB_PARTS, base, replace(base, nav=())))
    with pytest.raises(ValueError, match="share an order"):
        check((*WEB_PARTS, replace(base, nav=(NavEntry("/notes", "Notes", 100),))))
    with pytest.raises(ValueError, match="two bot tabs share an order"):
        check((*WEB_PARTS, replace(base, bot_tabs=(BotTab("notes", "Notes", 300),))))


def test_a_part_s_template_may_not_hide_a_shared_one(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "base.html").write_text("hidden", encoding="utf-8")
    part = WebPart("notes", templates=str(tmp_path / "notes"))
    # An absolute directory replaces the shared root in the join, as for any path.
    assert part.template_dir == tmp_path / "notes"
    with pytest.raises(ValueError, match=r"base\.html is in"):
        check((*WEB_PARTS, part))


def _shorthands() -> dict[str, type]:
    """Services' named properties and the class each hands out."""
    return {
        name: get_type_hints(member.fget)["return"]
        for name, member in inspect.getmembers(Services)
        if isinstance(member, property) and member.fget is not None
    }


def _is_services(node: ast.expr) -> bool:
    """`services_of(request)`, or a variable named `features` or `services` (what the route
    modules call the Services they are handed)."""
    if isinstance(node, ast.Call):
        return getattr(node.func, "id", "") == "services_of"
    return isinstance(node, ast.Name) and node.id in ("features", "services")


def _services_used(name: str, shorthands: dict[str, type]) -> set[type]:
    """The services a route module takes: by shorthand (`services_of(request).shop`) or by
    class (`services.get(ShopService)`)."""
    module = importlib.import_module(name)
    used = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.Attribute) and node.attr in shorthands and _is_services(node.value):
            used.add(shorthands[node.attr])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _is_services(node.func.value)
            and node.args
            and isinstance(node.args[0], ast.Name)
            and isinstance(kind := getattr(module, node.args[0].id, None), type)
        ):
            used.add(kind)
    return used


def test_each_part_declares_the_services_its_routes_take() -> None:
    shorthands = _shorthands()
    assert len(shorthands) > 10
    missing = []
    for part in WEB_PARTS:
        routers = [a.router for a in part.api] + list(part.panel)
        modules = {route.endpoint.__module__ for r in routers for route in r.routes}  # type: ignore[attr-defined]
        for module in sorted(modules):
            for kind in _services_used(module, shorthands) - set(part.services):
                missing.append(f"{part.name}: {module} uses {kind.__name__}")
    assert not missing, "add them to the part's services: " + "; ".join(missing)
