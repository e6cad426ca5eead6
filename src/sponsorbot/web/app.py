"""The FastAPI application of the api role."""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import SecretStr
from starlette.exceptions import HTTPException
from starlette.types import Receive, Scope, Send

from sponsorbot import __version__
from sponsorbot.config import Settings
from sponsorbot.db.database import Database
from sponsorbot.db.migrate import is_current
from sponsorbot.features.base import Features
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.stats.metrics import Metrics
from sponsorbot.web.api import install_api
from sponsorbot.web.api.errors import is_api, on_http, on_validation
from sponsorbot.web.deps import Services
from sponsorbot.web.errors import install_refusals
from sponsorbot.web.limits import BodyLimit, Limits
from sponsorbot.web.panel import PanelConfig, mount_panel
from sponsorbot.web.panel.errors import bad_path, not_found_page
from sponsorbot.web.parts.all import WEB_PARTS
from sponsorbot.web.registry import WebPart, check
from sponsorbot.web.webhooks import WebhookIntake

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
# Headers a reverse proxy adds: a request carrying one came from elsewhere, even if the proxy
# that passed it on runs on this machine.
_FORWARDED = ("forwarded", "x-forwarded-for", "x-real-ip")


def may_scrape(
    request: Request, token: SecretStr | None, proxies: tuple[IPNetwork, ...] = ()
) -> bool:
    """/metrics names bots and their traffic (docs/adr/0019-metrics.md): it is served to a
    request straight from this machine, or one bearing the metrics token. A request from a
    trusted reverse proxy comes from elsewhere, whatever headers it carries."""
    given = request.headers.get("authorization", "")
    if token is not None and hmac.compare_digest(
        given.encode(), f"Bearer {token.get_secret_value()}".encode()
    ):
        return True
    host = request.client.host if request.client else ""
    try:
        peer = ipaddress.ip_address(host)
    except ValueError:
        return False
    proxied = any(peer in network for network in proxies) or any(
        h in request.headers for h in _FORWARDED
    )
    return peer.is_loopback and not proxied


async def on_http_error(request: Request, exc: Exception) -> Response:
    """An address nothing serves: the panel's not-found page, JSON under /api."""
    if isinstance(exc, HTTPException) and exc.status_code == 404 and not is_api(request):
        return await not_found_page(request)
    return await on_http(request, exc)


async def on_invalid_request(request: Request, exc: Exception) -> Response:
    """A panel address whose id is not one (/campaigns/abc) does not exist: the not-found
    page. The API keeps its JSON, naming the bad field."""
    if isinstance(exc, RequestValidationError) and not is_api(request) and bad_path(exc):
        return await not_found_page(request)
    return await on_validation(request, exc)


class App(FastAPI):
    """FastAPI with the webhook intake in front of everything, its own middleware included."""

    # Not `webhooks`: FastAPI's own attribute of that name documents outgoing webhooks.
    telegram_intake: WebhookIntake | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        intake = self.telegram_intake
        if intake is not None and intake.takes(scope):
            await intake(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def create_app(
    settings: Settings,
    db: Database,
    features: Features,
    panel: PanelConfig | None = None,
    parts: tuple[WebPart, ...] = WEB_PARTS,
) -> FastAPI:
    """The api role's application: health, metrics, webhooks, and the web parts' owner API
    and panel pages."""
    check(parts)
    app = App(
        title="Sponsorbot",
        version=__version__,
        openapi_url="/api/openapi.json",
        # No Swagger UI: it loads its script from a CDN (ADR 0019). The document stays; any
        # OpenAPI viewer opens /api/openapi.json.
        docs_url=None,
        redoc_url=None,
    )
    services = Services.of(features, parts)
    app.state.settings = settings
    app.state.db = db
    app.state.services = services
    install_api(app, parts)
    config = panel or PanelConfig(
        secure_cookies=settings.cookie_secure,
        panel_url=settings.panel_url,
        trusted_networks=settings.trusted_networks,
        secret_key=settings.secret(),
    )
    mount_panel(app, db.pool, config, parts)
    install_refusals(app)
    app.add_exception_handler(HTTPException, on_http_error)
    app.add_exception_handler(RequestValidationError, on_invalid_request)
    # Bodies are capped before anything reads them (ADR 0012); the webhook intake caps its own.
    app.add_middleware(BodyLimit, limits=Limits(panel_upload=lambda: config.upload_limit))
    app.telegram_intake = WebhookIntake(features.get(BotsService).intake)
    metrics_of = features.get(Metrics)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> JSONResponse:
        try:
            async with db.pool.acquire(timeout=2) as conn:
                current = await is_current(conn)
        except Exception as exc:  # the database is down: say so, do not crash
            return JSONResponse(
                {"status": "unavailable", "reason": type(exc).__name__}, status_code=503
            )
        if not current:
            return JSONResponse({"status": "migrating"}, status_code=503)
        return JSONResponse({"status": "ok", "version": __version__})

    @app.get("/metrics", include_in_schema=False)
    async def metrics(request: Request) -> Response:
        if not may_scrape(request, settings.metrics_token, settings.trusted_networks):
            return PlainTextResponse(
                "metrics are served to this machine, or with SPONSORBOT_METRICS_TOKEN as a "
                "bearer token",
                status_code=403,
            )
        return Response(await metrics_of.render(), media_type=CONTENT_TYPE_LATEST)

    return app
