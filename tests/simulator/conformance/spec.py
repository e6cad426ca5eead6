"""The vocabulary of the cases: what a client does (Call, Event), what the real Bot API
answers (Expect), and small checks of a result. Standard library only (see the package's
docstring)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.simulator.conformance.wire import Control

Ctx = dict[str, Any]
Check = Callable[[Any], str | None]

# The update kinds the clients ask for (all the simulator sends, and a few it does not).
ALL_UPDATES = [
    "message",
    "edited_message",
    "channel_post",
    "edited_channel_post",
    "callback_query",
    "my_chat_member",
    "chat_member",
    "chat_join_request",
]
# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
BAD_TOKEN = "123456:AAnever-issued-by-this-telegram"


@dataclass(frozen=True)
class Upload:
    """A file sent in the request body (multipart), as the library's own input-file type."""

    filename: str
    data: bytes


@dataclass(frozen=True)
class Expect:
    """The real server's answer: success (``error`` None, ``check`` on the result), or an
    error the library raises as its class for ``error`` (bad_request, forbidden, unauthorized,
    conflict, retry_after, server_error) with this exact ``description``."""

    error: str | None = None
    description: str | None = None
    retry_after: int | None = None
    check: Check | None = None


OK = Expect()


@dataclass(frozen=True)
class Call:
    """One Bot API call through the library's own method."""

    id: str
    method: str
    args: Callable[[Ctx], dict[str, Any]]
    expect: Expect = OK
    before: Callable[[Ctx, Control], None] | None = None
    after: Callable[[Ctx, Control], None] | None = None
    keep: Callable[[Ctx, Any], None] | None = None
    # Past the library's own argument models (what Telegram refuses, a library may refuse too).
    raw: bool = False
    # Sent with BAD_TOKEN instead of the bot's.
    bad_token: bool = False


@dataclass(frozen=True)
class Event:
    """Something happens in the world; the bot gets updates of ``kinds``, in this order."""

    id: str
    kinds: tuple[str, ...]
    act: Callable[[Ctx, Control], None]
    check: Check | None = None  # on the list of update bodies


def bad(detail: str | None = None) -> Expect:
    """A 400, with its description when we know the real one."""
    return Expect("bad_request", None if detail is None else f"Bad Request: {detail}")


def forbidden(description: str) -> Expect:
    """A 403."""
    return Expect("forbidden", description)


def keep(name: str, key: str | None = None) -> Callable[[Ctx, Any], None]:
    """Keep the result (or its ``key``) as ``ctx[name]`` for a later case."""

    def store(ctx: Ctx, result: Any) -> None:
        ctx[name] = result if key is None else result[key]

    return store


def equals(path: str, value: Any) -> Check:
    """The result's field at ``path`` (dotted) is ``value``."""

    def check(result: Any) -> str | None:
        got = result
        for part in path.split(".") if path else ():
            got = got.get(part) if isinstance(got, dict) else None
        return None if got == value else f"{path or 'result'} is {got!r}, Telegram gives {value!r}"

    return check


def present(key: str) -> Check:
    """The result carries ``key``."""

    def check(result: Any) -> str | None:
        return None if key in result else f"no {key} in the result, Telegram sends one"

    return check


def entity_types(*wanted: str, field: str = "entities") -> Check:
    """The message carries entities of these types (in order)."""

    def check(result: Any) -> str | None:
        message = result[-1]["message"] if isinstance(result, list) else result
        got = [e["type"] for e in message.get(field, [])]
        return None if got == list(wanted) else f"{field} are {got}, Telegram gives {list(wanted)}"

    return check


def html_pre(result: Any) -> str | None:
    """``<pre><code class="language-python">`` is one pre entity with its language."""
    got = [(e["type"], e.get("language")) for e in result.get("entities", [])]
    return None if got == [("pre", "python")] else f"entities are {got}, Telegram gives pre/python"


def text_mention(result: Any) -> str | None:
    """A ``tg://user?id=`` link becomes a text_mention carrying the user."""
    got = result.get("entities", [])
    if len(got) == 1 and got[0]["type"] == "text_mention" and "user" in got[0]:
        return None
    return f"entities are {got}, Telegram gives one text_mention with its user"


def ends_as(status: str) -> Check:
    """The chat_member update ends in ``status``."""

    def check(bodies: Any) -> str | None:
        last = bodies[-1]
        update = last.get("chat_member") or last.get("my_chat_member") or {}
        got = update.get("new_chat_member", {}).get("status")
        return None if got == status else f"new_chat_member.status is {got!r}, not {status!r}"

    return check


def to_user(ctx: Ctx, **more: Any) -> dict[str, Any]:
    """Arguments aimed at the visitor's private chat."""
    return {"chat_id": ctx["user"], **more}
