"""The home page: the dashboard of every bot."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.shop.payout import MONEY_TEXTS_CHANGED, recent_money_changes
from sponsorbot.features.stats.hours import HOUR, last_hours, local_day, span_of
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import View
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.routes_shop import NETWORK_NAMES
from sponsorbot.web.panel.web import panel_of, render

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
    # Who handles orders is told what is stuck or waiting for them in the shop, when the
    # shop's pages are there to go to.
    shop = None
    if viewer.can("bots") and services.serves("shop"):
        shop = await services.shop.attention()
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
