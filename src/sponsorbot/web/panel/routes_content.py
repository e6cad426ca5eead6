"""One bot's content: search, upload with progress, links, QR codes, options and counts."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from starlette.datastructures import UploadFile

from sponsorbot.engine.bots import BotNotFound
from sponsorbot.features.content import NewContent, kind_of
from sponsorbot.features.errors import Conflict, FeatureError, Invalid, TooLarge
from sponsorbot.telegram import TelegramError
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.routes_gate import channel_error, features_of
from sponsorbot.web.panel.security import qr_svg
from sponsorbot.web.panel.web import Viewer, audit, panel_of, redirect, render, require

router = APIRouter(include_in_schema=False, tags=["panel"])
View = Annotated[Viewer, Depends(require("view"))]
Edit = Annotated[Viewer, Depends(require("content"))]
PAGE = 20
MAX_MINUTES = 7 * 24 * 60
MAX_CAPTION = 1024
FORM_OVERHEAD = 64 * 1024  # multipart boundaries and the small fields beside the file
# Per item: opened (the link was opened: "started" names the item), gated (shown the gate),
# passed (through it), sent (content delivered).
COUNTS = """
SELECT content_id, kind, count(*) AS n FROM events
WHERE bot_id = $1 AND content_id = ANY($2)
  AND kind IN ('started', 'gate_shown', 'gate_passed', 'content_sent')
GROUP BY 1, 2
"""


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.0f}"


def _minutes(raw: str, errors: dict[str, str], key: str) -> int:
    """Minutes of a form field; an error under `key` when it is not 0..a week."""
    raw = raw.strip() or "0"
    if not raw.isdigit() or int(raw) > MAX_MINUTES:
        errors[key] = _("Minutes from 0 (never) to 10080 (a week).")
        return 0
    return int(raw)


async def _content_page(
    request: Request, viewer: Viewer, bot_id: int, errors: dict[str, str], status: int = 200
) -> Response:
    page = request.query_params.get("page", "1")
    number = max(int(page), 1) if page.isdigit() else 1
    query = request.query_params.get("q", "").strip()[:100]
    features = features_of(request)
    panel = panel_of(request)
    try:
        bot = await panel.bots.get(bot_id)
        items, total = await features.contents.list(bot_id, PAGE, (number - 1) * PAGE, query)
        storage = await features.settings.storage_chat(bot_id)
    except (BotNotFound, FeatureError):
        return render(request, viewer, "not_found.html", status=404)
    counts = await panel.pool.fetch(COUNTS, bot_id, [i["id"] for i in items])
    by_item: dict[int, dict[str, int]] = {}
    for row in counts:
        by_item.setdefault(row["content_id"], {})[row["kind"]] = int(row["n"])
    for item in items:
        item["qr"] = qr_svg(item["link"])
        item["counts"] = by_item.get(item["id"], {})
        item["minutes"] = item["auto_delete_s"] // 60
    pages = max((total + PAGE - 1) // PAGE, 1)

    def page_url(n: int) -> str:
        return "?" + urlencode({"q": query, "page": n} if query else {"page": n})

    context: dict[str, Any] = {
        "bot": bot,
        "items": items,
        "errors": errors,
        "query": query,
        "page": number,
        "pages": pages,
        "newer": page_url(number - 1) if number > 1 else None,
        "older": page_url(number + 1) if number < pages else None,
        "total": total,
        "storage_chat": storage,
        "upload_limit": panel.config.upload_limit,
        "upload_limit_mb": _megabytes(panel.config.upload_limit),
    }
    return render(request, viewer, "content.html", context, status)


@router.get("/bots/{bot_id}/content")
async def content_page(request: Request, bot_id: int, viewer: View) -> Response:
    """A bot's content, newest first, searchable, with links, QR codes and counts."""
    return await _content_page(request, viewer, bot_id, {})


async def _audit_created(
    request: Request, viewer: Viewer, item: dict[str, Any], new: NewContent
) -> None:
    await audit(
        request,
        viewer,
        "content.created",
        item["link"],
        after={
            "id": item["id"],
            "kind": item["kind"],
            "protect": new.protect,
            "auto_delete_s": new.auto_delete_s,
        },
    )


@router.post("/bots/{bot_id}/content")
async def content_create(request: Request, bot_id: int, viewer: Edit) -> Response:
    """Create a text item."""
    form = await request.form()
    text = str(form.get("text", "")).strip()
    errors: dict[str, str] = {}
    if not text or len(text) > 4096:
        errors["text"] = _("Write the text to hand out (up to 4096 characters).")
    minutes = _minutes(str(form.get("auto_delete", "")), errors, "auto_delete")
    if errors:
        return await _content_page(request, viewer, bot_id, errors, 422)
    new = NewContent(
        kind="text",
        items=[{"kind": "text", "text": text}],
        created_by=f"panel:{viewer.user.id}",
        protect=form.get("protect") == "on",
        auto_delete_s=minutes * 60,
    )
    try:
        item = await features_of(request).contents.create(bot_id, new)
    except (FeatureError, BotNotFound) as exc:
        return await _content_page(request, viewer, bot_id, {"text": channel_error(exc)}, 422)
    await _audit_created(request, viewer, item, new)
    return redirect(request, f"/bots/{bot_id}/content")


def _upload_error(exc: Exception, limit: int) -> str:
    """Why an upload failed, said next to the file field."""
    if isinstance(exc, TooLarge):
        return _(
            "The file is larger than %(mb)s MB, the most a bot may upload.", mb=_megabytes(limit)
        )
    if isinstance(exc, Conflict):
        return _("Set the bot's storage chat first: uploaded files are kept there.")
    if isinstance(exc, Invalid):
        return _("Choose a file that is not empty.")
    if isinstance(exc, FeatureError):
        return _(
            "Telegram refused the file in the storage chat. Check that the bot is an "
            "administrator there and may post."
        )
    return _("Telegram could not be reached. Try again in a minute.")


@router.post("/bots/{bot_id}/content/upload")
async def content_upload(request: Request, bot_id: int, viewer: Edit) -> Response:
    """Upload a file from the browser through the content service (as the owner API does).

    The file goes to the bot's storage chat for a file_id, and the item gets its link. The
    page's script sends it with XMLHttpRequest to show progress; without script it is a form.
    """
    features = features_of(request)
    limit = panel_of(request).config.upload_limit
    try:
        await panel_of(request).bots.get(bot_id)
    except BotNotFound:
        return render(request, viewer, "not_found.html", status=404)
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit + FORM_OVERHEAD:
        # Refused on the declared size: when the script sent it (CSRF token in a header) the
        # body is not read at all, so nobody waits for 50 MB to learn it was too much.
        too_large = {"file": _upload_error(TooLarge("too large"), limit)}
        return await _content_page(request, viewer, bot_id, too_large, 413)
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        return await _content_page(request, viewer, bot_id, {"file": _("Choose a file.")}, 422)
    form = await request.form()
    try:
        file = form.get("file")
        errors: dict[str, str] = {}
        if not isinstance(file, UploadFile) or not file.filename:
            errors["file"] = _("Choose a file.")
        caption = str(form.get("caption", "")).strip()
        if len(caption) > MAX_CAPTION:
            errors["caption"] = _("A caption holds up to 1024 characters.")
        minutes = _minutes(str(form.get("auto_delete", "")), errors, "upload_auto_delete")
        if errors or not isinstance(file, UploadFile):
            return await _content_page(request, viewer, bot_id, errors, 422)
        data = await file.read(limit + 1)
        content_type = file.content_type or "application/octet-stream"
        kind = kind_of(content_type)
        new = NewContent(
            kind,
            [{"kind": kind}],
            f"panel:{viewer.user.id}",
            caption or None,
            form.get("protect") == "on",
            minutes * 60,
        )
        try:
            if len(data) > limit:
                raise TooLarge("over the panel's limit")
            item = await features.contents.upload(
                bot_id, kind, file.filename or "file", data, content_type, new
            )
        except (FeatureError, TelegramError, OSError) as exc:
            errors = {"file": _upload_error(exc, limit)}
            status = 413 if isinstance(exc, TooLarge) else 422
            return await _content_page(request, viewer, bot_id, errors, status)
    finally:
        await form.close()
    await _audit_created(request, viewer, item, new)
    return redirect(request, f"/bots/{bot_id}/content")


@router.post("/bots/{bot_id}/content/{content_id}/toggle")
async def content_toggle(request: Request, bot_id: int, content_id: int, viewer: Edit) -> Response:
    """Turn a content item's link on or off."""
    contents = features_of(request).contents
    try:
        before = await contents.get(bot_id, content_id)
        after = await contents.update(bot_id, content_id, {"enabled": not before["enabled"]})
    except (FeatureError, BotNotFound):
        return render(request, viewer, "not_found.html", status=404)
    await audit(
        request,
        viewer,
        "content.enabled" if after["enabled"] else "content.disabled",
        after["link"],
        before={"enabled": before["enabled"]},
        after={"enabled": after["enabled"]},
    )
    return redirect(request, _back(str((await request.form()).get("back", "")), bot_id))


@router.post("/bots/{bot_id}/content/{content_id}/options")
async def content_options(request: Request, bot_id: int, content_id: int, viewer: Edit) -> Response:
    """Change an existing item's protection and auto-delete time."""
    form = await request.form()
    errors: dict[str, str] = {}
    minutes = _minutes(str(form.get("auto_delete", "")), errors, f"i{content_id}")
    contents = features_of(request).contents
    try:
        before = await contents.get(bot_id, content_id)
    except (FeatureError, BotNotFound):
        return render(request, viewer, "not_found.html", status=404)
    if errors:
        return await _content_page(request, viewer, bot_id, errors, 422)
    changes = {"protect": form.get("protect") == "on", "auto_delete_s": minutes * 60}
    after = await contents.update(bot_id, content_id, changes)
    changed = [k for k in changes if before[k] != after[k]]
    if changed:
        await audit(
            request,
            viewer,
            "content.changed",
            after["link"],
            before={k: before[k] for k in changed},
            after={k: after[k] for k in changed},
        )
    return redirect(request, _back(str(form.get("back", "")), bot_id))


def _back(target: str, bot_id: int) -> str:
    """The content page the form came from (its search and page), never another place."""
    page = f"/bots/{bot_id}/content"
    return target if target == page or target.startswith(page + "?") else page
