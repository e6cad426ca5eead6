"""API tokens for the owner API: create (shown once), see last use, revoke (TokenService)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from sponsorbot.features import Features
from sponsorbot.features.errors import FeatureError
from sponsorbot.features.tokens import ROLES
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.routes_team import ROLE_NAMES
from sponsorbot.web.panel.web import Viewer, audit, redirect, render, require

router = APIRouter(include_in_schema=False, tags=["panel"])
Manage = Annotated[Viewer, Depends(require("settings"))]


def _features(request: Request) -> Features:
    features: Features = request.app.state.features
    return features


def _grantable(viewer: Viewer) -> list[str]:
    """Roles this member may hand out: their own and those below it."""
    return list(ROLES[ROLES.index(viewer.user.role) :])


async def _page(
    request: Request,
    viewer: Viewer,
    errors: dict[str, str],
    token: str | None = None,
    status: int = 200,
) -> Response:
    tokens, _total = await _features(request).tokens.all(500, 0)
    context = {
        "tokens": tokens,
        "errors": errors,
        "new_token": token,
        "roles": _grantable(viewer),
        "role_names": ROLE_NAMES,
    }
    return render(request, viewer, "tokens.html", context, status)


@router.get("/tokens")
async def tokens_page(request: Request, viewer: Manage) -> Response:
    """Every API token with its role and last use (never the token itself)."""
    return await _page(request, viewer, {})


@router.post("/tokens")
async def tokens_create(request: Request, viewer: Manage) -> Response:
    """Create a token; it is shown once, on the page that answers this form."""
    form = await request.form()
    name = str(form.get("name", "")).strip()
    role = str(form.get("role", ""))
    errors: dict[str, str] = {}
    if not name or len(name) > 100:
        errors["name"] = _("Name the token (1 to 100 characters), e.g. after the script using it.")
    if role not in _grantable(viewer):
        errors["role"] = _("Choose a role no higher than your own.")
    if errors:
        return await _page(request, viewer, errors, status=422)
    try:
        row, token = await _features(request).tokens.create(name, role)
    except FeatureError:
        errors["name"] = _("Name the token (1 to 100 characters), e.g. after the script using it.")
        return await _page(request, viewer, errors, status=422)
    await audit(
        request,
        viewer,
        "token.created",
        name,
        after={"id": row["id"], "role": role, "token": token},
    )
    return await _page(request, viewer, {}, token)


@router.post("/tokens/{token_id}/revoke")
async def tokens_revoke(request: Request, token_id: int, viewer: Manage) -> Response:
    """Revoke a token: it stops working at once."""
    try:
        await _features(request).tokens.revoke(token_id)
    except FeatureError:
        return render(request, viewer, "not_found.html", status=404)
    await audit(
        request,
        viewer,
        "token.revoked",
        str(token_id),
    )
    return redirect(request, "/tokens")
