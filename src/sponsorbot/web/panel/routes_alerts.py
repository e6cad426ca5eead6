"""The Notifications page: link your Telegram, choose what you are told and when; the owner
picks the bot every member links through (TeamLinks, features/alerts)."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.alerts.kinds import kinds_for
from sponsorbot.features.alerts.links import LinkCode, Prefs
from sponsorbot.features.errors import FeatureError
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import Account, Team
from sponsorbot.web.panel.errors import describe
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.web import Viewer, audit, panel_of, redirect, render

router = APIRouter(include_in_schema=False, tags=["panel"])

KIND_NAMES = {
    "order_review": N_("New orders to review, with Approve, Reject and Ask for a change"),
    "payment_decision": N_("Payments that need a decision (matching no order, overpaid)"),
    "payment_credited": N_("Payments credited to an order"),
    "bot_refused": N_("A bot whose token Telegram refused"),
    "channel_rights": N_("A gate channel where a bot lost its rights"),
    "dead_updates": N_("Updates set aside after their last attempt, with Re-drive"),
    "given_up": N_("Messages given up after hours of network errors, with Re-drive"),
    "tron_key": N_("TronGrid refusing a shop's API key"),
    "campaign_done": N_("A campaign that reached its goal or ended, with its figures"),
    "broadcast_done": N_("A broadcast that finished, with its figures"),
}
TIME = re.compile(r"^([01]?[0-9]|2[0-3]):([0-5][0-9])$")
# Persian and Arabic-Indic digits, as a Persian keyboard types them.
DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "01234567890123456789")


def minutes(text: str) -> int | None:
    """`HH:MM` as minutes of the day (None for an empty field); ValueError otherwise."""
    text = text.strip().translate(DIGITS).replace("٫", ":")
    if not text:
        return None
    match = TIME.match(text)
    if match is None:
        raise ValueError(text)
    return int(match[1]) * 60 + int(match[2])


def clock_of(value: int | None) -> str:
    """Minutes of the day as `HH:MM` (empty for None)."""
    return "" if value is None else f"{value // 60:02d}:{value % 60:02d}"


async def _page(
    request: Request,
    viewer: Viewer,
    errors: dict[str, str] | None = None,
    code: LinkCode | None = None,
    notice: str | None = None,
    status: int = 200,
) -> Response:
    team = services_of(request).team
    user_id = viewer.user.id
    prefs = await team.prefs(user_id)
    context: dict[str, Any] = {
        "link": await team.link(user_id),
        "bots": await team.bots(),
        "all_bots": await services_of(request).bots.all(),
        "control_bot": await team.control_bot(),
        "kinds": [(k, KIND_NAMES[k], k not in prefs.muted) for k in kinds_for(viewer.user.role)],
        "prefs": prefs,
        "quiet_from": clock_of(prefs.quiet_from),
        "quiet_to": clock_of(prefs.quiet_to),
        "code": code,
        "errors": errors or {},
        "notice": notice,
        "is_owner": viewer.user.role == "owner",
    }
    return render(request, viewer, "notifications.html", context, status)


@router.get("/notifications")
async def notifications_page(request: Request, viewer: Account) -> Response:
    """Your linked Telegram chat and what you are told there."""
    return await _page(request, viewer)


@router.post("/notifications/code")
async def notifications_code(request: Request, viewer: Account) -> Response:
    """A one-time code (ten minutes) to send to the chosen bot."""
    form = await request.form()
    raw = str(form.get("bot_id", "")).strip()
    if not raw.isdecimal() or len(raw) > 19:
        return await _page(request, viewer, {"bot_id": _("Choose a bot.")}, status=422)
    now = panel_of(request).config.clock()
    try:
        code = await services_of(request).team.new_code(viewer.user.id, int(raw), now)
    except FeatureError:
        return await _page(
            request, viewer, {"bot_id": _("Choose one of the bots listed.")}, status=422
        )
    return await _page(request, viewer, code=code)


@router.post("/notifications/unlink")
async def notifications_unlink(request: Request, viewer: Account) -> Response:
    """Stop the alerts: the link and whatever waits to be sent to it go."""
    if await services_of(request).team.unlink(viewer.user.id):
        await audit(request, viewer, "team.telegram_unlinked", f"user:{viewer.user.id}")
    return redirect(request, "/notifications")


@router.post("/notifications/prefs")
async def notifications_prefs(request: Request, viewer: Account) -> Response:
    """Save what you get, your quiet hours and the digest."""
    form = await request.form()
    errors: dict[str, str] = {}
    ends: dict[str, int | None] = {}
    for name in ("quiet_from", "quiet_to"):
        try:
            ends[name] = minutes(str(form.get(name, "")))
        except ValueError:
            errors[name] = _("A time of day such as 22:30.")
    if not errors and (ends["quiet_from"] is None) != (ends["quiet_to"] is None):
        errors["quiet_to"] = _("Give both ends of the quiet hours, or neither.")
    if errors:
        return await _page(request, viewer, errors, status=422)
    role = viewer.user.role
    # Kinds the role does not receive, or that do not exist, are ignored by save_prefs.
    wanted = [str(v) for v in form.getlist("kind")]
    prefs = Prefs((), ends["quiet_from"], ends["quiet_to"], form.get("digest") == "on")
    try:
        await services_of(request).team.save_prefs(viewer.user.id, role, wanted, prefs)
    except FeatureError as exc:
        return await _page(request, viewer, {"quiet_to": describe(exc)}, status=422)
    return await _page(request, viewer, notice=_("Saved."))


@router.post("/notifications/control-bot")
async def notifications_control_bot(request: Request, viewer: Team) -> Response:
    """The owner's choice: every member links through this bot (or any)."""
    form = await request.form()
    raw = str(form.get("control_bot", "")).strip()
    team = services_of(request).team
    before = await team.control_bot()
    chosen = int(raw) if raw.isdecimal() and len(raw) <= 19 else None
    try:
        await team.set_control_bot(chosen)
    except FeatureError:
        error = {"control_bot": _("Choose one of the bots listed.")}
        return await _page(request, viewer, error, status=422)
    if chosen != before:
        await audit(
            request,
            viewer,
            "settings.control_bot",
            None,
            before={"control_bot": before},
            after={"control_bot": chosen},
        )
    return redirect(request, "/notifications")
