"""Callback data as small typed objects: `AdProduct(product_id=5).pack()` is `"adp:5"`.

Telegram gives a button's data back exactly as the client sends it, and the client is anyone:
`unpack` trusts nothing (the prefix, the number of parts, each part's shape), and a feature
must still check that what it names belongs to the person pressing (docs/adr/0006-callback-data.md).
Each class has its own prefix; two classes cannot share one. `Cls.filter()` is the router
filter for its buttons: it hands the handler what was pressed, unpacked, as `pressed`.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Literal, Self, TypeVar

from sponsorbot.engine.unit import Context

MAX_BYTES = 64  # Telegram's limit for callback_data
SEP = ":"
_PREFIX = re.compile(r"^[a-z][a-z0-9_]{0,15}$")
_INT = re.compile(r"^-?\d{1,19}$")
_prefixes: dict[str, type[CallbackData]] = {}
_fields: dict[type[CallbackData], list[tuple[str, type]]] = {}


class InvalidCallback(ValueError):
    """The data is not what this class packs."""


class CallbackData:
    """Base of a frozen dataclass whose fields (int, str, bool) pack into callback data."""

    prefix: ClassVar[str]

    def __init_subclass__(cls, *, prefix: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # dataclass(slots=True) makes the class anew, without the keyword: keep its prefix.
        prefix = prefix or cls.__dict__.get("prefix")
        if not isinstance(prefix, str) or not _PREFIX.match(prefix):
            raise ValueError(f"callback prefix {prefix!r}: a-z, digits, _; at most 16")
        if prefix in _prefixes and _prefixes[prefix].__qualname__ != cls.__qualname__:
            raise ValueError(f"callback prefix {prefix!r} is taken by {_prefixes[prefix]}")
        _prefixes[prefix] = cls
        cls.prefix = prefix

    @classmethod
    def _fields(cls) -> list[tuple[str, type]]:
        # Read once per class: resolving the annotations costs more than the packing itself.
        fields = _fields.get(cls)
        if fields is None:
            hints = typing.get_type_hints(cls)
            names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
            fields = _fields[cls] = [(name, hints[name]) for name in names]
        return fields

    def pack(self) -> str:
        """The callback data string; ValueError when it would not fit or would not unpack."""
        parts = [self.prefix]
        for name, kind in self._fields():
            value = getattr(self, name)
            if kind is bool:
                parts.append("1" if value else "0")
            elif kind is int:
                parts.append(str(int(value)))
            else:
                text = str(value)
                if SEP in text:
                    raise ValueError(f"{name} may not contain {SEP!r}")
                parts.append(text)
        data = SEP.join(parts)
        if len(data.encode()) > MAX_BYTES:
            raise ValueError(f"callback data is over {MAX_BYTES} bytes")
        return data

    @classmethod
    def unpack(cls, data: object) -> Self:
        """Parse what a client sent back; InvalidCallback for anything this class did not pack."""
        if not isinstance(data, str) or len(data.encode()) > MAX_BYTES:
            raise InvalidCallback("not callback data")
        prefix, *parts = data.split(SEP)
        fields = cls._fields()
        if prefix != cls.prefix or len(parts) != len(fields):
            raise InvalidCallback(f"not {cls.__name__} data")
        values: dict[str, Any] = {}
        for (name, kind), part in zip(fields, parts, strict=True):
            if kind is bool:
                if part not in ("0", "1"):
                    raise InvalidCallback(f"{name} is not 0 or 1")
                values[name] = part == "1"
            elif kind is int:
                if not _INT.match(part):
                    raise InvalidCallback(f"{name} is not a number")
                values[name] = int(part)
            else:
                values[name] = part
        return cls(**values)

    @classmethod
    def parse(cls, data: object) -> Self | None:
        """`unpack`, or None for data this class did not pack."""
        try:
            return cls.unpack(data)
        except InvalidCallback:
            return None

    @classmethod
    def filter(cls) -> Pressed[Self]:
        """A router filter for presses of this class's buttons; the handler gets the data as
        `pressed`. Data that does not unpack passes the update on (the stray-button answer)."""
        return Pressed(cls)


C = TypeVar("C", bound=CallbackData)


class Pressed(Generic[C]):
    """The router filter `CallbackData.filter()` makes: the press's data unpacks as `kind`."""

    def __init__(self, kind: type[C]) -> None:
        self.kind = kind
        self._head = kind.prefix + SEP

    def __call__(self, query: Any, ctx: Context) -> Literal[False] | Mapping[str, C]:
        data = query.get("data")
        # The prefix first: most presses are another class's, and this is cheaper than unpack.
        if not isinstance(data, str):
            return False
        if data != self.kind.prefix and not data.startswith(self._head):
            return False
        pressed = self.kind.parse(data)
        return False if pressed is None else {"pressed": pressed}
