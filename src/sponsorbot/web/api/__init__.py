"""The owner API under /api/v1: every installed web part's routers (web/parts/all.py), with
their JSON errors, the audit of changes and the OpenAPI document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, FastAPI
from pydantic import TypeAdapter

from sponsorbot.web.api.audit import ApiAudit
from sponsorbot.web.api.errors import install_errors
from sponsorbot.web.api.models import ContentIn, ErrorOut
from sponsorbot.web.registry import WebPart

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


def install_api(app: FastAPI, parts: Sequence[WebPart] = ()) -> None:
    """Mount the web parts' owner API routers and the API's JSON error handlers on the app."""
    api = APIRouter(prefix="/api/v1", responses=ERRORS)
    for part in parts:
        for route in part.api:
            api.include_router(route.router, tags=[route.tag])
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
