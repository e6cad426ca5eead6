"""The clients' common part: set the scene, run every case through a library, print one JSON
line per case. A library is plugged in as a `Library` (client_aiogram.py, client_ptb.py).

Phases, in order: every event with its updates read by the library's getUpdates; every call;
every event again with its updates posted to a webhook and read by the library's Update model.
Standard library only (see the package's docstring).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from tests.simulator.conformance.cases import (
    CALLS,
    WEBHOOK_OFF,
    WEBHOOK_ON,
    WEBHOOK_SECRET,
)
from tests.simulator.conformance.events import EVENTS
from tests.simulator.conformance.spec import ALL_UPDATES, Call, Ctx, Event
from tests.simulator.conformance.wire import Control, Receiver


@dataclass
class Outcome:
    """What the library made of one answer or update."""

    exception: str | None = None  # the class the library raised, if it raised
    message: str | None = None
    retry_after: int | None = None  # as the library read it from a 429
    parse_error: bool = False  # it could not read what the simulator sent
    problems: list[str] = field(default_factory=list)  # strict checks of what it read
    notes: list[str] = field(default_factory=list)  # worth knowing, not a failure
    kinds: list[str] = field(default_factory=list)  # update kinds as the library saw them
    sent: Any = None  # the simulator's JSON: a whole answer, or the update bodies


# The ChatMember class each status must be read as (the same names in both libraries).
MEMBER_CLASSES = {
    "creator": "ChatMemberOwner",
    "administrator": "ChatMemberAdministrator",
    "member": "ChatMemberMember",
    "restricted": "ChatMemberRestricted",
    "left": "ChatMemberLeft",
    "kicked": "ChatMemberBanned",
}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def differences(sent: Any, back: Any, path: str = "result") -> list[str]:
    """Where a library's reading, written back as JSON, differs from what was sent: a field
    dropped, added or changed (``1`` read as ``True`` counts: the types must match too)."""
    if isinstance(sent, dict) and isinstance(back, dict):
        out: list[str] = []
        for key in sorted(sent.keys() | back.keys()):
            where = f"{path}.{key}"
            if key not in back:
                out.append(f"{where}: sent {_short(sent[key])}, lost on reading")
            elif key not in sent:
                if back[key] in (False, None):
                    continue  # a flag left out is a false one, as the Bot API omits them
                out.append(f"{where}: not sent, read as {_short(back[key])}")
            else:
                out += differences(sent[key], back[key], where)
        return out
    if isinstance(sent, list) and isinstance(back, list) and len(sent) == len(back):
        return [
            d
            for n, (s, b) in enumerate(zip(sent, back, strict=True))
            for d in differences(s, b, f"{path}[{n}]")
        ]
    if type(sent) is not type(back) or sent != back:
        return [f"{path}: sent {_short(sent)}, read back as {_short(back)}"]
    return []


class Library(Protocol):
    """One Bot API client library, bound to the scene's bot."""

    async def call(self, call: Call, args: dict[str, Any]) -> Outcome:
        """Call ``call.method`` through the library's own method with ``args``."""
        ...

    async def get_updates(self) -> Outcome:
        """The pending updates through the library's getUpdates (all kinds allowed)."""
        ...

    def read_update(self, body: dict[str, Any]) -> Outcome:
        """One webhook body through the library's Update model."""
        ...

    async def close(self) -> None:
        """Release the library's sessions."""
        ...


Opener = Callable[[str, str], Awaitable[Library]]


def emit(library: str, case: str, phase: str, outcome: Outcome) -> None:
    """Print one case's line."""
    line = {"library": library, "case": case, "phase": phase, **asdict(outcome)}
    print(json.dumps(line), flush=True)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def setup(ctl: Control, name: str) -> Ctx:
    """The scene: the bot, its visitors, and chats where it is (or is not) an administrator."""
    bot = ctl.act("bots", username=f"{name}_conformance_bot")
    token = bot["token"]
    ctx: Ctx = {"bot": bot["id"], "token": token, "now": int(time.time())}
    ctl.bot_api(token, "getUpdates", timeout=0, allowed_updates=ALL_UPDATES)
    ctx["user"] = ctl.user("Ann", "ann_visitor")
    ctl.act("open_link", user_id=ctx["user"], bot=bot["id"], payload="")
    ctx["user_msg"] = ctl.act("send_text", user_id=ctx["user"], bot=bot["id"], text="hi")[
        "message_id"
    ]
    for kind in ("photo", "video", "document"):  # files the visitor sent, for the bot to reuse
        sent = ctl.act("send_file", user_id=ctx["user"], bot=bot["id"], kind=kind)
        ctx[f"user_{kind}"] = sent["file_id"]
    ctx["stranger"] = ctl.user("Stranger")
    ctx["blocked"] = ctl.started(bot["id"], "Blocker")
    ctl.act("block", user_id=ctx["blocked"], bot=bot["id"], blocked=True)
    ctx["gone"] = ctl.started(bot["id"], "Gone")
    ctl.act("deactivate", user_id=ctx["gone"])
    channel = ctl.chat("News", username="conf_news")
    ctx.update(channel=channel["id"], channel_username="conf_news", owner=channel["owner_id"])
    ctx["private_channel"] = ctl.chat("Hidden", private=True)["id"]
    ctx["supergroup"] = ctl.chat("Group", username="conf_group", type="supergroup")["id"]
    ctx["requests"] = ctl.chat("Ask first", username="conf_ask", join_request=True)["id"]
    ctx["outside"] = ctl.chat("Elsewhere", username="conf_elsewhere")["id"]
    ctx["no_invite"] = ctl.chat("No links", username="conf_nolinks")["id"]
    for chat in ("channel", "private_channel", "supergroup", "requests"):
        ctl.admin(ctx[chat], ctx["bot"])
    ctl.admin(ctx["no_invite"], ctx["bot"], can_invite_users=False)
    ctx["flooded"] = ctl.started(bot["id"], "Flooded")
    for role, status in (
        ("member", None),
        ("admin_user", "administrator"),
        ("restricted", "restricted"),
        ("banned", "kicked"),
    ):
        ctx[role] = ctl.user(role.title())
        ctl.act("join", user_id=ctx[role], chat_id=ctx["supergroup"])
        if status == "administrator":
            ctl.admin(ctx["supergroup"], ctx[role], can_invite_users=True)
        elif status is not None:
            ctl.act("status", chat_id=ctx["supergroup"], member_id=ctx[role], status=status)
    ctl.act("join", user_id=ctx["member"], chat_id=ctx["channel"])
    ctx["dead_hook"] = f"http://127.0.0.1:{_closed_port()}/hook"
    ctl.drain(token)
    return ctx


def _failed(exc: Exception) -> Outcome:
    """The suite itself failed on a case (the scene could not be set): not a finding."""
    return Outcome(exception=f"driver:{exc.__class__.__name__}", message=str(exc))


async def called(lib: Library, ctl: Control, ctx: Ctx, call: Call) -> Outcome:
    """One call, with what comes before and after it."""
    try:
        if call.before is not None:
            call.before(ctx, ctl)
        outcome = await lib.call(call, call.args(ctx))
        sent = outcome.sent if isinstance(outcome.sent, dict) else {}
        if call.keep is not None and sent.get("ok"):
            call.keep(ctx, sent["result"])
        if call.after is not None:
            call.after(ctx, ctl)
    except Exception as exc:  # recorded as the case's failure
        return _failed(exc)
    return outcome


async def polled(lib: Library, ctl: Control, ctx: Ctx, event: Event) -> Outcome:
    """One event, its updates read through getUpdates."""
    try:
        ctl.drain(ctx["token"])
        event.act(ctx, ctl)
        outcome = await lib.get_updates()
        if outcome.parse_error and isinstance(outcome.sent, dict):
            # Which update the batch failed on: each one through the Update model.
            for body in outcome.sent.get("result") or []:
                one = lib.read_update(body)
                outcome.problems += [f"update {body.get('update_id')}: {p}" for p in one.problems]
                if one.message:
                    outcome.problems.append(f"update {body.get('update_id')}: {one.message}")
        ctl.drain(ctx["token"])
    except Exception as exc:
        return _failed(exc)
    return outcome


async def hooked(lib: Library, ctl: Control, ctx: Ctx, event: Event, hook: Receiver) -> Outcome:
    """One event, its updates posted to the webhook and read one by one."""
    try:
        event.act(ctx, ctl)
        ctl.delivered(ctx["token"])
        got = hook.take()
    except Exception as exc:
        return _failed(exc)
    outcome = Outcome(sent=[body for body, _ in got])
    for body, secret in got:
        one = lib.read_update(body)
        if secret != WEBHOOK_SECRET:
            outcome.problems.append(f"secret token header {secret!r}")
        if one.exception and outcome.exception is None:
            outcome.exception, outcome.message = one.exception, one.message
        outcome.parse_error |= one.parse_error
        outcome.problems += one.problems
        outcome.notes += one.notes
        outcome.kinds += one.kinds
    return outcome


async def run(url: str, name: str, open_library: Opener) -> None:
    """Every case, each printed as it ends."""
    ctl = Control(url)
    ctx = setup(ctl, name)
    lib = await open_library(url, ctx["token"])
    try:
        for event in EVENTS:
            emit(name, f"getUpdates:{event.id}", "getUpdates", await polled(lib, ctl, ctx, event))
        for call in CALLS:
            emit(name, call.id, "call", await called(lib, ctl, ctx, call))
        with Receiver() as hook:
            ctx["receiver"] = hook.url
            emit(name, WEBHOOK_ON.id, "call", await called(lib, ctl, ctx, WEBHOOK_ON))
            for event in EVENTS:
                outcome = await hooked(lib, ctl, ctx, event, hook)
                emit(name, f"webhook:{event.id}", "webhook", outcome)
            emit(name, WEBHOOK_OFF.id, "call", await called(lib, ctl, ctx, WEBHOOK_OFF))
    finally:
        await lib.close()
    print(json.dumps({"library": name, "done": True}), flush=True)


def main(name: str, open_library: Opener) -> None:
    """A client's entry point: ``python -m <client> <simulator URL>``."""
    asyncio.run(run(sys.argv[1], name, open_library))
