"""The FastAPI application of the api role."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import JSONResponse

from sponsorbot import __version__
from sponsorbot.config import Settings
from sponsorbot.db.database import Database
from sponsorbot.db.migrate import is_current


def create_app(settings: Settings, db: Database) -> FastAPI:
    """The api role's application: health now; the owner API and panel mount here."""
    app = FastAPI(
        title="Sponsorbot",
        version=__version__,
        openapi_url="/api/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.db = db

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

    return app
