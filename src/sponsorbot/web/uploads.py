"""Reading an uploaded file from a multipart form, for the panel and the owner API alike."""

from __future__ import annotations

from fastapi import Request
from starlette.datastructures import UploadFile

from sponsorbot.features.errors import TooLarge

FORM_OVERHEAD = 64 * 1024  # multipart boundaries and the small fields beside the file


def too_large(size: int, limit: int) -> TooLarge:
    """The refusal of a file over `limit` bytes."""
    megabytes = limit // (1024 * 1024)
    return TooLarge(f"the file is larger than {megabytes} MB", code="too_large", limit=limit)


def refuse_declared_size(request: Request, limit: int) -> None:
    """Refuse on the declared size, before the body is read: nobody waits for 50 MB to learn
    it was too much."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit + FORM_OVERHEAD:
        raise too_large(int(length), limit)


async def read_file(file: UploadFile, limit: int) -> bytes:
    """The file's bytes; TooLarge past `limit` (never more than limit + 1 bytes are read)."""
    data = await file.read(limit + 1)
    if len(data) > limit:
        raise too_large(len(data), limit)
    return data
