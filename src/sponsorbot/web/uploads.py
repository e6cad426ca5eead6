"""Reading an uploaded file from a multipart form, for the panel and the owner API alike."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import Request
from starlette.datastructures import UploadFile

from sponsorbot.features.errors import Invalid, TooLarge

FORM_OVERHEAD = 64 * 1024  # multipart boundaries and the small fields beside the file


def too_large(size: int, limit: int) -> TooLarge:
    """The refusal of a file over `limit` bytes."""
    megabytes = limit // (1024 * 1024)
    return TooLarge(f"the file is larger than {megabytes} MB", code="too_large", limit=limit)


def refuse_declared_size(request: Request, limit: int) -> None:
    """Refuse on the declared size, before the body is read: nobody waits for 50 MB to learn
    it was too much."""
    length = request.headers.get("content-length", "")
    if length.isdecimal() and int(length) > limit + FORM_OVERHEAD:
        raise too_large(int(length), limit)


async def read_file(file: UploadFile, limit: int) -> bytes:
    """The file's bytes; TooLarge past `limit` (never more than limit + 1 bytes are read)."""
    data = await file.read(limit + 1)
    if len(data) > limit:
        raise too_large(len(data), limit)
    return data


@contextlib.asynccontextmanager
async def multipart_file(
    request: Request, max_fields: int
) -> AsyncIterator[tuple[UploadFile, dict[str, str]]]:
    """The body's file (multipart field 'file') and its text fields, for the block; Invalid
    for a body that is not multipart or has no file. The form is closed after the block."""
    try:
        form = await request.form(max_files=1, max_fields=max_fields)
    except Exception as exc:  # a malformed multipart body is the client's mistake
        raise Invalid(f"the multipart body cannot be read: {exc}") from None
    try:
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise Invalid("send the file in a multipart field named 'file'")
        yield file, {k: v for k, v in form.items() if k != "file" and isinstance(v, str)}
    finally:
        await form.close()
