"""The FastAPI application of the api role."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import JSONResponse, PlainTextResponse

from sponsorbot import __version__
from sponsorbot.config import Settings
from sponsorbot.db.database import Database
from sponsorbot.db.migrate import is_current
from sponsorbot.features.base import Features
from sponsorbot.web.api import install_api
from sponsorbot.web.deps import Services
from sponsorbot.web.errors import install_refusals
from sponsorbot.web.panel import PanelConfig, mount_panel
from sponsorbot.web.webhooks import WebhookIntake


def create_app(
    settings: Settings, db: Database, features: Features, panel: PanelConfig | None = None
) -> FastAPI:
    """The api role's application: health, metrics, webhooks, the panel; the owner API too."""
    app = FastAPI(
        title="Sponsorbot",
        version=__version__,
        openapi_url="/api/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
    )
    services = Services.of(features)
    app.state.settings = settings
    app.state.db = db
    app.state.services = services
    install_api(app)
    secure = (settings.public_url or "").startswith("https://")
    mount_panel(app, db.pool, panel or PanelConfig(secure_cookies=secure))
    install_refusals(app)
    # Added last, so it is the outermost middleware: webhooks pass through nothing else.
    app.add_middleware(WebhookIntake, intake=services.bots.intake)

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
    async def metrics() -> PlainTextResponse:
        text = await services.statistics.prometheus()
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    return app
