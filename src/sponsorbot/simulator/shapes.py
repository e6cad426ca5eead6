"""The Bot API's JSON objects built from world state, every one through the table of types
(:mod:`sponsorbot.simulator.types`), with empty optional fields left out as Telegram does."""

from __future__ import annotations

from typing import Any

from sponsorbot.simulator.types import PERMISSIONS, TYPES, shape
from sponsorbot.simulator.world import (
    CHANNEL_RIGHTS,
    SUPERGROUP_RIGHTS,
    Account,
    Bot,
    Chat,
    File,
    InviteLink,
    Member,
    Message,
    World,
)

# Telegram's default: the number of reactions a member may put on one message.
MAX_REACTION_COUNT = 11
# Telegram lets a new account accept every kind of gift; chats and bots accept none.
ALL_GIFTS = shape(
    "AcceptedGiftTypes",
    unlimited_gifts=True,
    limited_gifts=True,
    unique_gifts=True,
    premium_subscription=True,
    gifts_from_channels=True,
)
NO_GIFTS = shape("AcceptedGiftTypes", **dict.fromkeys(ALL_GIFTS, False))
# A new supergroup's default member permissions: everything allowed.
DEFAULT_PERMISSIONS = shape("ChatPermissions", **dict.fromkeys(PERMISSIONS, True))
# A restricted member's permissions: the simulator restricts everything.
RESTRICTED = dict.fromkeys(PERMISSIONS, False)


# The Bot API type that shows each kind of file (any other kind shows as a Document), and the
# fields of that type a stored File fills, in the table's order (no thumbnail: none are made).
_FILE_TYPES = {"photo": "PhotoSize", "video": "Video"}
_FILE_FIELDS = {
    name: tuple(f for f in TYPES[name] if f in File.__dataclass_fields__)
    for name in ("PhotoSize", "Video", "Document")
}


def file_json(file: File, kind: str) -> dict[str, Any]:
    """PhotoSize, Video or Document: ``kind`` is how the message shows the file."""
    type_name = _FILE_TYPES.get(kind, "Document")
    return shape(type_name, **{f: getattr(file, f) for f in _FILE_FIELDS[type_name]})


def message_json(message: Message, with_reply: bool = True) -> dict[str, Any]:
    """The Message object; channel posts have ``sender_chat`` instead of ``from``. A reply
    carries the message it answers, itself without the one that answers in turn. Built field
    by field, empty ones left out (this runs for every message sent); :func:`shape` checks the
    fields against the table in the tests."""
    out: dict[str, Any] = {"message_id": message.message_id}
    if message.sender is None:
        out["sender_chat"] = message.chat
    else:
        out["from"] = message.sender
    out["chat"] = message.chat
    out["date"] = message.date
    if message.forward_origin is not None:
        out["forward_origin"] = message.forward_origin
    reply_to = message.reply_to
    if with_reply and reply_to is not None and not reply_to.deleted:
        out["reply_to_message"] = message_json(reply_to, with_reply=False)
    if message.edit_date is not None:
        out["edit_date"] = message.edit_date
    if message.protect_content:
        out["has_protected_content"] = True
    if message.text is not None:
        out["text"] = message.text
        if message.entities:
            out["entities"] = message.entities
    if message.media_kind == "photo":
        out["photo"] = [file_json(f, "photo") for f in message.files]
    elif message.media_kind is not None:
        out[message.media_kind] = file_json(message.files[-1], message.media_kind)
    if message.caption:
        out["caption"] = message.caption
        if message.caption_entities:
            out["caption_entities"] = message.caption_entities
    if message.reply_markup is not None:
        out["reply_markup"] = message.reply_markup
    return shape("Message", out)


def forward_origin(source: Message) -> dict[str, Any]:
    """Where a forwarded copy of ``source`` says it came from."""
    if source.sender is not None:
        return shape("MessageOriginUser", date=source.date, sender_user=source.sender)
    return shape(
        "MessageOriginChannel",
        date=source.date,
        chat=source.chat,
        message_id=source.message_id,
    )


def rights_for(chat: Chat) -> tuple[str, ...]:
    """The administrator right fields of this kind of chat."""
    return CHANNEL_RIGHTS if chat.type == "channel" else SUPERGROUP_RIGHTS


def member_json(world: World, chat: Chat, member: Member, viewer_id: int) -> dict[str, Any]:
    """ChatMember by status, with every right field for administrators (every field is there
    in each: they go to :func:`shape` as they are, as this runs for every getChatMember)."""
    user = world.accounts[member.account_id].json()
    status = member.status
    if status == "administrator":
        # Only the creator (or whoever promoted) may edit; the simulator promotes as creator.
        editable = chat.status_of(viewer_id) == "creator"
        # actions.set_member gives an administrator every right of its kind of chat.
        fields = {"user": user, "can_be_edited": editable, **member.rights}
        return shape("ChatMemberAdministrator", fields)
    if status == "member":
        return shape("ChatMemberMember", {"user": user})
    if status == "creator":
        return shape("ChatMemberOwner", {"user": user, "is_anonymous": False})
    if status == "restricted":
        fields = {"user": user, "is_member": True, "until_date": member.until_date, **RESTRICTED}
        return shape("ChatMemberRestricted", fields)
    if status == "kicked":
        return shape("ChatMemberBanned", {"user": user, "until_date": member.until_date})
    return shape("ChatMemberLeft", {"user": user})


def member_or_left(world: World, chat: Chat, account: Account, viewer_id: int) -> dict[str, Any]:
    """The ChatMember of ``account``, a ``left`` one for strangers."""
    member = chat.members.get(account.id) or Member(account.id, "left")
    return member_json(world, chat, member, viewer_id)


def private_member(account: Account, status: str = "member") -> dict[str, Any]:
    """A party to a private chat: ``member``, or ``kicked`` for a bot its user blocked."""
    if status == "kicked":
        return shape("ChatMemberBanned", user=account.json(), until_date=0)
    return shape("ChatMemberMember", user=account.json())


def invite_link_json(world: World, link: InviteLink, viewer_id: int) -> dict[str, Any]:
    """ChatInviteLink; links of other admins are shown cut short, as Telegram does."""
    text = link.link if link.creator_id == viewer_id else link.link[:22] + "..."
    return shape(
        "ChatInviteLink",
        invite_link=text,
        name=link.name,
        creator=world.accounts[link.creator_id].json(),
        expire_date=link.expire_date or None,
        member_limit=link.member_limit or None,
        pending_join_request_count=link.pending or None,
        creates_join_request=link.creates_join_request,
        is_primary=link.is_primary,
        is_revoked=link.is_revoked,
    )


def chat_full_json(chat: Chat, bot: Bot) -> dict[str, Any]:
    """ChatFullInfo of a channel or supergroup as the bot may see it."""
    supergroup = chat.type == "supergroup"
    invite_link = None
    if chat.primary_link and chat.has_right(bot.id, "can_invite_users"):
        invite_link = chat.primary_link
    return shape(
        "ChatFullInfo",
        **chat.store.chat,
        active_usernames=[chat.username] if chat.username else None,
        invite_link=invite_link,
        permissions=DEFAULT_PERMISSIONS if supergroup else None,
        join_by_request=chat.join_by_request and supergroup,
        accepted_gift_types=NO_GIFTS,
        max_reaction_count=MAX_REACTION_COUNT,
        accent_color_id=chat.id % 7,
    )


def private_full_json(account: Account) -> dict[str, Any]:
    """ChatFullInfo of a user's private chat (or a bot's chat with itself)."""
    return shape(
        "ChatFullInfo",
        **account.private_chat_json(),
        can_send_gift=not account.is_bot,
        active_usernames=[account.username] if account.username else None,
        accepted_gift_types=NO_GIFTS if account.is_bot else ALL_GIFTS,
        max_reaction_count=MAX_REACTION_COUNT,
        accent_color_id=account.id % 7,
    )


def chat_member_updated(
    world: World,
    chat: Chat,
    actor: Account,
    old: Member,
    new: Member,
    viewer_id: int,
    invite_link: InviteLink | None = None,
    via_join_request: bool = False,
) -> dict[str, Any]:
    """ChatMemberUpdated as ``viewer_id`` receives it."""
    return shape(
        "ChatMemberUpdated",
        chat=chat.store.chat,
        from_=actor.json(),
        date=world.now(),
        old_chat_member=member_json(world, chat, old, viewer_id),
        new_chat_member=member_json(world, chat, new, viewer_id),
        invite_link=invite_link_json(world, invite_link, viewer_id) if invite_link else None,
        via_join_request=via_join_request,
    )


def private_member_updated(
    world: World, account: Account, bot: Bot, old: str, new: str
) -> dict[str, Any]:
    """The bot's status in its private chat with ``account`` changed (blocked, unblocked)."""
    return shape(
        "ChatMemberUpdated",
        chat=account.private_chat_json(),
        from_=account.json(),
        date=world.now(),
        old_chat_member=private_member(bot.account, old),
        new_chat_member=private_member(bot.account, new),
    )


def join_request_json(
    world: World, chat: Chat, account: Account, date: int, link: InviteLink | None, viewer_id: int
) -> dict[str, Any]:
    """ChatJoinRequest as ``viewer_id`` receives it."""
    return shape(
        "ChatJoinRequest",
        chat=chat.store.chat,
        from_=account.json(),
        user_chat_id=account.id,
        date=date,
        invite_link=invite_link_json(world, link, viewer_id) if link else None,
    )


def callback_query_json(
    query_id: str, account: Account, message: Message, chat_instance: str, data: str
) -> dict[str, Any]:
    """CallbackQuery of a button pressed under a message."""
    return shape(
        "CallbackQuery",
        id=query_id,
        from_=account.json(),
        message=message_json(message),
        chat_instance=chat_instance,
        data=data,
    )
