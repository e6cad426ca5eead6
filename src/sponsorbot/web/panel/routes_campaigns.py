"""Sponsor campaigns in the panel: the list, the create and edit forms, the detail page with its
chart and per-bot figures, pause / resume / end, and the sponsor's report link."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.datastructures import FormData

from sponsorbot.features.campaigns.queries import Campaign
from sponsorbot.features.campaigns.rules import FINISHED, GOAL_KINDS, POSITIONS, STATUSES, Status
from sponsorbot.features.campaigns.service import MAX_RETENTION_HOURS, Draft
from sponsorbot.features.errors import FeatureError, NotFound
from sponsorbot.web.deps import report_url, services_of
from sponsorbot.web.panel import chart
from sponsorbot.web.panel.deps import Edit, Id, View
from sponsorbot.web.panel.errors import REFUSED, describe, status_of
from sponsorbot.web.panel.fields import is_id, local_input, moment_of, text_of, whole_number
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.paging import neighbours, page_count, page_number
from sponsorbot.web.panel.web import Viewer, audit, audit_changes, redirect, render

router = APIRouter(include_in_schema=False, tags=["panel"])
PAGE = 25

STATUS_NAMES: dict[str, str] = {
    Status.SCHEDULED: N_("Scheduled"),
    Status.RUNNING: N_("Running"),
    Status.PAUSED: N_("Paused"),
    Status.REACHED: N_("Goal reached"),
    Status.ENDED: N_("Ended"),
}
GOAL_KIND_NAMES = {"kept": N_("Kept joins"), "joins": N_("All joins")}
POSITION_NAMES = {"first": N_("First, before the gate's channels"), "last": N_("Last")}
# Which form field a refusal is shown beside; anything else goes above the form.
FIELD_OF = {
    "campaign_name": "name",
    "channel_ref": "channel",
    "chat_hidden": "channel",
    "rights_missing": "channel",
    "campaign_overlap": "channel",
    "campaign_bots": "bots",
    "campaign_goal": "goal_joins",
    "campaign_ends": "ends_at",
    "campaign_retention": "retention_hours",
    "campaign_position": "position",
}
# What an edit may change, and what the audit log keeps of a campaign.
EDITABLE = ("name", "goal_joins", "goal_kind", "ends_at", "retention_hours", "position")


# What the page says after an action that redirected to it (?done=…).
DONE = {
    "created": N_("Campaign created."),
    "changed": N_("Changes saved."),
    "paused": N_("Campaign paused: its channel left the gates, and its links still work."),
    "resumed": N_("Campaign resumed: its channel is back in the gates."),
    "ended": N_("Campaign ended: its channel left the gates and its links no longer work."),
    "report_rotated": N_("A new report link is made; the old one no longer opens."),
    "report_revoked": N_("The report link is withdrawn."),
}


def names() -> dict[str, Any]:
    """The translatable names the campaign templates show for statuses, goals and places."""
    return {
        "status_names": STATUS_NAMES,
        "goal_kind_names": GOAL_KIND_NAMES,
        "position_names": POSITION_NAMES,
    }


def _zone(viewer: Viewer) -> str:
    return str(viewer.workspace.get("time_zone") or "UTC")


def read_form(form: FormData, zone: str, creating: bool) -> tuple[Draft, dict[str, str]]:
    """The draft a form describes, and the errors of fields that are not even well formed."""
    errors: dict[str, str] = {}
    values = {k: text_of(form, k) for k in ("name", "channel", "goal_kind", "position")}
    goal = whole_number(
        str(form.get("goal_joins", "")),
        errors,
        "goal_joins",
        _("The goal is a whole number of joins, at least 1 (or empty for none)."),
    )
    retention = whole_number(
        str(form.get("retention_hours", "")),
        errors,
        "retention_hours",
        _("The retention window is 1 to %(n)s hours.", n=MAX_RETENTION_HOURS),
    )
    bot_ids = tuple(int(str(v)) for v in form.getlist("bot_ids") if is_id(str(v)))
    draft = Draft(
        name=values["name"],
        channel=values["channel"].strip(),
        bot_ids=bot_ids,
        goal_joins=goal,
        goal_kind=values["goal_kind"] or "kept",
        ends_at=moment_of(str(form.get("ends_at", "")), zone, errors, "ends_at"),
        retention_hours=24 if retention is None and creating else (retention or 0),
        position=values["position"] or "first",
    )
    return draft, errors


def _form_values(form: FormData | None, campaign: Campaign | None, zone: str) -> dict[str, Any]:
    """What the form fields show: what was typed, else the campaign, else the defaults."""
    if form is not None:
        values: dict[str, Any] = {k: str(v) for k, v in form.items() if k != "csrf"}
        values["bot_ids"] = [int(str(v)) for v in form.getlist("bot_ids") if is_id(str(v))]
        return values
    if campaign is not None:
        return {
            "name": campaign.name,
            "goal_joins": campaign.goal_joins or "",
            "goal_kind": campaign.goal_kind,
            "ends_at": local_input(campaign.ends_at, zone),
            "retention_hours": campaign.retention_hours,
            "position": campaign.position,
        }
    return {"goal_kind": "kept", "retention_hours": 24, "position": "first", "bot_ids": []}


async def _form_page(
    request: Request,
    viewer: Viewer,
    errors: dict[str, str],
    form: FormData | None = None,
    campaign: Campaign | None = None,
    status: int = 200,
) -> Response:
    zone = _zone(viewer)
    context = {
        "campaign": campaign,
        "values": _form_values(form, campaign, zone),
        "errors": errors,
        "bots": await services_of(request).bots.all() if campaign is None else [],
        "channels": await services_of(request).campaigns.known_channels()
        if campaign is None
        else [],
        "goal_kinds": GOAL_KINDS,
        "positions": POSITIONS,
        "max_retention": MAX_RETENTION_HOURS,
        **names(),
    }
    return render(request, viewer, "campaign_form.html", context, status)


def _field_errors(exc: Exception) -> dict[str, str]:
    code = exc.code if isinstance(exc, FeatureError) else None
    if isinstance(exc, NotFound) and code != "campaign_missing":
        return {"bots": _("Choose bots from the list.")}  # a bot removed meanwhile
    return {FIELD_OF.get(code or "", "form"): describe(exc)}


def _audited(campaign: Campaign) -> dict[str, Any]:
    """What the audit log keeps of a campaign's settings (plain JSON values)."""
    out = {k: getattr(campaign, k) for k in EDITABLE}
    out["ends_at"] = campaign.ends_at.isoformat() if campaign.ends_at else None
    return out


@router.get("/campaigns")
async def campaigns_page(request: Request, viewer: View) -> Response:
    """Every campaign, newest first: its status, progress to the goal, joins today, kept/left."""
    wanted = request.query_params.get("status", "")
    status = wanted if wanted in STATUSES else None
    number = page_number(request)
    rows, total = await services_of(request).campaigns.page(PAGE, (number - 1) * PAGE, status)

    def page_url(n: int) -> str:
        return "?" + urlencode({"status": status, "page": n} if status else {"page": n})

    context = {
        "campaigns": rows,
        "status": status,
        "statuses": STATUSES,
        "total": total,
        **neighbours(number, number < page_count(total, PAGE), page_url),
        **names(),
    }
    return render(request, viewer, "campaigns.html", context)


@router.get("/campaigns/new")
async def campaign_new(request: Request, viewer: Edit) -> Response:
    """The form for a new campaign."""
    return await _form_page(request, viewer, {})


@router.post("/campaigns")
async def campaign_create(request: Request, viewer: Edit) -> Response:
    """Create a campaign: the channel is checked live in every bot chosen."""
    form = await request.form()
    draft, errors = read_form(form, _zone(viewer), creating=True)
    if errors:
        return await _form_page(request, viewer, errors, form, status=422)
    try:
        campaign = await services_of(request).campaigns.create(draft, f"panel:{viewer.user.id}")
    except REFUSED as exc:
        return await _form_page(request, viewer, _field_errors(exc), form, status=status_of(exc))
    after = _audited(campaign)
    after.update(id=campaign.id, chat_id=campaign.chat_id, bot_ids=list(draft.bot_ids))
    await audit(request, viewer, "campaign.created", campaign.name, after=after)
    return redirect(request, f"/campaigns/{campaign.id}?done=created")


async def _detail_page(
    request: Request, viewer: Viewer, campaign_id: int, error: str = "", status: int = 200
) -> Response:
    service = services_of(request).campaigns
    campaign = await service.get(campaign_id)
    context = {
        "campaign": campaign,
        "chart": chart.build(await service.hours(campaign, _zone(viewer)), _zone(viewer)),
        "report_url": report_url(request, campaign.report_token),
        "error": error,
        "done": DONE.get(request.query_params.get("done", "")),
        "finished": campaign.status in FINISHED,
        **names(),
    }
    return render(request, viewer, "campaign.html", context, status)


@router.get("/campaigns/{campaign_id}")
async def campaign_page(request: Request, campaign_id: Id, viewer: View) -> Response:
    """One campaign: figures, the hourly chart, each bot's figures and link, the report link."""
    return await _detail_page(request, viewer, campaign_id)


@router.get("/campaigns/{campaign_id}/edit")
async def campaign_edit(request: Request, campaign_id: Id, viewer: Edit) -> Response:
    """The form to change a campaign's name, goal, end, retention window or place."""
    campaign = await services_of(request).campaigns.get(campaign_id)
    return await _form_page(request, viewer, {}, campaign=campaign)


@router.post("/campaigns/{campaign_id}/edit")
async def campaign_change(request: Request, campaign_id: Id, viewer: Edit) -> Response:
    """Save the changes; a wrong field is shown beside it with what was typed."""
    service = services_of(request).campaigns
    before = await service.get(campaign_id)
    form = await request.form()
    draft, errors = read_form(form, _zone(viewer), creating=False)
    if errors:
        return await _form_page(request, viewer, errors, form, before, 422)
    changes = {k: getattr(draft, k) for k in EDITABLE}
    if str(form.get("ends_at", "")).strip() == local_input(before.ends_at, _zone(viewer)):
        # Unchanged as the field shows it (to the minute): keep the seconds it had.
        changes["ends_at"] = before.ends_at
    try:
        after = await service.change(campaign_id, changes)
    except REFUSED as exc:
        if isinstance(exc, NotFound):
            raise
        return await _form_page(request, viewer, _field_errors(exc), form, before, status_of(exc))
    old, new = _audited(before), _audited(after)
    await audit_changes(request, viewer, "campaign.changed", after.name, old, new, EDITABLE)
    return redirect(request, f"/campaigns/{campaign_id}?done=changed")


async def _act(request: Request, viewer: Viewer, campaign_id: int, action: str) -> Response:
    """Pause, resume or end, or rotate or revoke the report link; audited."""
    service = services_of(request).campaigns
    acts = {
        "paused": service.pause,
        "resumed": service.resume,
        "ended": service.end,
        "report_rotated": service.rotate_report,
        "report_revoked": service.revoke_report,
    }
    before = await service.get(campaign_id)
    try:
        after = await acts[action](campaign_id)
    except REFUSED as exc:
        if isinstance(exc, NotFound):
            raise
        return await _detail_page(request, viewer, campaign_id, describe(exc), status_of(exc))
    if action.startswith("report"):
        # The token itself stays out of the log: whoever reads the log could open the report.
        await audit(request, viewer, f"campaign.{action}", after.name)
    elif before.status != after.status:
        await audit(
            request,
            viewer,
            f"campaign.{action}",
            after.name,
            before={"status": before.status},
            after={"status": after.status},
        )
    return redirect(request, f"/campaigns/{campaign_id}?done={action}")


@router.post("/campaigns/{campaign_id}/pause")
async def campaign_pause(request: Request, campaign_id: Id, viewer: Edit) -> Response:
    """Take the campaign's channel out of the gates for now (its links stay valid)."""
    return await _act(request, viewer, campaign_id, "paused")


@router.post("/campaigns/{campaign_id}/resume")
async def campaign_resume(request: Request, campaign_id: Id, viewer: Edit) -> Response:
    """Put a paused campaign back into its gates."""
    return await _act(request, viewer, campaign_id, "resumed")


@router.post("/campaigns/{campaign_id}/end")
async def campaign_end(request: Request, campaign_id: Id, viewer: Edit) -> Response:
    """End the campaign now: out of every gate, its invite links revoked."""
    return await _act(request, viewer, campaign_id, "ended")


@router.post("/campaigns/{campaign_id}/report/rotate")
async def campaign_report_rotate(request: Request, campaign_id: Id, viewer: Edit) -> Response:
    """A new report link for the sponsor; the old one stops working."""
    return await _act(request, viewer, campaign_id, "report_rotated")


@router.post("/campaigns/{campaign_id}/report/revoke")
async def campaign_report_revoke(request: Request, campaign_id: Id, viewer: Edit) -> Response:
    """No report link until a new one is made."""
    return await _act(request, viewer, campaign_id, "report_revoked")
