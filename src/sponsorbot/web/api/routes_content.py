"""Content items: from file_ids or text (JSON), or a file upload (multipart)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from sponsorbot.features.content.service import MAX_UPLOAD_BYTES, NewContent, kind_of
from sponsorbot.web.api.auth import actor_name
from sponsorbot.web.api.deps import BotId, Editor, Limit, Offset, Reader, RowId, Service
from sponsorbot.web.api.models import (
    MAX_AUTO_DELETE_MIN,
    AutoDelete,
    ContentIn,
    ContentOut,
    ContentPatch,
    FileKind,
    NoNul,
    Page,
)
from sponsorbot.web.uploads import multipart_file, read_file, refuse_declared_size

router = APIRouter()


class UploadForm(NoNul):
    """The multipart fields beside `file` (form fields are text, so "true" is a boolean)."""

    model_config = ConfigDict(extra="forbid")

    kind: FileKind | None = None
    caption: Annotated[str | None, Field(max_length=1024)] = None
    protect_content: bool = True
    auto_delete_minutes: AutoDelete = 0


CONTENT_IN: TypeAdapter[ContentIn] = TypeAdapter(ContentIn)


UPLOAD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["file"],
    "additionalProperties": False,
    "properties": {
        "file": {"type": "string", "format": "binary"},
        "kind": {"type": "string", "enum": ["document", "video", "photo"]},
        "caption": {"type": "string", "maxLength": 1024},
        "protect_content": {"type": "boolean"},
        "auto_delete_minutes": {
            "type": "number",
            "minimum": 0,
            "maximum": MAX_AUTO_DELETE_MIN,
        },
    },
}
CREATE_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/ContentIn"}},
            "multipart/form-data": {"schema": UPLOAD_SCHEMA},
        },
    }
}


def content_out(row: dict[str, Any]) -> dict[str, Any]:
    """The API's names for a stored item."""
    return {
        **row,
        "protect_content": row["protect"],
        "auto_delete_minutes": row["auto_delete_s"] / 60,
    }


def _invalid(exc: ValidationError) -> RequestValidationError:
    return RequestValidationError(exc.errors(include_url=False, include_context=False))


@router.get("/bots/{bot_id}/contents", response_model=Page[ContentOut], summary="List content")
async def list_contents(
    bot_id: BotId, who: Reader, features: Service, limit: Limit = 50, offset: Offset = 0
) -> dict[str, Any]:
    rows, total = await features.contents.list(bot_id, limit, offset)
    return {
        "items": [content_out(r) for r in rows],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


@router.post(
    "/bots/{bot_id}/contents",
    status_code=201,
    response_model=ContentOut,
    summary="Create content: JSON naming file_ids or text, or a multipart file upload",
    openapi_extra=CREATE_BODY,
)
async def create_content(
    bot_id: BotId, request: Request, who: Editor, features: Service
) -> dict[str, Any]:
    created_by = actor_name(who)
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        return await _upload(bot_id, request, features, created_by)
    try:
        payload = await request.json()
    except ValueError:
        raise RequestValidationError([{"type": "json_invalid", "loc": ("body",)}]) from None
    try:
        body = CONTENT_IN.validate_python(payload)
    except ValidationError as exc:
        raise _invalid(exc) from None
    await features.bots.get(bot_id)
    new = NewContent(
        body.kind,
        body.stored_items(),
        created_by,
        body.caption,
        body.protect_content,
        round(body.auto_delete_minutes * 60),
    )
    return content_out(await features.contents.create(bot_id, new))


async def _upload(bot_id: int, request: Request, features: Service, by: str) -> dict[str, Any]:
    refuse_declared_size(request, MAX_UPLOAD_BYTES)
    await features.bots.get(bot_id)
    async with multipart_file(request, max_fields=10) as (file, fields):
        try:
            options = UploadForm.model_validate(fields)
        except ValidationError as exc:
            raise _invalid(exc) from None
        data = await read_file(file, MAX_UPLOAD_BYTES)
        content_type = file.content_type or "application/octet-stream"
        kind = options.kind or kind_of(content_type)
        new = NewContent(
            kind,
            [{"kind": kind}],
            by,
            options.caption,
            options.protect_content,
            round(options.auto_delete_minutes * 60),
        )
        row = await features.contents.upload(
            bot_id, kind, file.filename or "file", data, content_type, new
        )
    return content_out(row)


@router.get("/bots/{bot_id}/contents/{content_id}", response_model=ContentOut, summary="One")
async def get_content(
    bot_id: BotId, content_id: RowId, who: Reader, features: Service
) -> dict[str, Any]:
    return content_out(await features.contents.get(bot_id, content_id))


@router.patch(
    "/bots/{bot_id}/contents/{content_id}", response_model=ContentOut, summary="Change one"
)
async def patch_content(
    bot_id: BotId, content_id: RowId, body: ContentPatch, who: Editor, features: Service
) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    given = body.model_fields_set
    if "caption" in given:
        changes["caption"] = body.caption
    if body.protect_content is not None:
        changes["protect"] = body.protect_content
    if body.auto_delete_minutes is not None:
        changes["auto_delete_s"] = round(body.auto_delete_minutes * 60)
    if body.enabled is not None:
        changes["enabled"] = body.enabled
    return content_out(await features.contents.update(bot_id, content_id, changes))


@router.delete("/bots/{bot_id}/contents/{content_id}", status_code=204, summary="Delete one")
async def delete_content(
    bot_id: BotId, content_id: RowId, who: Editor, features: Service
) -> Response:
    await features.contents.delete(bot_id, content_id)
    return Response(status_code=204)
