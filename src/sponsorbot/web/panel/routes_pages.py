"""The pages owners live in: dashboard, bots and workspace settings."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any
from zoneinfo import ZoneInfo, available_timezones

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from sponsorbot.engine.bots import (
    BotError,
    BotExists,
    BotNotFound,
    BotTokenMalformed,
    BotTokenRefused,
    WebhookUnavailable,
)
from sponsorbot.engine.health import bot_status
from sponsorbot.telegram import TelegramError
from sponsorbot.web.panel.i18n import LANGUAGES
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.web import (
    Viewer,
    audit,
    panel_of,
    redirect,
    render,
    require,
)

router = APIRouter(include_in_schema=False, tags=["panel"])
View = Annotated[Viewer, Depends(require("view"))]
ManageBots = Annotated[Viewer, Depends(require("bots"))]
RemoveBots = Annotated[Viewer, Depends(require("bots.remove"))]
Settings = Annotated[Viewer, Depends(require("settings"))]

TODAY = """
SELECT b.id,
       (SELECT count(*) FROM people p WHERE p.bot_id = b.id AND p.last_seen >= $1) AS visitors,
       (SELECT count(*) FROM events e
         WHERE e.bot_id = b.id AND e.at >= $1 AND e.kind = 'gate_passed') AS passes_today,
       (SELECT count(*) FROM events e
         WHERE e.bot_id = b.id AND e.at >= $1 AND e.kind = 'content_sent') AS contents_today,
       (SELECT coalesce(sum(s.sent), 0) FROM send_stats s
         WHERE s.bot_id = b.id AND s.minute >= $2) AS sent_1h,
       (SELECT coalesce(sum(s.throttled), 0) FROM send_stats s
         WHERE s.bot_id = b.id AND s.minute >= $2) AS throttled_1h
FROM bots b
"""
HOURLY = """
SELECT bot_id, date_trunc('hour', minute) AS hour, sum(sent) AS sent
FROM send_stats WHERE minute >= $1 GROUP BY 1, 2
"""


def _start_of_day(now: datetime, zone: str) -> datetime:
    local = now.astimezone(ZoneInfo(zone))
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def _bars(hours: dict[datetime, int], end: datetime) -> list[dict[str, Any]]:
    """24 hourly bars ending at `end`, heights as a share of the busiest hour."""
    start = end.replace(minute=0, second=0, microsecond=0) - timedelta(hours=23)
    values = [int(hours.get(start + timedelta(hours=i), 0)) for i in range(24)]
    top = max(values) or 1
    return [{"value": v, "height": round(100 * v / top)} for v in values]


@router.get("/")
async def dashboard(request: Request, viewer: View) -> Response:
    """Per bot: health at a glance, today's figures and the last 24 hours of sends."""
    panel = panel_of(request)
    now = panel.config.clock()
    zone = str(viewer.workspace.get("time_zone") or "UTC")
    health = await bot_status(panel.pool)
    today = {
        r["id"]: dict(r)
        for r in await panel.pool.fetch(TODAY, _start_of_day(now, zone), now - timedelta(hours=1))
    }
    hourly: dict[int, dict[datetime, int]] = {}
    for r in await panel.pool.fetch(HOURLY, now - timedelta(hours=24)):
        hourly.setdefault(r["bot_id"], {})[r["hour"]] = int(r["sent"])
    bots = [
        {**h, **today.get(h["id"], {}), "bars": _bars(hourly.get(h["id"], {}), now)} for h in health
    ]
    return render(request, viewer, "dashboard.html", {"bots": bots})


# -- bots --------------------------------------------------------------------------------------


def bot_error(exc: Exception) -> str:
    """The engine's refusal, said in the viewer's language."""
    if isinstance(exc, BotTokenMalformed):
        return _("This is not a bot token. It looks like 123456789:AAH… — copy it from @BotFather.")
    if isinstance(exc, BotExists):
        return _("This bot is already connected.")
    if isinstance(exc, WebhookUnavailable):
        return _("Webhook mode needs a public https address (SPONSORBOT_PUBLIC_URL). Use polling.")
    if isinstance(exc, BotTokenRefused):
        return _("Telegram refused this token. Check it in @BotFather, or create a new one.")
    return _("Telegram could not be reached. Try again in a minute.")


async def _bots_page(
    request: Request, viewer: Viewer, values: dict[str, str], errors: dict[str, str], status: int
) -> Response:
    panel = panel_of(request)
    context = {
        "bots": await panel.bots.all(),
        "values": values,
        "errors": errors,
        "default_mode": panel.bots.default_mode(),
        "webhook_possible": panel.bots.public_url is not None,
    }
    return render(request, viewer, "bots.html", context, status)


@router.get("/bots")
async def bots_page(request: Request, viewer: View) -> Response:
    """Every bot, shown by username and the last 4 characters of its token."""
    return await _bots_page(request, viewer, {}, {}, 200)


@router.post("/bots")
async def bots_add(request: Request, viewer: ManageBots) -> Response:
    """Add a bot by token: checked live with Telegram before it is saved."""
    panel = panel_of(request)
    form = await request.form()
    token = str(form.get("token", "")).strip()
    mode = str(form.get("mode", "")) or None
    if mode not in (None, "polling", "webhook"):
        mode = None
    if not token:
        errors = {"token": _("Paste the token @BotFather gave you.")}
        return await _bots_page(request, viewer, {}, errors, 422)
    try:
        bot = await panel.bots.add(token, mode)
    except (BotError, TelegramError, OSError) as exc:
        # The token is never echoed back into the form: the owner pastes it again.
        return await _bots_page(request, viewer, {}, {"token": bot_error(exc)}, 422)
    await audit(
        request,
        viewer,
        "bot.added",
        f"@{bot['username']}",
        after={"id": bot["id"], "username": bot["username"], "mode": bot["mode"], "token": token},
    )
    return redirect(request, "/bots")


async def _bot_action(request: Request, viewer: Viewer, bot_id: int, action: str) -> Response:
    panel = panel_of(request)
    try:
        before = await panel.bots.get(bot_id)
        after = await (
            panel.bots.pause(bot_id) if action == "paused" else panel.bots.resume(bot_id)
        )
    except BotNotFound:
        return render(request, viewer, "not_found.html", status=404)
    except (BotError, TelegramError, OSError) as exc:
        return await _bots_page(request, viewer, {}, {f"bot-{bot_id}": bot_error(exc)}, 422)
    await audit(
        request,
        viewer,
        f"bot.{action}",
        f"@{before['username']}",
        before={"status": before["status"]},
        after={"status": after["status"]},
    )
    return redirect(request, "/bots")


@router.post("/bots/{bot_id}/pause")
async def bot_pause(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """Stop taking and sending updates for a bot."""
    return await _bot_action(request, viewer, bot_id, "paused")


@router.post("/bots/{bot_id}/resume")
async def bot_resume(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """Serve a paused bot again."""
    return await _bot_action(request, viewer, bot_id, "resumed")


@router.get("/bots/{bot_id}/remove")
async def bot_remove_confirm(request: Request, bot_id: int, viewer: RemoveBots) -> Response:
    """Ask before removing: it deletes everything queued for the bot."""
    try:
        bot = await panel_of(request).bots.get(bot_id)
    except BotNotFound:
        return render(request, viewer, "not_found.html", status=404)
    return render(request, viewer, "bot_remove.html", {"bot": bot})


@router.post("/bots/{bot_id}/remove")
async def bot_remove(request: Request, bot_id: int, viewer: RemoveBots) -> Response:
    """Remove a bot for good (owner only)."""
    panel = panel_of(request)
    try:
        bot = await panel.bots.get(bot_id)
        await panel.bots.remove(bot_id)
    except BotNotFound:
        return render(request, viewer, "not_found.html", status=404)
    await audit(
        request,
        viewer,
        "bot.removed",
        f"@{bot['username']}",
        before={"id": bot["id"], "username": bot["username"], "mode": bot["mode"]},
    )
    return redirect(request, "/bots")


# -- settings ----------------------------------------------------------------------------------


@router.get("/settings")
async def settings_page(request: Request, viewer: Settings) -> Response:
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
async def settings_save(request: Request, viewer: Settings) -> Response:
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
    await panel.pool.execute(
        "UPDATE workspace SET name = $1, time_zone = $2, default_language = $3 WHERE id = 1",
        values["name"],
        values["time_zone"],
        values["default_language"],
    )
    changed = {k: v for k, v in values.items() if before.get(k) != v}
    if changed:
        await audit(
            request,
            viewer,
            "settings.changed",
            "workspace",
            before={k: before[k] for k in changed},
            after=changed,
        )
    return redirect(request, "/settings?saved=1")
