"""The visitor's phone: a page at ``/_sim/phone`` to act as one simulated person, and
``/_sim/files/<file_id>``, the bytes of a file a bot uploaded (the page shows photos with it)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
from aiohttp import web

from sponsorbot.simulator.botapi import SIMULATOR_KEY

_PAGE = Path(__file__).with_name("static") / "phone.html"
# A file is the uploader's bytes: opened on its own, it may show but never run anything here.
_FILE_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; "
    "sandbox",
}


async def phone_page(request: web.Request) -> web.FileResponse:
    """The phone page (plain HTML and a little JavaScript over the control API)."""
    return web.FileResponse(_PAGE, headers={"Cache-Control": "no-store"})


async def file_bytes(request: web.Request) -> web.Response:
    """The kept bytes of an uploaded file, with its media type; 404 for a file id the world
    does not know, one sent by URL or by the control API (no bytes), or one dropped since."""
    sim = request.app[SIMULATOR_KEY]
    file_id = request.match_info["file_id"]
    stored = sim.world.file_bytes.get(file_id)
    if stored is None:
        body = orjson.dumps({"ok": False, "error": f"no bytes of file {file_id!r}"})
        return web.Response(body=body, status=404, content_type="application/json")
    # The same seed after a reset gives the same file ids to other bytes: the tag is the bytes'.
    etag = '"' + hashlib.sha256(stored.data).hexdigest()[:32] + '"'
    headers = {**_FILE_HEADERS, "Content-Type": stored.content_type, "ETag": etag}
    if etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    return web.Response(body=stored.data, headers=headers)


def setup(app: web.Application) -> None:
    """Add the phone page's routes to ``app``."""
    app.router.add_get("/_sim/phone", phone_page)
    app.router.add_get("/_sim/files/{file_id}", file_bytes)
