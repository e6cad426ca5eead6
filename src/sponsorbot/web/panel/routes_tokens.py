"""API tokens for the owner API: create (shown once), see last use, revoke (TokenService)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.accounts.api_tokens import ROLES
from sponsorbot.features.errors import FeatureError
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import ManageSettings
from sponsorbot.web.panel.errors import describe
from sponsorbot.web.panel.web import ROLE_NAMES, Viewer, audit, redirect, render

router = APIRouter(include_in_schema=False, tags=["panel"])


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
    tokens, _total = await services_of(request).tokens.all(500, 0)
    context = {
        "tokens": tokens,
        "errors": errors,
        "new_token": token,
        "roles": _grantable(viewer),
        "role_names": ROLE_NAMES,
    }
    return render(request, viewer, "tokens.html", context, status)


@router.get("/tokens")
async def tokens_page(request: Request, viewer: ManageSettings) -> Response:
    """Every API token with its role and last use (never the token itself)."""
    return await _page(request, viewer, {})


@router.post("/tokens")
async def tokens_create(request: Request, viewer: ManageSettings) -> Response:
    """Create a token; it is shown once, on the page that answers this form."""
    form = await request.form()
    name = str(form.get("name", "")).strip()
    role = str(form.get("role", ""))
    tokens = services_of(request).tokens
    try:
        row, token = await tokens.create(name, role, granted_by=viewer.user.role)
    except FeatureError as exc:
        field = "name" if exc.code == "token_name" else "role"
        return await _page(request, viewer, {field: describe(exc)}, status=422)
    await audit(
        request,
        viewer,
        "token.created",
        name,
        after={"id": row["id"], "role": role, "token": token},
    )
    return await _page(request, viewer, {}, token)


@router.post("/tokens/{token_id}/revoke")
async def tokens_revoke(request: Request, token_id: int, viewer: ManageSettings) -> Response:
    """Revoke a token: it stops working at once."""
    await services_of(request).tokens.revoke(token_id)
    await audit(
        request,
        viewer,
        "token.revoked",
        str(token_id),
    )
    return redirect(request, "/tokens")
