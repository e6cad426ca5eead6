"""One bot's content: search, upload with progress, links, QR codes, options and counts, and
the Telegram users who may upload by sending files to the bot (uploaders)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.datastructures import UploadFile

from sponsorbot.features.accounts.security import qr_svg
from sponsorbot.features.content.service import MAX_AUTO_DELETE_S, NewContent, kind_of
from sponsorbot.features.errors import FeatureError, Invalid, NotFound, TooLarge
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel.deps import Edit, ManageBots, View
from sponsorbot.web.panel.errors import REFUSED, describe, megabytes
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.paging import neighbours, page_count, page_number
from sponsorbot.web.panel.web import Viewer, audit, audit_changes, panel_of, redirect, render
from sponsorbot.web.uploads import read_file, refuse_declared_size

router = APIRouter(include_in_schema=False, tags=["panel"])

# A content link's QR code never changes, and drawing one takes about 5 ms: a page of 20 would
# spend 100 ms on them. Links are public (t.me/bot?start=code), so keeping them costs nothing.
_link_qr = lru_cache(maxsize=2048)(qr_svg)
PAGE = 20
NUL = "\x00"  # PostgreSQL's text cannot hold it: refused beside the field, never a 500
BIGINT = 2**63 - 1  # the largest id the database holds, as the owner API allows
NOTE_LENGTH = 200


def _minutes(raw: str, errors: dict[str, str], key: str) -> int:
    """Minutes of a form field; an error under `key` when it is not a whole number from 0 to
    47 hours (Telegram lets a bot delete its messages only within 48 hours: M12)."""
    raw = raw.strip() or "0"
    if not raw.isdecimal() or len(raw) > 9 or int(raw) > MAX_AUTO_DELETE_S // 60:
        errors[key] = _(
            "Minutes from 0 (never) to 2820 (47 hours): Telegram lets a bot delete its "
            "messages only within 48 hours."
        )
        return 0
    return int(raw)


def _field_errors(exc: Exception, fields: dict[str, str]) -> dict[str, str]:
    """A refusal shown beside the field it is about (`fields`: code → field; else "file")."""
    code = exc.code if isinstance(exc, FeatureError) else None
    return {fields.get(code or "", fields.get("", "file")): describe(exc)}


async def _content_page(
    request: Request,
    viewer: Viewer,
    bot_id: int,
    errors: dict[str, str],
    status: int = 200,
    values: dict[str, str] | None = None,
) -> Response:
    number = page_number(request)
    query = request.query_params.get("q", "").replace("\x00", "").strip()[:100]
    features = services_of(request)
    panel = panel_of(request)
    bots = services_of(request).bots
    bot = await bots.get(bot_id)
    items, total = await features.contents.list(bot_id, PAGE, (number - 1) * PAGE, query)
    storage = await features.bot_settings.storage_chat(bot_id)
    by_item = await features.report.content_totals(bot_id, [i["id"] for i in items])
    for item in items:
        item["qr"] = _link_qr(item["link"])
        item["counts"] = by_item.get(item["id"], {})
        item["minutes"] = item["auto_delete_s"] // 60
    pages = page_count(total, PAGE)

    def page_url(n: int) -> str:
        return "?" + urlencode({"q": query, "page": n} if query else {"page": n})

    context: dict[str, Any] = {
        "bot": bot,
        "items": items,
        "errors": errors,
        "query": query,
        "page": number,
        "pages": pages,
        **neighbours(number, number < pages, page_url),
        "total": total,
        "storage_chat": storage,
        "uploaders": await features.bot_settings.uploaders(bot_id),
        "values": values or {},
        "upload_limit": panel.config.upload_limit,
        "upload_limit_mb": megabytes(panel.config.upload_limit),
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
    if NUL in text:
        errors["text"] = _("The text holds a NUL character, which no text may hold.")
    minutes = _minutes(str(form.get("auto_delete", "")), errors, "auto_delete")
    if errors:
        return await _content_page(request, viewer, bot_id, errors, 422)
    try:
        new = NewContent(
            kind="text",
            items=[{"kind": "text", "text": text}],
            created_by=f"panel:{viewer.user.id}",
            protect=form.get("protect") == "on",
            auto_delete_s=minutes * 60,
        )
        item = await services_of(request).contents.create(bot_id, new)
    except Invalid as exc:
        errors = _field_errors(exc, {"auto_delete_range": "auto_delete", "": "text"})
        return await _content_page(request, viewer, bot_id, errors, 422)
    await _audit_created(request, viewer, item, new)
    return redirect(request, f"/bots/{bot_id}/content")


@router.post("/bots/{bot_id}/content/upload")
async def content_upload(request: Request, bot_id: int, viewer: Edit) -> Response:
    """Upload a file from the browser through the content service (as the owner API does).

    The file goes to the bot's storage chat for a file_id, and the item gets its link. The
    page's script sends it with XMLHttpRequest to show progress; without script it is a form.
    """
    features = services_of(request)
    limit = panel_of(request).config.upload_limit
    await services_of(request).bots.get(bot_id)
    try:
        # When the script sent it (CSRF token in a header) the body is not read at all.
        refuse_declared_size(request, limit)
    except TooLarge as exc:
        return await _content_page(request, viewer, bot_id, {"file": describe(exc)}, 413)
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        return await _content_page(request, viewer, bot_id, {"file": _("Choose a file.")}, 422)
    form = await request.form()
    try:
        file = form.get("file")
        errors: dict[str, str] = {}
        if not isinstance(file, UploadFile) or not file.filename:
            errors["file"] = _("Choose a file.")
        caption = str(form.get("caption", "")).strip()
        if NUL in caption:
            errors["caption"] = _("The text holds a NUL character, which no text may hold.")
        minutes = _minutes(str(form.get("auto_delete", "")), errors, "upload_auto_delete")
        if errors or not isinstance(file, UploadFile):
            return await _content_page(request, viewer, bot_id, errors, 422)
        content_type = file.content_type or "application/octet-stream"
        kind = kind_of(content_type)
        try:
            new = NewContent(
                kind,
                [{"kind": kind}],
                f"panel:{viewer.user.id}",
                caption or None,
                form.get("protect") == "on",
                minutes * 60,
            )
            data = await read_file(file, limit)
            item = await features.contents.upload(
                bot_id, kind, file.filename or "file", data, content_type, new
            )
        except REFUSED as exc:
            fields = {"caption_too_long": "caption", "auto_delete_range": "upload_auto_delete"}
            errors = _field_errors(exc, fields)
            status = 413 if isinstance(exc, TooLarge) else 422
            return await _content_page(request, viewer, bot_id, errors, status)
    finally:
        await form.close()
    await _audit_created(request, viewer, item, new)
    return redirect(request, f"/bots/{bot_id}/content")


@router.post("/bots/{bot_id}/content/{content_id}/toggle")
async def content_toggle(request: Request, bot_id: int, content_id: int, viewer: Edit) -> Response:
    """Turn a content item's link on or off."""
    contents = services_of(request).contents
    before = await contents.get(bot_id, content_id)
    after = await contents.update(bot_id, content_id, {"enabled": not before["enabled"]})
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
    contents = services_of(request).contents
    before = await contents.get(bot_id, content_id)
    if errors:
        return await _content_page(request, viewer, bot_id, errors, 422)
    changes = {"protect": form.get("protect") == "on", "auto_delete_s": minutes * 60}
    try:
        after = await contents.update(bot_id, content_id, changes)
    except Invalid as exc:
        errors = _field_errors(exc, {"": f"i{content_id}"})
        return await _content_page(request, viewer, bot_id, errors, 422)
    await audit_changes(request, viewer, "content.changed", after["link"], before, after, changes)
    return redirect(request, _back(str(form.get("back", "")), bot_id))


def _back(target: str, bot_id: int) -> str:
    """The content page the form came from (its search and page), never another place."""
    page = f"/bots/{bot_id}/content"
    return target if target == page or target.startswith(page + "?") else page


def _uploader_id(raw: str, known: set[int]) -> tuple[int | None, str]:
    """The Telegram user id typed in, or the reason it cannot be added."""
    if not raw.isdecimal() or len(raw) > 19 or not 1 <= int(raw) <= BIGINT:
        return None, _("Enter the person's Telegram user id: digits only, like 123456789.")
    if int(raw) in known:
        return None, _("This person is an uploader already.")
    return int(raw), ""


@router.post("/bots/{bot_id}/uploaders")
async def uploader_add(request: Request, bot_id: int, viewer: ManageBots) -> Response:
    """Allow a Telegram user to upload by sending files to the bot (the way past the 50 MB a
    bot may upload itself), through the same service call as the owner API."""
    settings = services_of(request).bot_settings
    form = await request.form()
    raw = str(form.get("user_id", "")).strip()
    note = str(form.get("note", "")).replace(NUL, "").strip()[:NOTE_LENGTH]
    known = {row["user_id"] for row in await settings.uploaders(bot_id)}
    user_id, problem = _uploader_id(raw, known)
    if user_id is None:
        # What was typed stays in the form, so nothing is lost to a wrong character.
        values = {"user_id": raw[:40], "note": note}
        return await _content_page(request, viewer, bot_id, {"user_id": problem}, 422, values)
    added = await settings.add_uploader(bot_id, user_id, note or None)
    bot = await services_of(request).bots.get(bot_id)
    await audit(
        request,
        viewer,
        "bot.uploader_added",
        f"@{bot.username}",
        after={"user_id": added["user_id"], "note": added["note"]},
    )
    return redirect(request, f"/bots/{bot_id}/content#uploaders")


@router.post("/bots/{bot_id}/uploaders/{user_id}/remove")
async def uploader_remove(
    request: Request, bot_id: int, user_id: int, viewer: ManageBots
) -> Response:
    """Stop a Telegram user from uploading to the bot."""
    settings = services_of(request).bot_settings
    bot = await services_of(request).bots.get(bot_id)
    # Looked up in the list first: an id beyond what the database holds is simply not there.
    found = [row for row in await settings.uploaders(bot_id) if row["user_id"] == user_id]
    if not found:
        raise NotFound(f"{user_id} is not an uploader of this bot")
    await settings.remove_uploader(bot_id, user_id)
    before = {"user_id": user_id, "note": found[0]["note"]}
    await audit(request, viewer, "bot.uploader_removed", f"@{bot.username}", before=before)
    return redirect(request, f"/bots/{bot_id}/content#uploaders")
