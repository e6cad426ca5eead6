"""Broadcasts in the panel: the list over every bot, the compose and edit form (an upload, a
preview to the member's own Telegram, send now or at a set time, a live audience count), the
detail page whose progress refreshes itself, pause / resume / cancel, and each broadcast's own
entries of the audit log."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import asyncpg
from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.datastructures import FormData, UploadFile

from sponsorbot.features.accounts import users as accounts
from sponsorbot.features.accounts.audit import AuditFilter, entries
from sponsorbot.features.broadcasts.post import MEDIA_KINDS, Post
from sponsorbot.features.broadcasts.rules import EDITABLE, LIVE, STATUSES, Status
from sponsorbot.features.broadcasts.service import LANGUAGES, MAX_ACTIVE_DAYS, Broadcast, stars_for
from sponsorbot.features.content.service import kind_of
from sponsorbot.features.errors import FeatureError, NotFound
from sponsorbot.telegram.html import HtmlError, parse_html
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.broadcast_form import form_values, read_audience, read_form
from sponsorbot.web.panel.deps import Edit, Id, View
from sponsorbot.web.panel.errors import REFUSED, describe, megabytes, status_of
from sponsorbot.web.panel.fields import is_id, text_of
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.paging import neighbours, page_count, page_number
from sponsorbot.web.panel.web import Viewer, audit, audit_changes, panel_of, redirect, render
from sponsorbot.web.uploads import read_file

router = APIRouter(include_in_schema=False, tags=["panel"])
PAGE = 25
CAMPAIGNS = 200  # campaigns offered as an audience filter, newest first

STATUS_NAMES: dict[str, str] = {
    Status.DRAFT: N_("Draft"),
    Status.SCHEDULED: N_("Scheduled"),
    Status.SENDING: N_("Sending"),
    Status.PAUSED: N_("Paused"),
    Status.CANCELLED: N_("Cancelled"),
    Status.DONE: N_("Finished"),
}
MEDIA_NAMES = {"photo": N_("Photo"), "video": N_("Video"), "document": N_("Document")}
LANGUAGE_NAMES = {"en": N_("English"), "fa": N_("Persian")}
BROADCAST_KIND_LABELS = {
    "broadcast.create": N_("Broadcast created"),
    "broadcast.change": N_("Broadcast changed"),
    "broadcast.send": N_("Sent now"),
    "broadcast.schedule": N_("Broadcast scheduled"),
    "broadcast.pause": N_("Broadcast paused"),
    "broadcast.resume": N_("Broadcast resumed"),
    "broadcast.cancel": N_("Broadcast cancelled"),
    "broadcast.delete": N_("Draft deleted"),
}
# Which form field a refusal is shown beside; anything else goes above the form.
FIELD_OF = {
    "broadcast_title": "title",
    "post_text": "text",
    "media_kind": "media_kind",
    "file_id": "file_id",
    "audience": "active_days",
    "schedule_past": "scheduled_at",
    **dict.fromkeys(("buttons", "button_url"), "buttons"),
    **dict.fromkeys(("no_telegram_id", "preview_refused"), "preview"),
    **dict.fromkeys(("too_large", "empty_file", "no_storage_chat", "storage_refused"), "file"),
}
# A paid broadcast spends the bot's Telegram Stars: an editor is not offered it, and a forged
# field or a send of someone else's paid draft is refused (docs/adr/0007-permissions.md).
PAID_REFUSED = N_(
    "Only the owner or an admin may allow a paid broadcast: it spends the bot's Telegram Stars."
)


def stars_text(stars: float) -> str:
    """A number of Stars as the panel writes it: thousands separated, tenths only if any (the
    templates' `num` then writes its digits in the reader's language)."""
    return f"{stars:,.1f}".removesuffix(".0")


# The translatable names, the status groups and the helpers the broadcast templates use.
NAMES = {
    "status_names": STATUS_NAMES,
    "media_names": MEDIA_NAMES,
    "language_names": LANGUAGE_NAMES,
    "kind_labels": BROADCAST_KIND_LABELS,
    "editable": EDITABLE,
    "live": LIVE,
    "stars_text": stars_text,
    "paid_refused": PAID_REFUSED,
}


def explain(exc: BaseException) -> str:
    """A broadcast's refusal in the viewer's language: a move its status does not allow names
    the status (the refusal's code is the status itself), anything else is the refusal's own
    text."""
    code = exc.code if isinstance(exc, FeatureError) else None
    if code in STATUS_NAMES:
        return _(
            "The broadcast is %(status)s: it cannot do that now.", status=_(STATUS_NAMES[code])
        )
    return describe(exc)


def _field_errors(exc: Exception) -> dict[str, str]:
    if isinstance(exc, NotFound):
        return {"bot_id": _("Choose a bot from the list.")}  # removed meanwhile
    code = exc.code if isinstance(exc, FeatureError) else None
    return {FIELD_OF.get(code or "", "form"): explain(exc)}


def _zone(viewer: Viewer) -> str:
    return str(viewer.workspace.get("time_zone") or "UTC")


async def _form_page(
    request: Request,
    viewer: Viewer,
    values: dict[str, Any],
    errors: dict[str, str],
    broadcast: Broadcast | None = None,
    status: int = 200,
    notice: str = "",
) -> Response:
    features = services_of(request)
    panel = panel_of(request)
    campaigns, _total = await features.campaigns.page(CAMPAIGNS, 0)
    context = {
        "broadcast": broadcast,
        "values": values,
        "errors": errors,
        "notice": notice,
        "bots": await features.bots.all(),
        "campaigns": campaigns,
        "media_kinds": MEDIA_KINDS,
        "languages": LANGUAGES,
        "max_active_days": MAX_ACTIVE_DAYS,
        "telegram_id": await accounts.telegram_id(panel.pool, viewer.user.id),
        "upload_limit_mb": megabytes(panel.config.upload_limit),
        **NAMES,
    }
    return render(request, viewer, "broadcast_form.html", context, status)


async def _upload(
    request: Request, bot_id: int, form: FormData, post: Post, values: dict[str, Any]
) -> Post:
    """The post with a file chosen in the form stored in Telegram first; its file_id then
    stands in the form, so a second press does not upload it again."""
    file = form.get("file")
    if not isinstance(file, UploadFile) or not file.filename:
        return post
    content_type = file.content_type or "application/octet-stream"
    kind = post.media_kind if post.media_kind in MEDIA_KINDS else kind_of(content_type)
    data = await read_file(file, panel_of(request).config.upload_limit)
    media = await services_of(request).broadcasts.upload(
        bot_id, kind, file.filename, data, content_type
    )
    values.update(media_kind=media["kind"], file_id=media["file_id"])
    return dataclasses.replace(post, media_kind=media["kind"], file_id=media["file_id"])


def _audited(broadcast: Broadcast) -> dict[str, Any]:
    """What the audit log keeps of a broadcast's settings (plain JSON values)."""
    return {k: getattr(broadcast, k) for k in ("title", "post", "audience")}


async def _submit(request: Request, viewer: Viewer, broadcast: Broadcast | None) -> Response:
    """Save, preview, send or schedule what the form holds; a refusal is shown beside its
    field, with everything typed kept."""
    form = await request.form()
    try:
        return await _submit_form(request, viewer, form, broadcast)
    finally:
        await form.close()  # an uploaded file's temporary copy


async def _submit_form(
    request: Request, viewer: Viewer, form: FormData, broadcast: Broadcast | None
) -> Response:
    zone = _zone(viewer)
    action = text_of(form, "action") or "draft"
    values = form_values(form, None, zone)
    draft, at, errors = read_form(form, zone)
    if draft.post.paid and not viewer.can("broadcasts.paid"):
        errors = {"form": _(PAID_REFUSED)}
        return await _form_page(request, viewer, values, errors, broadcast, 403)
    raw_bot = text_of(form, "bot_id")
    bot_id = int(broadcast.bot_id) if broadcast else int(raw_bot) if is_id(raw_bot) else 0
    if not bot_id:
        errors["bot_id"] = _("Choose a bot from the list.")
    if action == "schedule" and at is None:
        errors.setdefault("scheduled_at", _("Choose when to send it."))
    if errors:
        return await _form_page(request, viewer, values, errors, broadcast, 422)
    service = services_of(request).broadcasts
    try:
        post = await _upload(request, bot_id, form, draft.post, values)
        draft = dataclasses.replace(draft, post=post)
        if action == "preview":
            member = await accounts.telegram_id(panel_of(request).pool, viewer.user.id)
            await service.preview(bot_id, post, member)
            notice = _("The preview was sent to your Telegram.")
            return await _form_page(request, viewer, values, {}, broadcast, notice=notice)
        if broadcast is None:
            saved = await service.create(bot_id, draft, f"panel:{viewer.user.id}")
        else:
            saved = await service.change(bot_id, broadcast.id, draft)
    except REFUSED as exc:
        if isinstance(exc, NotFound) and broadcast is not None:
            raise
        status = 422 if isinstance(exc, NotFound) else status_of(exc)  # a bot removed meanwhile
        return await _form_page(request, viewer, values, _field_errors(exc), broadcast, status)
    if action not in ("send", "schedule"):
        await _audit_saved(request, viewer, broadcast, saved)
        return redirect(request, f"/broadcasts/{bot_id}/{saved.id}")
    try:
        sent = await service.send(bot_id, saved.id, at if action == "schedule" else None)
    except REFUSED as exc:
        if broadcast is None:
            await service.delete(bot_id, saved.id)  # nothing half-made is left behind
        else:
            await _audit_saved(request, viewer, broadcast, saved)
        return await _form_page(
            request,
            viewer,
            values,
            _field_errors(exc),
            saved if broadcast else None,
            status_of(exc),
        )
    await _audit_saved(request, viewer, broadcast, saved)
    scheduled = sent.scheduled_at
    moment = {"at": scheduled.isoformat()} if action == "schedule" and scheduled else {}
    await audit(
        request,
        viewer,
        f"broadcast.{action}",
        f"broadcast:{saved.id}",
        before={"status": saved.status},
        after={"status": sent.status, **moment},
    )
    return redirect(request, f"/broadcasts/{bot_id}/{saved.id}")


async def _audit_saved(
    request: Request, viewer: Viewer, before: Broadcast | None, after: Broadcast
) -> None:
    """A new broadcast's settings, or what a change changed, in the audit log."""
    target = f"broadcast:{after.id}"
    new = _audited(after)
    if before is None:
        await audit(request, viewer, "broadcast.create", target, after={"bot": after.bot_id, **new})
        return
    old = _audited(before)
    await audit_changes(request, viewer, "broadcast.change", target, old, new, old)


# -- pages ---------------------------------------------------------------------------------------


@router.get("/broadcasts")
async def broadcasts_page(request: Request, viewer: View) -> Response:
    """Every bot's broadcasts, newest first, filtered by bot and status."""
    features = services_of(request)
    bots = await features.bots.all()
    usernames = {b.id: b.username for b in bots}
    q = request.query_params
    bot = int(q["bot"]) if is_id(q.get("bot", "")) and int(q["bot"]) in usernames else None
    status = q.get("status") if q.get("status") in STATUSES else None
    number = page_number(request)
    rows, total = await features.broadcasts.page(
        [bot] if bot else list(usernames), status, PAGE, (number - 1) * PAGE
    )
    filters = {k: v for k, v in (("bot", bot), ("status", status)) if v}

    def page_url(n: int) -> str:
        return "?" + urlencode({**filters, "page": n})

    context = {
        "broadcasts": rows,
        "usernames": usernames,
        "bots": bots,
        "bot": bot,
        "status": status,
        "statuses": STATUSES,
        "total": total,
        "filtered": bool(filters),
        **neighbours(number, number < page_count(total, PAGE), page_url),
        **NAMES,
    }
    return render(request, viewer, "broadcasts.html", context)


@router.get("/broadcasts/new")
async def broadcast_new(request: Request, viewer: Edit) -> Response:
    """The form for a new broadcast (?bot= chooses the bot)."""
    wanted = request.query_params.get("bot", "")
    return await _form_page(request, viewer, {"bot_id": wanted} if is_id(wanted) else {}, {})


@router.post("/broadcasts")
async def broadcast_create(request: Request, viewer: Edit) -> Response:
    """Save a new broadcast as a draft, preview it, send it now or schedule it."""
    return await _submit(request, viewer, None)


@router.get("/broadcasts/audience")
async def broadcast_audience(request: Request, viewer: Edit) -> Response:
    """How many people the audience chosen in the form holds now, and what a paid broadcast
    to them costs: a fragment the form asks for with htmx whenever a filter or the paid option
    changes (a browser opening it is sent to the form)."""
    if not request.headers.get("HX-Request"):
        return redirect(request, "/broadcasts/new")
    q = request.query_params
    errors: dict[str, str] = {}
    audience = read_audience(q, errors)
    count, problem = None, next(iter(errors.values()), "")
    if not is_id(q.get("bot_id", "")):
        problem = _("Choose a bot to count its audience.")
    elif not problem:
        try:
            count = await services_of(request).broadcasts.audience_count(int(q["bot_id"]), audience)
        except REFUSED as exc:
            problem = next(iter(_field_errors(exc).values()))
    paid = q.get("paid") == "on" and viewer.can("broadcasts.paid")
    stars = stars_text(stars_for(count)) if paid and count is not None else None
    context = {"count": count, "problem": problem, "stars": stars}
    return render(request, viewer, "_broadcast_audience.html", context)


async def _history(pool: asyncpg.Pool, broadcast_id: int) -> list[dict[str, Any]]:
    """The audit entries of one broadcast, newest first."""
    return await entries(pool, AuditFilter(target=f"broadcast:{broadcast_id}"), limit=200)


def _shown(post: dict[str, Any]) -> dict[str, Any]:
    """The post as a recipient sees it: the text without its markup, and the buttons."""
    try:
        text = parse_html(post["text"]).text.strip()
    except HtmlError:
        text = post["text"]  # checked when saved; shown as typed should the rules change
    return {**post, "shown": text}


async def _detail_page(
    request: Request,
    viewer: Viewer,
    bot_id: int,
    broadcast_id: int,
    error: str = "",
    status: int = 200,
) -> Response:
    features = services_of(request)
    broadcast = await features.broadcasts.get(bot_id, broadcast_id)
    campaign = None
    if broadcast.audience.get("campaign_id"):
        try:
            campaign = await features.campaigns.get(int(broadcast.audience["campaign_id"]))
        except NotFound:
            campaign = None  # deleted since; the filter still names its id
    context = {
        "b": broadcast,
        "bot": await features.bots.get(bot_id),
        "post": _shown(broadcast.post),
        "campaign": campaign,
        "history": await _history(panel_of(request).pool, broadcast_id),
        "error": error,
        **NAMES,
    }
    return render(request, viewer, "broadcast.html", context, status)


@router.get("/broadcasts/{bot_id}/{broadcast_id}")
async def broadcast_page(request: Request, bot_id: Id, broadcast_id: Id, viewer: View) -> Response:
    """One broadcast: the post, its audience, live progress, the report and its history."""
    return await _detail_page(request, viewer, bot_id, broadcast_id)


@router.get("/broadcasts/{bot_id}/{broadcast_id}/progress")
async def broadcast_progress(
    request: Request, bot_id: Id, broadcast_id: Id, viewer: View
) -> Response:
    """The status, progress and report part of the detail page, which htmx asks for every
    2 s while the broadcast is live (a browser opening it is sent to the page itself)."""
    if not request.headers.get("HX-Request"):
        return redirect(request, f"/broadcasts/{bot_id}/{broadcast_id}")
    broadcast = await services_of(request).broadcasts.get(bot_id, broadcast_id)
    context = {"b": broadcast, **NAMES}
    return render(request, viewer, "_broadcast_live.html", context)


@router.get("/broadcasts/{bot_id}/{broadcast_id}/edit")
async def broadcast_edit(request: Request, bot_id: Id, broadcast_id: Id, viewer: Edit) -> Response:
    """The form to change a draft or a scheduled broadcast."""
    broadcast = await services_of(request).broadcasts.get(bot_id, broadcast_id)
    if broadcast.status not in EDITABLE:
        error = _("A broadcast cannot be changed once it has started.")
        return await _detail_page(request, viewer, bot_id, broadcast_id, error, 409)
    values = form_values(None, broadcast, _zone(viewer))
    return await _form_page(request, viewer, values, {}, broadcast)


@router.post("/broadcasts/{bot_id}/{broadcast_id}/edit")
async def broadcast_change(
    request: Request, bot_id: Id, broadcast_id: Id, viewer: Edit
) -> Response:
    """Save the changes, preview, send now or schedule."""
    broadcast = await services_of(request).broadcasts.get(bot_id, broadcast_id)
    return await _submit(request, viewer, broadcast)


async def _act(
    request: Request, viewer: Viewer, bot_id: int, broadcast_id: int, action: str
) -> Response:
    """Send now, pause, resume, cancel or delete; audited. A status that does not allow it
    shows the detail page with the reason (409)."""
    service = services_of(request).broadcasts
    acts: dict[str, Callable[[int, int], Awaitable[Broadcast]]] = {
        "send": service.send,
        "pause": service.pause,
        "resume": service.resume,
        "cancel": service.cancel,
    }
    before = await service.get(bot_id, broadcast_id)
    if action == "send" and before.paid and not viewer.can("broadcasts.paid"):
        return await _detail_page(request, viewer, bot_id, broadcast_id, _(PAID_REFUSED), 403)
    target = f"broadcast:{broadcast_id}"
    try:
        if action == "delete":
            await service.delete(bot_id, broadcast_id)
        else:
            after = await acts[action](bot_id, broadcast_id)
    except REFUSED as exc:
        if isinstance(exc, NotFound):
            raise
        return await _detail_page(
            request, viewer, bot_id, broadcast_id, explain(exc), status_of(exc)
        )
    if action == "delete":
        await audit(request, viewer, "broadcast.delete", target, before=_audited(before))
        return redirect(request, "/broadcasts")
    change = ({"status": before.status}, {"status": after.status})
    await audit(request, viewer, f"broadcast.{action}", target, *change)
    return redirect(request, f"/broadcasts/{bot_id}/{broadcast_id}")


@router.post("/broadcasts/{bot_id}/{broadcast_id}/send")
async def broadcast_send(request: Request, bot_id: Id, broadcast_id: Id, viewer: Edit) -> Response:
    """Send a draft or a scheduled broadcast now."""
    return await _act(request, viewer, bot_id, broadcast_id, "send")


@router.post("/broadcasts/{bot_id}/{broadcast_id}/pause")
async def broadcast_pause(request: Request, bot_id: Id, broadcast_id: Id, viewer: Edit) -> Response:
    """Stop sending for now; whoever has not had it yet waits."""
    return await _act(request, viewer, bot_id, broadcast_id, "pause")


@router.post("/broadcasts/{bot_id}/{broadcast_id}/resume")
async def broadcast_resume(
    request: Request, bot_id: Id, broadcast_id: Id, viewer: Edit
) -> Response:
    """Go on sending from where it stopped."""
    return await _act(request, viewer, bot_id, broadcast_id, "resume")


@router.post("/broadcasts/{bot_id}/{broadcast_id}/cancel")
async def broadcast_cancel(
    request: Request, bot_id: Id, broadcast_id: Id, viewer: Edit
) -> Response:
    """Stop for good: whoever has not had it yet does not get it."""
    return await _act(request, viewer, bot_id, broadcast_id, "cancel")


@router.post("/broadcasts/{bot_id}/{broadcast_id}/delete")
async def broadcast_delete(
    request: Request, bot_id: Id, broadcast_id: Id, viewer: Edit
) -> Response:
    """Delete a draft (a broadcast that was sent keeps its report)."""
    return await _act(request, viewer, bot_id, broadcast_id, "delete")
