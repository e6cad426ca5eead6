"""Things that happen in the world, and the updates each one sends to the bots that see it.

Both the control API (a user joins, presses a button...) and the Bot API (a bot approves a join
request...) change membership through here, so updates come out the same way for both.
Invalid actions raise ``ValueError`` with a message for the control API's caller.
"""

from __future__ import annotations

from typing import Any

from sponsorbot.simulator.errors import USER_ALREADY_PARTICIPANT
from sponsorbot.simulator.shapes import (
    callback_query_json,
    chat_member_updated,
    join_request_json,
    message_json,
    private_member_updated,
    rights_for,
)
from sponsorbot.simulator.types import shape
from sponsorbot.simulator.world import (
    DEFAULT_OFF_RIGHTS,
    Account,
    Bot,
    CallbackQuery,
    Chat,
    File,
    InviteLink,
    JoinRequest,
    Member,
    Message,
    World,
)


def set_member(
    world: World,
    chat: Chat,
    account: Account,
    status: str,
    actor: Account,
    rights: dict[str, bool] | None = None,
    invite_link: InviteLink | None = None,
    via_join_request: bool = False,
) -> Member:
    """Change a member's status and tell the bots that should hear of it."""
    old = chat.members.get(account.id) or Member(account.id, "left")
    new = Member(account.id, status)
    if status == "administrator":
        given = rights or {}
        new.rights = {r: given.get(r, r not in DEFAULT_OFF_RIGHTS) for r in rights_for(chat)}
    if status in ("left",):
        chat.members.pop(account.id, None)
    else:
        chat.members[account.id] = new
    if account.is_bot:
        chat.bots_seen.add(account.id)
    if invite_link is not None and status == "member":
        invite_link.joined += 1
    own = world.bots.get(account.id)
    if own is not None:
        payload = chat_member_updated(world, chat, actor, old, new, own.id)
        world.emit(own, "my_chat_member", payload, chat.id)
    for bot in admin_bots(world, chat):
        if bot.id != account.id and bot.wants("chat_member"):
            payload = chat_member_updated(
                world, chat, actor, old, new, bot.id, invite_link, via_join_request
            )
            world.emit(bot, "chat_member", payload, chat.id)
    return new


def admin_bots(world: World, chat: Chat, right: str | None = None) -> list[Bot]:
    """Bots administering ``chat`` (holding ``right`` if one is named)."""
    found = []
    for account_id, member in chat.members.items():
        bot = world.bots.get(account_id)
        if (
            bot is not None
            and member.status in ("administrator", "creator")
            and (right is None or chat.has_right(account_id, right))
        ):
            found.append(bot)
    return found


def join(world: World, chat: Chat, account: Account, link: InviteLink | None = None) -> str:
    """A user joins directly or through a link; returns ``member`` or ``pending`` (request)."""
    status = chat.status_of(account.id)
    if status in ("creator", "administrator", "member", "restricted"):
        raise ValueError(USER_ALREADY_PARTICIPANT)
    if status == "kicked":
        raise ValueError("the user is banned in this chat")
    if link is not None:
        if link.chat_id != chat.id or not link.usable(world.clock()):
            raise ValueError("INVITE_HASH_EXPIRED")
        if link.creates_join_request:
            request_join(world, chat, account, link)
            return "pending"
    elif chat.username is None:
        raise ValueError("a private chat can only be joined through an invite link")
    elif chat.join_by_request:
        request_join(world, chat, account, None)
        return "pending"
    set_member(world, chat, account, "member", account, invite_link=link)
    return "member"


def request_join(
    world: World, chat: Chat, account: Account, link: InviteLink | None = None
) -> JoinRequest:
    """A user asks to join; admin bots with can_invite_users get ``chat_join_request``."""
    if chat.status_of(account.id) not in ("left", "kicked") or account.id in chat.join_requests:
        raise ValueError(f"{USER_ALREADY_PARTICIPANT} (or a request is already pending)")
    request = JoinRequest(account.id, world.now(), link.link if link else None)
    chat.join_requests[account.id] = request
    if link is not None:
        link.pending += 1
    for bot in admin_bots(world, chat, "can_invite_users"):
        payload = join_request_json(world, chat, account, request.date, link, bot.id)
        world.emit(bot, "chat_join_request", payload, chat.id)
    return request


def resolve_request(
    world: World, chat: Chat, account: Account, actor: Account, approve: bool
) -> None:
    """Approve or decline a pending join request (raises ``KeyError`` when there is none)."""
    request = chat.join_requests.pop(account.id)
    link = world.links.get(request.invite_link) if request.invite_link else None
    if link is not None:
        link.pending = max(0, link.pending - 1)
    if approve:
        set_member(
            world, chat, account, "member", actor, invite_link=link, via_join_request=link is None
        )


def user_message(
    world: World,
    bot: Bot,
    account: Account,
    text: str | None = None,
    entities: list[dict[str, Any]] | None = None,
    kind: str | None = None,
    files: list[File] | None = None,
    caption: str | None = None,
) -> Message:
    """A user sends the bot a message; the bot gets a ``message`` update."""
    if account.deactivated:
        raise ValueError("the user is deactivated")
    if bot.id in account.blocked_bots:
        # Writing to a blocked bot (pressing Start) unblocks it, as in the real app.
        block(world, bot, account, blocked=False)
    store = world.dialog(bot, account)
    message = Message(
        message_id=store.new_id(),
        date=world.now(),
        chat=store.chat,
        sender=account.json(),
        sender_id=account.id,
        text=text,
        entities=entities or [],
        caption=caption,
        media_kind=kind,
        files=files or [],
    )
    store.messages[message.message_id] = message
    world.emit(bot, "message", message_json(message), account.id)
    return message


def start_command(payload: str) -> tuple[str, list[dict[str, Any]]]:
    """The text and bot_command entity of ``/start <payload>``."""
    text = f"/start {payload}" if payload else "/start"
    return text, [shape("MessageEntity", offset=0, length=6, type="bot_command")]


def press_button(
    world: World, bot: Bot, account: Account, message_id: int, data: str
) -> CallbackQuery:
    """A user presses an inline button carrying ``data``; the bot gets ``callback_query``."""
    store = bot.dialogs.get(account.id)
    message = store.live(message_id) if store else None
    if message is None or message.sender_id != bot.id:
        raise ValueError("no such message from the bot in this chat")
    rows = (message.reply_markup or {}).get("inline_keyboard", [])
    if not any(b.get("callback_data") == data for row in rows for b in row):
        raise ValueError("the message has no button with this callback_data")
    query = CallbackQuery(str(world.rng.getrandbits(62)), account.id, world.clock())
    bot.callbacks[query.id] = query
    chat_instance = str(world.rng.getrandbits(63) - 2**62)
    payload = callback_query_json(query.id, account, message, chat_instance, data)
    world.emit(bot, "callback_query", payload, account.id)
    return query


def block(world: World, bot: Bot, account: Account, blocked: bool = True) -> None:
    """A user blocks (or unblocks) a bot; the bot gets ``my_chat_member`` for the private chat."""
    if (bot.id in account.blocked_bots) == blocked:
        return
    if blocked:
        account.blocked_bots.add(bot.id)
    else:
        account.blocked_bots.discard(bot.id)
    old, new = ("member", "kicked") if blocked else ("kicked", "member")
    payload = private_member_updated(world, account, bot, old, new)
    world.emit(bot, "my_chat_member", payload, account.id)
