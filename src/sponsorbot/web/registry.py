"""What a web part is: a feature's web side, registered once (its routes, templates, menu
entry, tabs and the services it uses), and how the app reads the list of them.

Features may not import the web framework, so what a feature shows on the web lives in the web
layer, one module per feature under `web/parts/` (`web/parts/shop.py` for `features/shop/`),
each exposing `PART = WebPart(...)`. `web/parts/all.py: WEB_PARTS` lists them; the owner API,
the panel, its main menu, the tabs of a bot's pages and `web/deps.py: Services` are all built
from that list, so a feature left out of it has no route, no template, no menu entry or tab
and no service handle on the web. This module sits below the API, the panel and the parts: it
imports none of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fastapi import APIRouter

# The templates every page shares (base.html, forms, tables); a part's own are beside them,
# in a directory named for the part.
TEMPLATES = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True, slots=True)
class Api:
    """An owner API router, mounted under /api/v1, and its group in the OpenAPI document."""

    router: APIRouter
    tag: str


@dataclass(frozen=True, slots=True)
class NavEntry:
    """One link of the panel's main menu.

    `label` is an English message of the panel's catalogues (marked with `N_`), shown in the
    viewer's language. `order` places it among every part's entries (lowest first).
    `permission`, when given, shows it only to roles that have it. The link is the current
    page on `href` itself, or on any path under `section` when one is given.
    """

    href: str
    label: str
    order: int
    permission: str | None = None
    section: str | None = None

    def current(self, path: str) -> bool:
        """Whether the page at `path` belongs to this entry (the menu marks it)."""
        return path == self.href if self.section is None else path.startswith(self.section)


@dataclass(frozen=True, slots=True)
class BotTab:
    """One tab of a bot's pages, at `/bots/<id>/<page>`.

    Like a menu entry: an English catalogue message for `label`, a place among every part's
    tabs (`order`), an optional `permission`. The tab is the current one on its page alone, or
    with `deep` on any page whose path holds `/<page>` (the shop's products under its tab).
    """

    page: str
    label: str
    order: int
    permission: str | None = None
    deep: bool = False

    def href(self, bot_id: int) -> str:
        """The tab's address for this bot."""
        return f"/bots/{bot_id}/{self.page}"

    def current(self, path: str) -> bool:
        """Whether the page at `path` is under this tab."""
        return f"/{self.page}" in path if self.deep else path.endswith(f"/{self.page}")


@dataclass(frozen=True, slots=True)
class WebPart:
    """What one feature brings to the web: routes, templates, menu entries, tabs on a bot's
    pages, services used.

    `services` are the feature services (by class) its routes ask `Services` for; the app
    refuses to start when no feature provides one. `templates` names its own directory
    under the shared one; templates keep plain names (`notifications.html`), unique across
    parts.
    """

    name: str
    api: tuple[Api, ...] = ()
    panel: tuple[APIRouter, ...] = ()
    templates: str | None = None
    nav: tuple[NavEntry, ...] = ()
    bot_tabs: tuple[BotTab, ...] = ()
    services: tuple[type, ...] = ()

    @property
    def template_dir(self) -> Path | None:
        """Where this part's own templates are."""
        return TEMPLATES / self.templates if self.templates else None


def menu(parts: Iterable[WebPart]) -> tuple[NavEntry, ...]:
    """Every part's menu entries, in their order."""
    return tuple(sorted((entry for part in parts for entry in part.nav), key=lambda e: e.order))


def tabs(parts: Iterable[WebPart]) -> tuple[BotTab, ...]:
    """Every part's tabs of a bot's pages, in their order."""
    return tuple(sorted((tab for part in parts for tab in part.bot_tabs), key=lambda t: t.order))


def template_dirs(parts: Iterable[WebPart]) -> tuple[Path, ...]:
    """The shared template directory, then each part's own, in the parts' order."""
    return (TEMPLATES, *(d for part in parts if (d := part.template_dir) is not None))


def check(parts: Sequence[WebPart]) -> None:
    """Refuse a list where two parts share a name, two menu entries or bot tabs a place, or two
    template directories a template name (one would hide the other)."""
    names = [part.name for part in parts]
    if len(set(names)) != len(names):
        raise ValueError(f"web parts named twice: {sorted(n for n in names if names.count(n) > 1)}")
    for kind, orders in (
        ("menu entries", [entry.order for entry in menu(parts)]),
        ("bot tabs", [tab.order for tab in tabs(parts)]),
    ):
        if len(set(orders)) != len(orders):
            raise ValueError(f"two {kind} share an order")
    seen: dict[str, Path] = {}
    for directory in template_dirs(parts):
        for template in directory.glob("*.html"):
            if template.name in seen:
                raise ValueError(f"{template.name} is in {seen[template.name]} and {directory}")
            seen[template.name] = directory
