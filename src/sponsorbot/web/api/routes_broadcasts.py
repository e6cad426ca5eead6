"""Broadcasts: create (draft, now or scheduled), list, read with progress and report, change,
send, pause, resume, cancel, preview, count an audience, upload media."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request, Response

from sponsorbot.features.accounts.api_tokens import Principal
from sponsorbot.features.broadcasts.rules import Status
from sponsorbot.features.broadcasts.service import Audience, Broadcast
from sponsorbot.features.content.service import MAX_UPLOAD_BYTES, kind_of
from sponsorbot.features.errors import Code, Invalid
from sponsorbot.web.api.auth import actor_name, refuse_unless
from sponsorbot.web.api.deps import BotId, Editor, Limit, Offset, Reader, RowId, Service
from sponsorbot.web.api.models import Page
from sponsorbot.web.api.models_broadcasts import (
    AudienceIn,
    BroadcastIn,
    BroadcastOut,
    BroadcastPatch,
    CountOut,
    MediaKind,
    MediaOut,
    PreviewIn,
    SendIn,
)
from sponsorbot.web.uploads import multipart_file, read_file, refuse_declared_size

router = APIRouter()
BASE = "/bots/{bot_id}/broadcasts"


def may_pay(who: Principal, paid: bool) -> None:
    """403 for a paid broadcast saved or sent with a token whose role may not spend the bot's
    Telegram Stars (docs/adr/0007-permissions.md)."""
    if paid:
        refuse_unless(
            who,
            "broadcasts.paid",
            f"the role {who.role} may not allow a paid broadcast: it spends the bot's Telegram "
            "Stars (0.1 a message), so only an owner or admin token may",
        )


@router.post(BASE, status_code=201, response_model=BroadcastOut, summary="Create a broadcast")
async def create_broadcast(
    bot_id: BotId, body: BroadcastIn, who: Editor, features: Service
) -> Broadcast:
    service = features.broadcasts
    may_pay(who, body.post.paid)
    if body.send == "schedule" and body.scheduled_at is None:
        raise Invalid("give scheduled_at to schedule a broadcast", code=Code.SCHEDULE_MISSING)
    row = await service.create(bot_id, body.draft(), actor_name(who))
    if body.send == "draft":
        return row
    at = body.scheduled_at if body.send == "schedule" else None
    try:
        return await service.send(bot_id, row.id, at)
    except Invalid:
        await service.delete(bot_id, row.id)  # nothing half-made is left behind
        raise


@router.get(BASE, response_model=Page[BroadcastOut], summary="List a bot's broadcasts")
async def list_broadcasts(
    bot_id: BotId,
    who: Reader,
    features: Service,
    status: Status | None = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> dict[str, Any]:
    await features.bots.get(bot_id)
    rows, total = await features.broadcasts.page([bot_id], status, limit, offset)
    return {"items": rows, "total": total, "limit": limit, "offset": offset}


@router.post(
    f"{BASE}/count", response_model=CountOut, summary="Count the people an audience holds now"
)
async def count_audience(
    bot_id: BotId, body: AudienceIn, who: Reader, features: Service
) -> dict[str, Any]:
    return {"count": await features.broadcasts.audience_count(bot_id, body.to(Audience))}


@router.post(
    f"{BASE}/media",
    status_code=201,
    response_model=MediaOut,
    summary="Upload a photo, video or document for a post (multipart field 'file')",
)
async def upload_media(
    bot_id: BotId,
    request: Request,
    who: Editor,
    features: Service,
    kind: MediaKind | None = None,
) -> dict[str, Any]:
    refuse_declared_size(request, MAX_UPLOAD_BYTES)
    await features.bots.get(bot_id)
    async with multipart_file(request, max_fields=2) as (file, _fields):
        data = await read_file(file, MAX_UPLOAD_BYTES)
        content_type = file.content_type or "application/octet-stream"
        return await features.broadcasts.upload(
            bot_id, kind or kind_of(content_type), file.filename or "file", data, content_type
        )


@router.post(f"{BASE}/preview", status_code=204, summary="Send a post to one person now")
async def preview_post(bot_id: BotId, body: PreviewIn, who: Editor, features: Service) -> Response:
    await features.broadcasts.preview(bot_id, body.post.post(), body.telegram_id)
    return Response(status_code=204)


@router.get(f"{BASE}/{{broadcast_id}}", response_model=BroadcastOut, summary="One broadcast")
async def get_broadcast(
    bot_id: BotId, broadcast_id: RowId, who: Reader, features: Service
) -> Broadcast:
    return await features.broadcasts.get(bot_id, broadcast_id)


@router.put(
    f"{BASE}/{{broadcast_id}}",
    response_model=BroadcastOut,
    summary="Replace a draft's or a scheduled broadcast's post and audience",
)
async def change_broadcast(
    bot_id: BotId, broadcast_id: RowId, body: BroadcastPatch, who: Editor, features: Service
) -> Broadcast:
    may_pay(who, body.post.paid)
    return await features.broadcasts.change(bot_id, broadcast_id, body.draft())


@router.delete(f"{BASE}/{{broadcast_id}}", status_code=204, summary="Delete a draft")
async def delete_broadcast(
    bot_id: BotId, broadcast_id: RowId, who: Editor, features: Service
) -> Response:
    await features.broadcasts.delete(bot_id, broadcast_id)
    return Response(status_code=204)


@router.post(
    f"{BASE}/{{broadcast_id}}/send",
    response_model=BroadcastOut,
    summary='Send a draft now, or schedule it (body: {"at": ISO 8601})',
    description="A paid broadcast takes an owner or admin token (403 otherwise).",
)
async def send_broadcast(
    bot_id: BotId, broadcast_id: RowId, who: Editor, features: Service, body: SendIn | None = None
) -> Broadcast:
    at = body.at if body is not None else None
    # A paid draft an admin saved stays theirs to send.
    may_pay(who, (await features.broadcasts.get(bot_id, broadcast_id))["paid"])
    return await features.broadcasts.send(bot_id, broadcast_id, at)


@router.post(
    f"{BASE}/{{broadcast_id}}/{{action}}",
    response_model=BroadcastOut,
    summary="Pause, resume or cancel a broadcast (cancelling a finished one: 409)",
)
async def act_on_broadcast(
    bot_id: BotId,
    broadcast_id: RowId,
    action: Literal["pause", "resume", "cancel"],
    who: Editor,
    features: Service,
) -> Broadcast:
    service = features.broadcasts
    acts = {"pause": service.pause, "resume": service.resume, "cancel": service.cancel}
    return await acts[action](bot_id, broadcast_id)
