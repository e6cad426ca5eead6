"""Content items: from file_ids or text (JSON), or a file upload (multipart)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field, ValidationError

from sponsorbot.features.content.service import MAX_UPLOAD_BYTES, NewContent, kind_of
from sponsorbot.web.api.deps import Editor, Limit, Offset, Reader, Service
from sponsorbot.web.api.models import (
    MAX_AUTO_DELETE_MIN,
    ContentIn,
    ContentOut,
    ContentPatch,
    FileKind,
    Page,
)
from sponsorbot.web.uploads import multipart_file, read_file, refuse_declared_size

router = APIRouter()


class UploadForm(BaseModel):
    """The multipart fields beside `file`."""

    kind: FileKind | None = None
    caption: Annotated[str | None, Field(max_length=1024)] = None
    protect_content: bool = True
    auto_delete_minutes: Annotated[float, Field(ge=0, le=MAX_AUTO_DELETE_MIN)] = 0


UPLOAD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["file"],
    "properties": {
        "file": {"type": "string", "format": "binary"},
        "kind": {"type": "string", "enum": ["document", "video", "photo"]},
        "caption": {"type": "string", "maxLength": 1024},
        "protect_content": {"type": "boolean"},
        "auto_delete_minutes": {"type": "number", "minimum": 0},
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
    bot_id: int, who: Reader, features: Service, limit: Limit = 50, offset: Offset = 0
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
    bot_id: int, request: Request, who: Editor, features: Service
) -> dict[str, Any]:
    created_by = f"api:{who.name}"
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        return await _upload(bot_id, request, features, created_by)
    try:
        payload = await request.json()
    except ValueError:
        raise RequestValidationError([{"type": "json_invalid", "loc": ("body",)}]) from None
    try:
        body = ContentIn.model_validate(payload)
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
    bot_id: int, content_id: int, who: Reader, features: Service
) -> dict[str, Any]:
    return content_out(await features.contents.get(bot_id, content_id))


@router.patch(
    "/bots/{bot_id}/contents/{content_id}", response_model=ContentOut, summary="Change one"
)
async def patch_content(
    bot_id: int, content_id: int, body: ContentPatch, who: Editor, features: Service
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
async def delete_content(bot_id: int, content_id: int, who: Editor, features: Service) -> Response:
    await features.contents.delete(bot_id, content_id)
    return Response(status_code=204)
