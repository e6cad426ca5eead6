"""JSON errors for the owner API: {"error": "...", ...} with the right status, never a 500
for bad input. Paths outside /api keep FastAPI's own answers (the panel renders its own);
feature refusals reach `refusal` through the one handler in `web.errors`."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import (
    http_exception_handler,
    request_validation_exception_handler,
)
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import Match

from sponsorbot.features.errors import FeatureError
from sponsorbot.telegram import TelegramError
from sponsorbot.web.api.models import CODES
from sponsorbot.web.panel.refusals import API_STATUS

log = logging.getLogger(__name__)
PROBED_METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")


def error(status: int, message: str, **extra: Any) -> JSONResponse:
    """An error answer."""
    return JSONResponse({"error": message, **extra}, status_code=status)


def is_api(request: Request) -> bool:
    """Whether the request is for the owner API (JSON errors) rather than the panel."""
    return request.url.path.startswith("/api/")


def _details(exc: RequestValidationError) -> list[dict[str, Any]]:
    return [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))}
        for e in exc.errors()
    ]


async def on_validation(request: Request, exc: Exception) -> Response:
    """422 naming each bad field; 400 when the body is not JSON at all."""
    assert isinstance(exc, RequestValidationError)
    if not is_api(request):
        return await request_validation_exception_handler(request, exc)
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return error(400, "the body is not valid JSON")
    details = _details(exc)
    extra: dict[str, Any] = {}
    coded = [e for e in errors if e.get("type") in CODES]
    if coded:
        extra["code"] = coded[0]["type"]
    first = coded[0] if coded else (errors[0] if errors else None)
    message = "the request is not valid"
    if first is not None:
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        message += f": {where + ': ' if where else ''}{first.get('msg', '')}"
    return error(422, message, details=details, **extra)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the request's path answers, and OPTIONS, sorted; empty when
    no route has this path. Asked of the router itself, so nested routers count too."""
    methods = {
        method
        for method in PROBED_METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL
            for route in request.app.router.routes
        )
    }
    return sorted(methods | {"OPTIONS"}) if methods else []


async def on_http(request: Request, exc: Exception) -> Response:
    """404 for unknown paths, 405 for wrong methods, ... as JSON under /api. A 405's Allow
    lists every method of the path, not only those of the first route that matched it, and
    OPTIONS on a known path is a 204 with that list."""
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(allowed_methods(request))
        if request.method == "OPTIONS":
            # No route takes OPTIONS itself: the answer is which methods the path takes.
            return Response(status_code=204, headers=headers)
        exc = HTTPException(405, exc.detail, headers=headers)
    if not is_api(request):
        return await http_exception_handler(request, exc)
    response = error(exc.status_code, str(exc.detail))
    response.headers.update(headers)
    return response


def refusal(request: Request, exc: Exception) -> Response:
    """A service's or Telegram's refusal as JSON: the status, the message, a stable code."""
    if isinstance(exc, FeatureError):
        status = next((s for cls, s in API_STATUS.items() if isinstance(exc, cls)), 400)
        extra = {"code": exc.code} if exc.code else {}
        return error(status, exc.message, **extra, **exc.details)
    assert isinstance(exc, TelegramError)
    if exc.is_transient:
        return error(503, "Telegram is unreachable right now; try again", telegram=exc.description)
    return error(400, f"Telegram refused: {exc.description}", telegram=exc.description)


def install_errors(app: FastAPI) -> None:
    """Install the handlers on the application."""
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(HTTPException, on_http)
