"""The workspace settings: its name, time zone and the panel's default language."""

from __future__ import annotations

from zoneinfo import available_timezones

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.accounts import workspace as workspaces
from sponsorbot.web.panel.deps import ManageSettings
from sponsorbot.web.panel.i18n import LANGUAGES
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.web import audit_changes, panel_of, redirect, render

router = APIRouter(include_in_schema=False, tags=["panel"])


@router.get("/settings")
async def settings_page(request: Request, viewer: ManageSettings) -> Response:
    """Workspace name, time zone and default language."""
    return render(
        request,
        viewer,
        "settings.html",
        {
            "values": viewer.workspace,
            "errors": {},
            "zones": sorted(available_timezones()),
            "request_saved": request.query_params.get("saved") == "1",
        },
    )


@router.post("/settings")
async def settings_save(request: Request, viewer: ManageSettings) -> Response:
    """Save the workspace settings; each wrong field says what is wrong next to it."""
    panel = panel_of(request)
    form = await request.form()
    values = {k: str(form.get(k, "")).strip() for k in ("name", "time_zone", "default_language")}
    errors: dict[str, str] = {}
    if not values["name"] or len(values["name"]) > 80:
        errors["name"] = _("Give the workspace a name of 1 to 80 characters.")
    if values["time_zone"] not in available_timezones():
        errors["time_zone"] = _("Choose a time zone from the list, like Asia/Tehran.")
    if values["default_language"] not in LANGUAGES:
        errors["default_language"] = _("Choose English or Persian.")
    if errors:
        context = {"values": values, "errors": errors, "zones": sorted(available_timezones())}
        return render(request, viewer, "settings.html", context, 422)
    before = {k: viewer.workspace.get(k) for k in values}
    await workspaces.save(
        panel.pool, values["name"], values["time_zone"], values["default_language"]
    )
    await audit_changes(request, viewer, "settings.changed", "workspace", before, values, values)
    return redirect(request, "/settings?saved=1")
