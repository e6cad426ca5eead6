"""The bytes of files bots upload, kept so the phone page can show a photo or a QR code.

Only small files are kept, and only the newest ones: a long load test that uploads photos must
not grow the simulator's memory without limit. A file whose bytes were dropped (or never kept)
is still a file in the world; only its picture is gone from the phone.
"""

from __future__ import annotations

import mimetypes
import re
from collections import OrderedDict
from dataclasses import dataclass

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_FILES = 300
MAX_TOTAL_BYTES = 64 * 1024 * 1024
OCTET_STREAM = "application/octet-stream"

# What an image's first bytes say it is, whatever the uploader called it.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)
_MEDIA_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")


def content_type_of(data: bytes, declared: str | None, file_name: str | None) -> str:
    """The media type to serve ``data`` with: sniffed for common images, else what the upload
    declared, else a guess from the file name, else ``application/octet-stream``."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    media_type = (declared or "").split(";", 1)[0].strip().lower()
    if media_type and media_type != OCTET_STREAM and _MEDIA_TYPE.match(media_type):
        return media_type
    guessed = mimetypes.guess_type(file_name or "")[0]
    return guessed or OCTET_STREAM


@dataclass(frozen=True, slots=True)
class Stored:
    """One kept file."""

    data: bytes
    content_type: str


class FileBytes:
    """Bytes by file_id, oldest dropped first once there are too many or too much."""

    def __init__(
        self,
        max_files: int = MAX_FILES,
        max_total: int = MAX_TOTAL_BYTES,
        max_file: int = MAX_FILE_BYTES,
    ) -> None:
        self.max_files, self.max_total, self.max_file = max_files, max_total, max_file
        self._kept: OrderedDict[str, Stored] = OrderedDict()
        self.total = 0

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, file_id: str, data: bytes, content_type: str) -> bool:
        """Keep ``data`` as the bytes of ``file_id``; False (and nothing kept) when too big."""
        if len(data) > self.max_file or len(data) > self.max_total:
            return False
        old = self._kept.pop(file_id, None)
        if old is not None:
            self.total -= len(old.data)
        self._kept[file_id] = Stored(data, content_type)
        self.total += len(data)
        while len(self._kept) > self.max_files or self.total > self.max_total:
            _, dropped = self._kept.popitem(last=False)
            self.total -= len(dropped.data)
        return True

    def get(self, file_id: str) -> Stored | None:
        """The kept bytes of ``file_id``, if any."""
        return self._kept.get(file_id)
