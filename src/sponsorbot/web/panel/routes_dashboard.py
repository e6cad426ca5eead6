"""The home page and the workspace: the dashboard of every bot, and the workspace settings."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import available_timezones

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.accounts import workspace as workspaces
from sponsorbot.features.shop.payout import MONEY_TEXTS_CHANGED, recent_money_changes
from sponsorbot.features.stats.hours import HOUR, last_hours, local_day, span_of
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import ManageSettings, View
from sponsorbot.web.panel.i18n import LANGUAGES, N_
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.routes_shop import NETWORK_NAMES
from sponsorbot.web.panel.web import (
    audit_changes,
    panel_of,
    redirect,
    render,
)

router = APIRouter(include_in_schema=False, tags=["panel"])
COIN_NAMES = {
    (True, True): N_("USDT and TRX"),
    (True, False): N_("USDT only"),
    (False, True): N_("TRX only"),
}


def _bars(counts: dict[datetime, int], hours: list[datetime]) -> list[dict[str, Any]]:
    """One bar per hour of `hours` (starts on the workspace's clock, as the database cuts
    them), heights as a share of the busiest hour."""
    values = [int(counts.get(h, 0)) for h in hours]
    top = max(values) or 1
    return [
        {"hour": h.isoformat(), "value": v, "height": round(100 * v / top)}
        for h, v in zip(hours, values, strict=True)
    ]


@router.get("/")
async def dashboard(request: Request, viewer: View) -> Response:
    """Per bot: health at a glance, today's figures and the last 24 hours of sends."""
    panel = panel_of(request)
    now = panel.config.clock()
    zone = str(viewer.workspace.get("time_zone") or "UTC")
    services = services_of(request)
    figures = await services.statistics.health()
    recent = await services.statistics.recent_sends(now - timedelta(hours=1))
    report = services.report
    scope = await report.scope(
        [int(h["id"]) for h in figures], span_of("today", local_day(now, zone))
    )
    today = await report.per_bot(scope)
    hours = last_hours(now, zone, 24)
    sends = await report.hourly_by_bot(scope, hours[0], hours[-1] + HOUR, ["sent"])
    bots = []
    for h in figures:
        counts = today.get(h["id"], {})
        bots.append(
            {
                **h,
                "sent_1h": 0,
                "throttled_1h": 0,
                **recent.get(h["id"], {}),
                "visitors": counts.get("visitors", 0),
                "passes_today": counts.get("gate_passed", 0),
                "contents_today": counts.get("content_sent", 0),
                "bars": _bars(sends.get(h["id"], {}).get("sent", {}), hours),
            }
        )
    # Who may read the audit log is told where shop payments were sent this week (ADR 0009).
    money = await recent_money_changes(panel.pool, now) if viewer.can("audit") else []
    # Who handles orders is told what is stuck or waiting for them in the shop.
    shop = await services.shop.attention() if viewer.can("bots") else None
    context = {"bots": bots, "money_changes": [_money_notice(e) for e in money], "shop": shop}
    return render(request, viewer, "dashboard.html", context)


def _money_notice(entry: dict[str, Any]) -> dict[str, Any]:
    """One `shop.money_changed` entry as the dashboard lists it: when, which bot, who, and
    the network, the address's tail and the coins before and after (names to translate)."""
    sides = [entry["before"] or {}, entry["after"] or {}]
    if entry["kind"] == MONEY_TEXTS_CHANGED:
        # A payment text changed: which ones (language.key), not an address.
        texts = sorted({*(sides[0].get("texts") or {}), *(sides[1].get("texts") or {})})
        return {"at": entry["at"], "bot": entry["target"], "actor": entry["actor"], "texts": texts}
    return {
        "at": entry["at"],
        "bot": entry["target"],
        "actor": entry["actor"],
        "networks": [NETWORK_NAMES.get(s.get("network") or "", s.get("network")) for s in sides],
        "tails": [s.get("address_tail") for s in sides],
        "coins": [
            COIN_NAMES.get((bool(s.get("accept_usdt")), bool(s.get("accept_trx")))) for s in sides
        ],
    }


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
