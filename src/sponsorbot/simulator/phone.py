"""The visitor's phone: a page at ``/_sim/phone`` to act as one simulated person."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

_PAGE = Path(__file__).with_name("static") / "phone.html"


async def phone_page(request: web.Request) -> web.FileResponse:
    """The phone page (plain HTML and a little JavaScript over the control API)."""
    return web.FileResponse(_PAGE, headers={"Cache-Control": "no-store"})


def setup(app: web.Application) -> None:
    """Add the phone page's route to ``app``."""
    app.router.add_get("/_sim/phone", phone_page)
