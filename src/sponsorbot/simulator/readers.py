"""Numbers, chat references and JSON object fields, read as the Bot API server reads them.

The one place the simulator turns client text into integers. tdlib has two readers, and the
server uses both: ``to_integer`` (lenient: the leading ASCII digits after an optional minus,
wrapped to the integer's width, 0 when there are none; ``chat_id``, ``user_id``, ``limit``...)
and ``to_integer_safe`` (strict: the whole text must be the canonical decimal of an integer in
range; ``tg://user?id=``, JSON fields). Only ASCII digits count ("²" and "٣" are not digits to
tdlib), and no text is handed to :func:`int` before its length is known to be small.

The objects inside parameters (reply_markup, reply_parameters, entities...) are read as tdlib's
JsonObject reads them (tdutils/td/utils/JsonBuilder.cpp), with its error texts: a string field
takes a number as its text, an integer field a number or a string, a missing required field is
``Can't find field "x"``, a field of the wrong type ``Field "x" must be of type String``.

The decimals the control API takes (a price, an amount on the simulated chain) are read by
:func:`read_decimal`.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

_LEADING = re.compile(r"-?[0-9]*")
# The longest canonical decimal of a signed integer of each width ("-9223372036854775808").
_MAX_LENGTH = {bits: len(str(-(1 << (bits - 1)))) for bits in (32, 64)}
# 10**64 is a multiple of 2**64: the last 64 digits of a number decide it modulo 2**64.
_LAST_DIGITS = 64
_INT64 = 1 << 63
_TYPE_NAMES = {dict: "Object", list: "Array", str: "String", bool: "Boolean"}


class FieldError(Exception):
    """A field missing or of the wrong type; the message is tdlib's."""


def wrap(value: int, bits: int = 64) -> int:
    """``value`` as a signed integer of ``bits`` holds it (two's complement wrap-around)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def to_integer(text: str, bits: int = 64) -> int:
    """tdlib's to_integer: the leading digits of ``text`` (after one optional minus), wrapped
    to ``bits``; 0 when there are none (``"12abc"`` is 12, ``"abc"``, ``"--5"``, ``"²"`` 0)."""
    match = _LEADING.match(text)
    digits = match.group() if match else ""
    negative = digits.startswith("-")
    digits = digits[negative:][-_LAST_DIGITS:]
    value = int(digits) if digits else 0
    return wrap(-value if negative else value, bits)


def to_integer_safe(text: str, bits: int = 64) -> int | None:
    """tdlib's to_integer_safe: the integer ``text`` is the canonical decimal of (an optional
    minus, no plus, no leading zeros) if it fits in ``bits``, else None."""
    if not text or len(text) > _MAX_LENGTH[bits]:
        return None
    digits = text[1:] if text[0] == "-" else text
    if not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    if str(value) != text or not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        return None
    return value


def integer(value: Any, bits: int = 64) -> int:
    """A parameter read with :func:`to_integer`: a JSON number as the server reads its text,
    a string by its leading digits."""
    if type(value) is int:
        limit = 1 << (bits - 1)
        return value if -limit <= value < limit else wrap(value, bits)
    return to_integer(value if isinstance(value, str) else str(value), bits)


def chat_ref(value: Any) -> int | str:
    """A chat as check_chat reads ``chat_id``: ``@username`` as it is, anything else as a
    64-bit :func:`to_integer` (so text that is no number is chat 0, which no chat has)."""
    if type(value) is int:
        return value if -_INT64 <= value < _INT64 else wrap(value, 64)
    text = value if isinstance(value, str) else str(value)
    return text if text.startswith("@") else to_integer(text, 64)


def type_name(value: Any) -> str:
    """The JSON type of a decoded value, as tdlib names it."""
    if value is None:
        return "Null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "Number"
    return _TYPE_NAMES.get(type(value), "Object")


def _number_text(value: Any) -> str | None:
    """The text of a JSON number or string (tdlib keeps a number as its text), else None."""
    if isinstance(value, str):
        return value
    if type_name(value) == "Number":
        return orjson.dumps(value).decode()
    return None


def optional(obj: dict[str, Any], name: str, kind: type) -> Any:
    """An Object, Array, String or Boolean field; None when absent."""
    if name not in obj:
        return None
    value = obj[name]
    if not isinstance(value, kind):
        raise FieldError(f'Field "{name}" must be of type {_TYPE_NAMES[kind]}')
    return value


def required(obj: dict[str, Any], name: str, kind: type) -> Any:
    """An Object, Array, String or Boolean field that must be there."""
    if name not in obj:
        raise FieldError(f'Can\'t find field "{name}"')
    return optional(obj, name, kind)


def optional_text(obj: dict[str, Any], name: str) -> str | None:
    """A string field (a number is taken as its text); None when absent."""
    if name not in obj:
        return None
    text = _number_text(obj[name])
    if text is None:
        raise FieldError(f'Field "{name}" must be of type String')
    return text


def required_text(obj: dict[str, Any], name: str) -> str:
    """A string field that must be there."""
    text = optional_text(obj, name)
    if text is None:
        raise FieldError(f'Can\'t find field "{name}"')
    return text


def optional_integer(obj: dict[str, Any], name: str, bits: int = 32) -> int:
    """An integer field (get_optional_int_field, or ``long`` with ``bits=64``): a number or a
    string holding one canonically, in range; 0 when absent."""
    if name not in obj:
        return 0
    text = _number_text(obj[name])
    if text is None:
        raise FieldError(f'Field "{name}" must be a Number')
    value = to_integer_safe(text, bits)
    if value is None:
        raise FieldError(f'Field "{name}" must be a valid Number')
    return value


def required_integer(obj: dict[str, Any], name: str, bits: int = 32) -> int:
    """An integer field that must be there."""
    if name not in obj:
        raise FieldError(f'Can\'t find field "{name}"')
    return optional_integer(obj, name, bits)


def read_decimal(value: Any, name: str, example: str) -> Decimal:
    """A control API decimal (``name`` in its errors), as a string or a whole number: floats
    are refused, so no binary rounding comes in. Raises ValueError."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f'{name} must be a decimal string such as "{example}"')
    try:
        return Decimal(str(value).strip())
    except InvalidOperation as exc:
        raise ValueError(f"{name} {value!r} is not a decimal number") from exc
