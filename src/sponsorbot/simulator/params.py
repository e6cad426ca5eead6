"""Bot API request parameters from a query string, a form, JSON or a multipart body."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from sponsorbot.simulator.errors import bad_request
from sponsorbot.simulator.filebytes import MAX_FILE_BYTES


@dataclass(slots=True)
class Upload:
    """A file sent in a multipart body; its bytes when it is small enough to keep."""

    filename: str | None
    size: int
    data: bytes | None = None
    content_type: str | None = None


class Params:
    """Typed access to one call's parameters, failing with Telegram's 400 strings."""

    def __init__(self, data: dict[str, Any], uploads: dict[str, Upload]) -> None:
        self.data = data
        self.uploads = uploads

    def has(self, name: str) -> bool:
        """Whether the parameter was given (and is not empty)."""
        value = self.data.get(name)
        return (value is not None and value != "") or name in self.uploads

    def opt_str(self, name: str, default: str | None = None) -> str | None:
        """A string parameter."""
        value = self.data.get(name)
        if value is None or value == "":
            return default
        return value if isinstance(value, str) else str(value)

    def req_str(self, name: str) -> str:
        """A string parameter that must be there."""
        value = self.opt_str(name)
        if value is None:
            raise bad_request(f"{name} is empty")
        return value

    def opt_int(self, name: str, default: int | None = None) -> int | None:
        """An integer parameter."""
        value = self.data.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            return int(value)
        try:
            return int(value)
        except (TypeError, ValueError):
            raise bad_request(f"invalid {name} specified") from None

    def req_int(self, name: str) -> int:
        """An integer parameter that must be there."""
        value = self.opt_int(name)
        if value is None:
            raise bad_request(f"{name} is empty")
        return value

    def flag(self, name: str) -> bool:
        """A boolean parameter (``true``/``1`` in forms, a JSON boolean in JSON)."""
        value = self.data.get(name)
        if isinstance(value, str):
            return value.lower() in ("true", "1")
        return bool(value)

    def json(self, name: str) -> Any:
        """A JSON-valued parameter, given as JSON text in forms or inline in a JSON body."""
        value = self.data.get(name)
        if isinstance(value, str):
            if value == "":
                return None
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                raise bad_request(f"can't parse {name} JSON object") from None
        return value

    def chat_ref(self, name: str = "chat_id") -> int | str:
        """A chat id (integer) or ``@username``."""
        value = self.data.get(name)
        if value is None or value == "":
            raise bad_request(f"{name} is empty")
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        text = str(value)
        if text.lstrip("-").isdigit():
            return int(text)
        if text.startswith("@"):
            return text
        raise bad_request("chat not found")


async def read_params(request: web.Request) -> Params:
    """Collect the parameters of a Bot API call, whatever way they were sent."""
    data: dict[str, Any] = dict(request.query)
    uploads: dict[str, Upload] = {}
    if request.can_read_body:
        ctype = request.content_type
        if ctype == "application/json":
            try:
                body = orjson.loads(await request.read())
            except orjson.JSONDecodeError:
                raise bad_request("can't parse JSON body") from None
            if isinstance(body, dict):
                data.update(body)
        elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            for key, value in (await request.post()).items():
                if isinstance(value, web.FileField):
                    value.file.seek(0, 2)
                    size = value.file.tell()
                    content = None
                    if size <= MAX_FILE_BYTES:
                        value.file.seek(0)
                        content = value.file.read()
                    uploads[key] = Upload(value.filename, size, content, value.content_type)
                else:
                    data[key] = value
    return Params(data, uploads)
