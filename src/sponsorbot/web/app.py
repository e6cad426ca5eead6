"""The FastAPI application of the api role."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import JSONResponse, PlainTextResponse

from sponsorbot import __version__
from sponsorbot.config import Settings
from sponsorbot.db.database import Database
from sponsorbot.db.migrate import is_current
from sponsorbot.engine.core import Engine
from sponsorbot.engine.health import bot_status, prometheus_text
from sponsorbot.features import attach
from sponsorbot.web.api import install_api
from sponsorbot.web.panel import PanelConfig, mount_panel
from sponsorbot.web.webhooks import WebhookIntake


def create_app(
    settings: Settings, db: Database, engine: Engine, panel: PanelConfig | None = None
) -> FastAPI:
    """The api role's application: health, metrics, webhooks, the panel; the owner API too."""
    app = FastAPI(
        title="Sponsorbot",
        version=__version__,
        openapi_url="/api/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.db = db
    app.state.engine = engine
    install_api(app, attach(engine))
    secure = (settings.public_url or "").startswith("https://")
    mount_panel(app, db.pool, engine.bots, panel or PanelConfig(secure_cookies=secure))
    # Added last, so it is the outermost middleware: webhooks pass through nothing else.
    app.add_middleware(WebhookIntake, pool=db.pool, notifier=engine.notifier)

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
        rows = await bot_status(db.pool)
        return PlainTextResponse(prometheus_text(rows), media_type="text/plain; version=0.0.4")

    return app
