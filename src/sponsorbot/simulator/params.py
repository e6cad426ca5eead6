"""Bot API request parameters from a query string, a form, JSON or a multipart body.

Every parameter is text to the real server: a JSON body's strings are taken as they are and
any other value as its JSON text (tdlib's HttpReader::parse_json_parameters), so ``"text":
true`` sends the text ``true``. Numbers are read from that text by :mod:`readers`.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from sponsorbot.simulator import readers
from sponsorbot.simulator.errors import ApiError, bad_request
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
        """A string parameter: the text as sent (a JSON number, object or array as JSON)."""
        value = self.data.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, str):
            return value
        return str(value) if type(value) is int else orjson.dumps(value).decode()

    def required(self, name: str) -> str:
        """A string parameter the server refuses to go without."""
        value = self.opt_str(name)
        if value is None:
            raise bad_request(f'parameter "{name}" is required')
        return value

    def integer(self, name: str, default: int = 0, bits: int = 32) -> int:
        """A number read as the server reads most of them (td::to_integer of ``bits``, 32 for
        most, 64 for identifiers): the leading digits of the text (``12abc`` is 12, ``abc``
        is 0), ``default`` when the parameter is absent."""
        value = self.data.get(name)
        if value is None or value == "":
            return default
        return readers.integer(value, bits)

    def user_id(self, name: str = "user_id") -> int:
        """A user identifier: positive, else ``invalid user_id specified``."""
        value = self.integer(name, bits=64)
        if value <= 0:
            raise bad_request(f"invalid {name} specified")
        return value

    def flag(self, name: str) -> bool:
        """A boolean parameter: ``true``, ``yes`` or ``1`` in any case (a JSON number or
        boolean arrives as its text), anything else is false."""
        value = self.data.get(name)
        if isinstance(value, str):
            return value.strip().lower() in ("true", "yes", "1")
        return type(value) is int and value == 1

    def chat_ref(self, name: str = "chat_id") -> int | str:
        """A chat id or ``@username``, read as :func:`readers.chat_ref` reads it."""
        value = self.data.get(name)
        if value is None or value == "":
            raise bad_request(f"{name} is empty")
        return readers.chat_ref(value)


def json_object(value: Any, name: str, shown_as: str | None = None) -> dict[str, Any]:
    """A parameter holding a JSON object, as its text (forms) or inline (a JSON body), refused
    in the server's words: ``can't parse <name> JSON object``, ``object expected as
    <shown_as>`` (the server names reply_markup differently in the two)."""
    if isinstance(value, str | bytes):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise bad_request(f"can't parse {name} JSON object") from None
    if not isinstance(value, dict):
        raise bad_request(f"object expected as {shown_as or name}")
    return value


def _exact_json(raw: bytes) -> Any:
    """The body read again keeping every number as its text (orjson cannot hold a number
    beyond a double, and loses how a fraction was written)."""

    def refuse(constant: str) -> Any:
        raise ValueError(constant)  # NaN and Infinity are not JSON

    try:
        body = json.loads(raw, parse_int=str, parse_float=str, parse_constant=refuse)
        orjson.dumps(body)  # text orjson refuses (a lone surrogate) could not be answered
    except (ValueError, RecursionError, orjson.JSONEncodeError):
        raise bad_request("can't parse JSON body") from None
    return body


def json_params(raw: bytes) -> dict[str, Any]:
    """The parameters of a JSON body: strings as they are, other values as their JSON text
    (integers and objects are kept decoded: they read back the same). Raises
    :class:`ApiError` for a body that is no JSON object."""
    try:
        body = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError:
        body = _exact_json(raw)
    if not isinstance(body, dict):
        if isinstance(body, str):
            return {}  # the server keeps a bare JSON string as a parameter named "content"
        raise bad_request("JSON object expected")
    inexact = False
    for key, value in body.items():
        if value is True or value is False:
            body[key] = "true" if value else "false"
        elif value is None:
            body[key] = "null"
        elif type(value) is float:
            inexact = True
    if inexact:
        exact = _exact_json(raw)
        for key, value in body.items():
            if type(value) is float:
                body[key] = exact[key]
    return body


def _form_error(exc: Exception) -> ApiError:
    """A body aiohttp cannot read as a form, in the words of tdlib's HttpReader."""
    if isinstance(exc, UnicodeError | LookupError):
        return bad_request("Strings must be encoded in UTF-8")
    if "boundary missed" in str(exc):
        return bad_request("boundary not found")
    if "EOF" in str(exc):
        return bad_request("unexpected end of request content")
    return bad_request("can't parse form data headers")


def urlencoded_params(raw: bytes) -> dict[str, Any]:
    """The fields of an ``application/x-www-form-urlencoded`` body, read as UTF-8."""
    try:
        text = raw.decode()
    except UnicodeError as exc:
        raise _form_error(exc) from None
    return dict(urllib.parse.parse_qsl(text, keep_blank_values=True))


async def _form(request: web.Request) -> tuple[dict[str, Any], dict[str, Upload]]:
    """The fields and files of a form; the server reads every form as UTF-8 whatever its
    ``charset`` says."""
    data: dict[str, Any] = {}
    uploads: dict[str, Upload] = {}
    if request.content_type == "application/x-www-form-urlencoded":
        return urlencoded_params(await request.read()), uploads
    try:
        fields = await request.post()
    except (ValueError, LookupError) as exc:
        raise _form_error(exc) from None
    for key, value in fields.items():
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
    return data, uploads


async def read_params(request: web.Request) -> Params:
    """Collect the parameters of a Bot API call, whatever way they were sent."""
    data: dict[str, Any] = dict(request.query)
    uploads: dict[str, Upload] = {}
    if request.can_read_body:
        ctype = request.content_type
        if ctype == "application/json":
            data.update(json_params(await request.read()))
        elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            form, uploads = await _form(request)
            data.update(form)
    return Params(data, uploads)
