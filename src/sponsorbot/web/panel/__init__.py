"""The web panel: server-rendered pages (Jinja + htmx) for owners and their team."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import asyncpg
from fastapi import FastAPI, Request
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sponsorbot.features.accounts import users as accounts
from sponsorbot.web.panel.web import (
    CsrfRefused,
    Forbidden,
    Panel,
    PanelConfig,
    SignInRequired,
    Viewer,
    make_environment,
    redirect,
    render,
    security_headers,
    sign_in_url,
)
from sponsorbot.web.registry import WebPart, menu, tabs, template_dirs

STATIC = Path(__file__).resolve().parent.parent / "static"

__all__ = ["PanelConfig", "announce_setup_code", "mount_panel"]


def _viewer(request: Request) -> Viewer | None:
    viewer: Viewer | None = getattr(request.state, "viewer", None)
    return viewer


class PanelHeaders:
    """Adds the panel's security headers (CSP, nosniff, framing, HSTS over https) to every
    response outside the owner API: pages, redirects, static files and error pages alike."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or path == "/api" or path.startswith("/api/"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in security_headers(request).items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def mount_panel(
    app: FastAPI,
    pool: asyncpg.Pool,
    config: PanelConfig | None = None,
    parts: Sequence[WebPart] = (),
) -> None:
    """Add the web parts' pages, their templates, main menu and bot tabs, the static files,
    the error pages and headers to the app."""
    environment = make_environment(template_dirs(parts))
    app.state.panel = Panel(pool, config or PanelConfig(), environment, menu(parts), tabs(parts))
    app.add_middleware(PanelHeaders)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for part in parts:
        for router in part.panel:
            app.include_router(router)

    @app.exception_handler(SignInRequired)
    async def _sign_in(request: Request, exc: SignInRequired) -> Response:
        return redirect(request, sign_in_url(request))

    @app.exception_handler(Forbidden)
    async def _forbidden(request: Request, exc: Forbidden) -> Response:
        viewer = _viewer(request)
        assert viewer is not None  # Forbidden is raised only after the viewer is known
        return render(request, viewer, "forbidden.html", status=403)

    @app.exception_handler(CsrfRefused)
    async def _csrf(request: Request, exc: CsrfRefused) -> Response:
        viewer = _viewer(request)
        assert viewer is not None
        return render(request, viewer, "csrf.html", status=403)


async def announce_setup_code(pool: asyncpg.Pool, config: PanelConfig | None = None) -> str | None:
    """While no owner exists, print a fresh one-time setup code to the console (stderr only).

    Written straight to the terminal, not through logging: log files are kept, and the code
    must not be.
    """
    code = await accounts.new_setup_code(pool, (config or PanelConfig()).clock())
    if code is not None:
        print(
            f"\n  Sponsorbot first run: open /setup and enter the setup code {code}"
            "\n  (valid for one hour; `sponsorbot setup-code` prints a new one)\n",
            file=sys.stderr,
            flush=True,
        )
    return code
