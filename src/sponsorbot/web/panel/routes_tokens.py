"""API tokens for the owner API: create (shown once), see last use, revoke (TokenService)."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.accounts.api_tokens import ROLES
from sponsorbot.features.errors import FeatureError
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import Id, ManageSettings
from sponsorbot.web.panel.errors import describe
from sponsorbot.web.panel.i18n import gettext as _
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
    days = str(form.get("expires_days", "")).strip()
    if days and not (days.isdecimal() and len(days) <= 4 and 1 <= int(days) <= 3650):
        error = _("A token expires after 1 to 3650 days; leave it empty for never.")
        return await _page(request, viewer, {"expires_days": error}, status=422)
    tokens = services_of(request).tokens
    try:
        row, token = await tokens.create(
            name,
            role,
            granted_by=viewer.user.role,
            created_by=viewer.user.id,
            expires_in=timedelta(days=int(days)) if days else None,
        )
    except FeatureError as exc:
        field = "name" if exc.code == "token_name" else "role"
        return await _page(request, viewer, {field: describe(exc)}, status=422)
    await audit(
        request,
        viewer,
        "token.created",
        name,
        after={
            "id": row["id"],
            "role": role,
            "token": token,  # the audit log keeps only its last characters
            "expires_days": int(days) if days else None,
        },
    )
    return await _page(request, viewer, {}, token)


@router.post("/tokens/{token_id}/revoke")
async def tokens_revoke(request: Request, token_id: Id, viewer: ManageSettings) -> Response:
    """Revoke a token: it stops working at once. Nobody revokes a token above their role."""
    await services_of(request).tokens.revoke(token_id, revoked_by=viewer.user.role)
    await audit(
        request,
        viewer,
        "token.revoked",
        str(token_id),
    )
    return redirect(request, "/tokens")
