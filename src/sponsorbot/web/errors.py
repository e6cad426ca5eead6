"""One handler for every refusal a feature or Telegram raises: JSON under /api, a page in the
panel. Routes catch a refusal only where they show it beside a form field."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import Response

from sponsorbot.features.errors import FeatureError
from sponsorbot.telegram import TelegramError
from sponsorbot.web.api.errors import is_api, refusal
from sponsorbot.web.panel.errors import refusal_page


async def on_refusal(request: Request, exc: Exception) -> Response:
    """The API's JSON error or the panel's page for a refusal no route caught."""
    if is_api(request):
        return refusal(request, exc)
    return await refusal_page(request, exc)


def install_refusals(app: FastAPI) -> None:
    """Answer FeatureError and TelegramError wherever they come from."""
    app.add_exception_handler(FeatureError, on_refusal)
    app.add_exception_handler(TelegramError, on_refusal)
