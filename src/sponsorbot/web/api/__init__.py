"""The owner API under /api/v1: bots, channels, gate, content, texts, uploaders, tokens,
campaigns, broadcasts, the ad shop, visitors, statistics, re-drive."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI
from pydantic import TypeAdapter

from sponsorbot.web.api import (
    routes_bot_texts,
    routes_bots,
    routes_broadcasts,
    routes_campaigns,
    routes_channels,
    routes_content,
    routes_redrive,
    routes_shop,
    routes_stats,
    routes_tokens,
    routes_transfers,
    routes_visitors,
)
from sponsorbot.web.api.audit import ApiAudit
from sponsorbot.web.api.errors import install_errors
from sponsorbot.web.api.models import ContentIn, ErrorOut

ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": text}
    for status, text in (
        (400, "Bad request, or Telegram refused"),
        (401, "No valid token"),
        (403, "The token's role may not do this"),
        (404, "Not found"),
        (409, "Conflict"),
        (413, "The request body is too large"),
        (422, "Invalid input"),
        (503, "Telegram is unreachable right now; try again"),
    )
}


def install_api(app: FastAPI) -> None:
    """Mount the owner API and its JSON error handlers on the application."""
    api = APIRouter(prefix="/api/v1", responses=ERRORS)
    api.include_router(routes_bots.router, tags=["bots"])
    api.include_router(routes_tokens.router, tags=["API tokens"])
    api.include_router(routes_channels.router, tags=["channels and gate"])
    api.include_router(routes_bot_texts.router, tags=["texts and uploaders"])
    api.include_router(routes_content.router, tags=["content"])
    api.include_router(routes_campaigns.router, tags=["campaigns"])
    api.include_router(routes_broadcasts.router, tags=["broadcasts"])
    api.include_router(routes_shop.router, tags=["ad shop"])
    api.include_router(routes_transfers.router, tags=["ad shop"])
    api.include_router(routes_visitors.router, tags=["visitors"])
    api.include_router(routes_stats.router, tags=["statistics"])
    api.include_router(routes_redrive.router, tags=["operations"])
    app.include_router(api)
    install_errors(app)
    # Every change made through the API goes into the audit log, here rather than per route.
    app.add_middleware(ApiAudit)
    _describe_json_body(app)


def _describe_json_body(app: FastAPI) -> None:
    """Put ContentIn (used by the hand-described create-content body) in the components."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = build()
        extra = TypeAdapter(ContentIn).json_schema(ref_template="#/components/schemas/{model}")
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for name, definition in extra.pop("$defs", {}).items():
            components.setdefault(name, definition)
        components["ContentIn"] = extra
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
