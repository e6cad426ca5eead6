"""The control API, JSON under ``/_sim/``: make the world and act in it as its people.

Tests, the demo, the load test and the phone page do everything through here. Errors come back
as ``{"ok": false, "error": "..."}`` with status 400 (invalid action) or 404 (unknown thing).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from sponsorbot.simulator import actions
from sponsorbot.simulator.botapi import SIMULATOR_KEY
from sponsorbot.simulator.formatting import user_text
from sponsorbot.simulator.limits import Fault
from sponsorbot.simulator.state import Simulator
from sponsorbot.simulator.world import Account, Bot, Chat, InviteLink

Body = dict[str, Any]
Action = Callable[[Simulator, Body], Awaitable[Any]]


class NotFound(LookupError):
    """An id or username that names nothing (answered with 404)."""


def _bot(sim: Simulator, body: Body) -> Bot:
    bot = sim.world.bot_by_ref(body.get("bot", ""))
    if bot is None:
        raise NotFound(f"no bot {body.get('bot')!r}")
    return bot


def _user(sim: Simulator, body: Body, key: str = "user_id") -> Account:
    account = sim.world.accounts.get(int(body.get(key, 0)))
    if account is None:
        raise NotFound(f"no user {body.get(key)!r}")
    return account


def _chat(sim: Simulator, body: Body) -> Chat:
    chat = sim.world.chat_by_ref(body.get("chat_id", ""))
    if chat is None:
        raise NotFound(f"no chat {body.get('chat_id')!r}")
    return chat


def _link(sim: Simulator, body: Body) -> InviteLink | None:
    url = body.get("invite_link")
    if not url:
        return None
    link = sim.world.links.get(url)
    if link is None:
        raise NotFound(f"no invite link {url!r}")
    return link


def _owner(sim: Simulator, chat: Chat) -> Account:
    creator = next(m for m in chat.members.values() if m.status == "creator")
    return sim.world.accounts[creator.account_id]


def bot_json(bot: Bot) -> dict[str, Any]:
    """A bot as the control API shows it (with its token and the updates it asked for)."""
    return {
        "id": bot.id,
        "token": bot.token,
        "username": bot.account.username,
        "first_name": bot.account.first_name,
        "allowed_updates": bot.allowed_updates,
    }


async def create_bot(sim: Simulator, body: Body) -> Any:
    """Create a bot: ``username`` (ending in ``bot``), optional ``token`` and ``first_name``."""
    bot = sim.world.create_bot(body["username"], body.get("token"), body.get("first_name"))
    return bot_json(bot)


async def list_bots(sim: Simulator, body: Body) -> Any:
    """Every bot."""
    return [bot_json(b) for b in sim.world.bots.values()]


async def create_user(sim: Simulator, body: Body) -> Any:
    """Create a person: ``first_name``, optional ``last_name``, ``username``, ``language_code``."""
    account = sim.world.create_user(
        body.get("first_name") or "User",
        body.get("last_name"),
        body.get("username"),
        body.get("language_code"),
    )
    return account.json()


MAX_BULK = 100_000


async def create_users(sim: Simulator, body: Body) -> Any:
    """Create ``count`` people at once (load tests): returns their ids. With ``bot``, each has
    a private chat with that bot already (they started it earlier, without an update now)."""
    count = int(body.get("count", 0))
    if not 0 < count <= MAX_BULK:
        raise ValueError(f"count must be between 1 and {MAX_BULK}")
    prefix = str(body.get("first_name") or "Visitor")
    language = body.get("language_code")
    bot = _bot(sim, body) if body.get("bot") is not None else None
    made = [sim.world.create_user(f"{prefix} {n + 1}", None, None, language) for n in range(count)]
    if bot is not None:
        for account in made:
            sim.world.dialog(bot, account)
    return [account.id for account in made]


async def list_users(sim: Simulator, body: Body) -> Any:
    """Every person (not bots)."""
    return [a.json() for a in sim.world.accounts.values() if not a.is_bot]


async def create_channel(sim: Simulator, body: Body) -> Any:
    """Create a channel (or ``type: supergroup``): ``title``, ``username`` unless ``private``,
    ``join_request`` mode, optional ``owner_id`` (else a new person owns it)."""
    owner = _user(sim, body, "owner_id") if body.get("owner_id") else None
    if owner is None:
        owner = sim.world.create_user("Owner of " + body.get("title", "channel"))
    username = None if body.get("private") else body.get("username")
    chat = sim.world.create_chat(
        body.get("title") or "Channel",
        owner,
        username,
        body.get("type", "channel"),
        bool(body.get("join_request")),
    )
    return {**chat.store.chat, "owner_id": owner.id, "invite_link": chat.primary_link}


async def make_admin(sim: Simulator, body: Body) -> Any:
    """Make ``member_id`` (a bot or person) an administrator of ``chat_id`` with ``rights``."""
    chat = _chat(sim, body)
    account = _user(sim, body, "member_id")
    owner = next(
        sim.world.accounts[m.account_id] for m in chat.members.values() if m.status == "creator"
    )
    member = actions.set_member(
        sim.world, chat, account, "administrator", owner, rights=body.get("rights") or {}
    )
    return {"status": member.status, "rights": member.rights}


async def remove_admin(sim: Simulator, body: Body) -> Any:
    """Take an administrator's rights away (``remove: true`` removes them from the chat)."""
    chat = _chat(sim, body)
    account = _user(sim, body, "member_id")
    owner = next(
        sim.world.accounts[m.account_id] for m in chat.members.values() if m.status == "creator"
    )
    status = "left" if body.get("remove") else "member"
    actions.set_member(sim.world, chat, account, status, owner)
    return {"status": status}


async def set_status(sim: Simulator, body: Body) -> Any:
    """Put a person in ``status`` (member, restricted, kicked, left) by the chat's owner."""
    chat = _chat(sim, body)
    account = _user(sim, body, "member_id")
    status = body.get("status")
    if status not in ("member", "restricted", "kicked", "left"):
        raise ValueError("status must be member, restricted, kicked or left")
    actions.set_member(sim.world, chat, account, status, _owner(sim, chat))
    return {"status": status}


async def open_link(sim: Simulator, body: Body) -> Any:
    """A person opens ``t.me/<bot>?start=<payload>``: the bot gets ``/start <payload>``."""
    bot, account = _bot(sim, body), _user(sim, body)
    text, entities = actions.start_command(body.get("payload", ""))
    message = actions.user_message(sim.world, bot, account, text, entities)
    return {"message_id": message.message_id, "ts": sim.world.clock()}


async def open_links(sim: Simulator, body: Body) -> Any:
    """Several people open links at once (load tests): ``opens`` is a list of
    ``{"user_id", "bot", "payload"}``; returns how many were opened."""
    opens = body.get("opens")
    if not isinstance(opens, list) or len(opens) > MAX_BULK:
        raise ValueError(f"opens must be a list of at most {MAX_BULK} links")
    for one in opens:
        await open_link(sim, one)
    return {"opened": len(opens), "ts": sim.world.clock()}


async def send_text(sim: Simulator, body: Body) -> Any:
    """A person sends the bot ``text``: trimmed and with the entities their app adds (a
    ``/command`` is a ``bot_command``, links, mentions and hashtags too), as in Telegram."""
    bot, account = _bot(sim, body), _user(sim, body)
    text, entities = user_text(str(body["text"]))
    message = actions.user_message(sim.world, bot, account, text, entities)
    return {"message_id": message.message_id, "ts": sim.world.clock()}


async def send_file(sim: Simulator, body: Body) -> Any:
    """A person sends the bot a file (``kind``: photo, video or document)."""
    bot, account = _bot(sim, body), _user(sim, body)
    kind = body.get("kind", "document")
    if kind not in ("photo", "video", "document"):
        raise ValueError("kind must be photo, video or document")
    file = sim.world.new_file(kind, body.get("file_name"), int(body.get("size", 0)))
    files = sim.world.photo_sizes(file) if kind == "photo" else [file]
    message = actions.user_message(
        sim.world, bot, account, kind=kind, files=files, caption=body.get("caption")
    )
    return {"message_id": message.message_id, "file_id": file.file_id, "ts": sim.world.clock()}


async def press_button(sim: Simulator, body: Body) -> Any:
    """A person presses the inline button with ``callback_data`` under ``message_id``."""
    bot, account = _bot(sim, body), _user(sim, body)
    query = actions.press_button(
        sim.world, bot, account, int(body["message_id"]), str(body["callback_data"])
    )
    return {"callback_query_id": query.id, "ts": sim.world.clock()}


async def join(sim: Simulator, body: Body) -> Any:
    """A person joins ``chat_id`` directly, or through ``invite_link``."""
    link = _link(sim, body)
    chat = sim.world.chats[link.chat_id] if link and not body.get("chat_id") else _chat(sim, body)
    return {"status": actions.join(sim.world, chat, _user(sim, body), link)}


async def leave(sim: Simulator, body: Body) -> Any:
    """A person (or bot) leaves ``chat_id``."""
    chat, account = _chat(sim, body), _user(sim, body)
    if chat.status_of(account.id) in ("left", "kicked"):
        raise ValueError("not a member")
    actions.set_member(sim.world, chat, account, "left", account)
    return {"status": "left"}


async def request_join(sim: Simulator, body: Body) -> Any:
    """A person asks to join ``chat_id`` (or through ``invite_link``)."""
    link = _link(sim, body)
    chat = sim.world.chats[link.chat_id] if link and not body.get("chat_id") else _chat(sim, body)
    actions.request_join(sim.world, chat, _user(sim, body), link)
    return {"status": "pending"}


async def block_bot(sim: Simulator, body: Body) -> Any:
    """A person blocks the bot (``blocked: false`` unblocks)."""
    blocked = bool(body.get("blocked", True))
    actions.block(sim.world, _bot(sim, body), _user(sim, body), blocked)
    return {"blocked": blocked}


async def deactivate_user(sim: Simulator, body: Body) -> Any:
    """A person deletes their account: sends to them fail with ``user is deactivated``."""
    _user(sim, body).deactivated = True
    return {"deactivated": True}


async def revoke_token(sim: Simulator, body: Body) -> Any:
    """The bot's token is revoked; the answer holds the new one."""
    bot = _bot(sim, body)
    sim.webhooks.stop(bot)
    return bot_json(bot) | {"token": sim.world.revoke_token(bot)}


async def set_latency(sim: Simulator, body: Body) -> Any:
    """Every Bot API call waits ``fixed_ms`` plus up to ``jitter_ms``."""
    sim.latency.fixed_ms = float(body.get("fixed_ms", 0))
    sim.latency.jitter_ms = float(body.get("jitter_ms", 0))
    return {"fixed_ms": sim.latency.fixed_ms, "jitter_ms": sim.latency.jitter_ms}


async def set_fault(sim: Simulator, body: Body) -> Any:
    """Faults of ``method`` (or ``*``): error_rate+status, timeout_rate+hang_seconds,
    force_429_next+retry_after. An empty body for a method clears its faults."""
    fault = Fault(
        error_rate=float(body.get("error_rate", 0)),
        status=int(body.get("status", 500)),
        timeout_rate=float(body.get("timeout_rate", 0)),
        hang_seconds=float(body.get("hang_seconds", 30)),
        force_429_next=int(body.get("force_429_next", 0)),
        retry_after=int(body.get("retry_after", 1)),
    )
    sim.faults.set(body.get("method", "*"), fault)
    return {"method": body.get("method", "*")}


async def clear_faults(sim: Simulator, body: Body) -> Any:
    """No more faults anywhere."""
    sim.faults.clear()
    return True


async def advance_clock(sim: Simulator, body: Body) -> Any:
    """Move the simulated clock on by ``seconds`` (dates of later messages and updates)."""
    seconds = float(body.get("seconds", 0))
    if not 0 <= seconds <= 10 * 365 * 86400:
        raise ValueError("seconds must be between 0 and ten years")
    sim.world.offset_s += seconds
    return {"offset_s": sim.world.offset_s, "ts": sim.world.clock()}


async def set_limits(sim: Simulator, body: Body) -> Any:
    """Change the flood limits: ``per_bot_per_second``, ``per_chat_per_second``."""
    sim.limiter.per_bot = int(body.get("per_bot_per_second", sim.limiter.per_bot))
    sim.limiter.per_chat = int(body.get("per_chat_per_second", sim.limiter.per_chat))
    return {"per_bot_per_second": sim.limiter.per_bot, "per_chat_per_second": sim.limiter.per_chat}


async def read_chat(sim: Simulator, body: Body) -> Any:
    """The private chat of ``user_id`` with ``bot`` as the person sees it."""
    bot, account = _bot(sim, body), _user(sim, body)
    store = bot.dialogs.get(account.id)
    messages = []
    for m in store.messages.values() if store else ():
        item: dict[str, Any] = {
            "message_id": m.message_id,
            "from": "bot" if m.sender_id == bot.id else "user",
            "date": m.date,
            "text": m.text,
            "caption": m.caption,
            "buttons": (m.reply_markup or {}).get("inline_keyboard", []),
            "media": None,
            "edited": m.edit_date is not None,
            "deleted": m.deleted,
            "protect_content": m.protect_content,
        }
        if m.files:
            f = m.files[-1]
            item["media"] = {"kind": m.media_kind, "file_id": f.file_id, "file_name": f.file_name}
        messages.append(item)
    answers = [a for a in bot.answers if a["user_id"] == account.id]
    return {
        "messages": messages,
        "callback_answers": answers,
        "blocked": bot.id in account.blocked_bots,
    }


async def read_calls(sim: Simulator, body: Body) -> Any:
    """Calls after sequence number ``since``, at most ``limit``; ``next`` is the cursor."""
    calls = sim.calls.since(int(body.get("since", 0)), int(body.get("limit", 10_000)))
    next_seq = calls[-1].seq if calls else max(int(body.get("since", 0)), 0)
    return {"calls": [c.json() for c in calls], "next": next_seq}


async def open_url(sim: Simulator, body: Body) -> Any:
    """A person taps a t.me URL: a bot start link, a public channel or an invite link."""
    url = str(body.get("url", ""))
    rest = url.split("t.me/", 1)[-1] if "t.me/" in url else ""
    if not rest:
        raise ValueError("only t.me links can be opened here")
    if rest.startswith(("+", "joinchat/")):
        link = sim.world.links.get("https://t.me/+" + rest.removeprefix("joinchat/").lstrip("+"))
        if link is None:
            raise NotFound("no such invite link")
        status = actions.join(sim.world, sim.world.chats[link.chat_id], _user(sim, body), link)
        return {"action": "join", "status": status}
    name, _, query = rest.partition("?")
    bot = sim.world.bot_by_ref(name)
    if bot is not None:
        payload = query.removeprefix("start=") if query.startswith("start=") else ""
        return {"action": "start", "bot": name} | await open_link(
            sim, body | {"bot": bot.id, "payload": payload}
        )
    chat = sim.world.chat_by_ref("@" + name.split("/")[0])
    if chat is None:
        raise NotFound(f"nothing is called @{name}")
    return {"action": "join", "status": actions.join(sim.world, chat, _user(sim, body))}


async def reset(sim: Simulator, body: Body) -> Any:
    """Empty the world (same seed, so the same ids come again)."""
    await sim.reset()
    return True


ROUTES: dict[str, Action] = {
    "bots": create_bot,
    "users": create_user,
    "users/bulk": create_users,
    "channels": create_channel,
    "admins": make_admin,
    "admins/remove": remove_admin,
    "status": set_status,
    "open_link": open_link,
    "open_links": open_links,
    "open_url": open_url,
    "send_text": send_text,
    "send_file": send_file,
    "press_button": press_button,
    "join": join,
    "leave": leave,
    "request_join": request_join,
    "block": block_bot,
    "deactivate": deactivate_user,
    "revoke_token": revoke_token,
    "latency": set_latency,
    "faults": set_fault,
    "faults/clear": clear_faults,
    "limits": set_limits,
    "clock": advance_clock,
    "reset": reset,
}
READ_ROUTES: dict[str, Action] = {
    "bots": list_bots,
    "users": list_users,
    "chat": read_chat,
    "calls": read_calls,
}


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def _endpoint(action: Action, reading: bool) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def endpoint(request: web.Request) -> web.Response:
        sim = request.app[SIMULATOR_KEY]
        try:
            body: Body = (
                dict(request.query) if reading else (orjson.loads(await request.read() or b"{}"))
            )
            return _json({"ok": True, "result": await action(sim, body)})
        except NotFound as exc:
            return _json({"ok": False, "error": str(exc)}, 404)
        except (ValueError, KeyError, TypeError, orjson.JSONDecodeError) as exc:
            return _json({"ok": False, "error": f"{exc.__class__.__name__}: {exc}"}, 400)

    return endpoint


def mount(app: web.Application, actions: dict[str, Action], reads: dict[str, Action]) -> None:
    """Serve ``actions`` as POST and ``reads`` as GET under ``/_sim/``, with this module's
    answers and errors (the chain's and the price sources' controls use it too)."""
    for path, action in actions.items():
        app.router.add_post(f"/_sim/{path}", _endpoint(action, reading=False))
    for path, action in reads.items():
        app.router.add_get(f"/_sim/{path}", _endpoint(action, reading=True))


def setup(app: web.Application) -> None:
    """Add the control API's routes to ``app``."""
    mount(app, ROUTES, READ_ROUTES)
