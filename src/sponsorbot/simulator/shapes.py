"""The Bot API's JSON objects, built from world state with empty optional fields left out."""

from __future__ import annotations

from typing import Any

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

# A restricted member's permissions; the simulator restricts everything.
RESTRICTED_PERMISSIONS = (
    "can_send_messages",
    "can_send_audios",
    "can_send_documents",
    "can_send_photos",
    "can_send_videos",
    "can_send_video_notes",
    "can_send_voice_notes",
    "can_send_polls",
    "can_send_other_messages",
    "can_add_web_page_previews",
    "can_change_info",
    "can_invite_users",
    "can_pin_messages",
    "can_manage_topics",
)


def file_json(file: File) -> dict[str, Any]:
    """PhotoSize, Video or Document, depending on the file's kind."""
    out: dict[str, Any] = {"file_id": file.file_id, "file_unique_id": file.file_unique_id}
    if file.kind in ("photo", "video"):
        out["width"] = file.width
        out["height"] = file.height
    if file.kind == "video":
        out["duration"] = file.duration
    if file.file_name:
        out["file_name"] = file.file_name
    if file.mime_type:
        out["mime_type"] = file.mime_type
    out["file_size"] = file.file_size
    return out


def message_json(message: Message) -> dict[str, Any]:
    """The Message object."""
    out: dict[str, Any] = {"message_id": message.message_id}
    if message.sender is not None:
        out["from"] = message.sender
    else:
        out["sender_chat"] = message.chat
    out["chat"] = message.chat
    out["date"] = message.date
    if message.forward_origin is not None:
        out["forward_origin"] = message.forward_origin
    if message.edit_date is not None:
        out["edit_date"] = message.edit_date
    if message.protect_content:
        out["has_protected_content"] = True
    if message.text is not None:
        out["text"] = message.text
        if message.entities:
            out["entities"] = message.entities
    if message.media_kind == "photo":
        out["photo"] = [file_json(f) for f in message.files]
    elif message.media_kind is not None:
        out[message.media_kind] = file_json(message.files[-1])
    if message.caption:
        out["caption"] = message.caption
        if message.caption_entities:
            out["caption_entities"] = message.caption_entities
    if message.reply_markup is not None:
        out["reply_markup"] = message.reply_markup
    return out


def rights_for(chat: Chat) -> tuple[str, ...]:
    """The administrator right fields of this kind of chat."""
    return CHANNEL_RIGHTS if chat.type == "channel" else SUPERGROUP_RIGHTS


def member_json(world: World, chat: Chat, member: Member, viewer_id: int) -> dict[str, Any]:
    """ChatMember by status, with every right field for administrators."""
    account = world.accounts[member.account_id]
    out: dict[str, Any] = {"user": account.json(), "status": member.status}
    if member.status == "creator":
        out["is_anonymous"] = False
    elif member.status == "administrator":
        # Only the creator (or whoever promoted) may edit; the simulator promotes as creator.
        out["can_be_edited"] = chat.status_of(viewer_id) == "creator"
        for right in rights_for(chat):
            out[right] = member.rights.get(right, False)
    elif member.status == "restricted":
        out["is_member"] = True
        for permission in RESTRICTED_PERMISSIONS:
            out[permission] = False
        out["until_date"] = member.until_date
    elif member.status == "kicked":
        out["until_date"] = member.until_date
    return out


def member_or_left(world: World, chat: Chat, account: Account, viewer_id: int) -> dict[str, Any]:
    """The ChatMember of ``account``, a ``left`` one for strangers."""
    member = chat.members.get(account.id) or Member(account.id, "left")
    return member_json(world, chat, member, viewer_id)


def invite_link_json(world: World, link: InviteLink, viewer_id: int) -> dict[str, Any]:
    """ChatInviteLink; links of other admins are shown cut short, as Telegram does."""
    text = link.link if link.creator_id == viewer_id else link.link[:22] + "..."
    out: dict[str, Any] = {
        "invite_link": text,
        "creator": world.accounts[link.creator_id].json(),
        "creates_join_request": link.creates_join_request,
        "is_primary": link.is_primary,
        "is_revoked": link.is_revoked,
    }
    if link.name:
        out["name"] = link.name
    if link.expire_date is not None:
        out["expire_date"] = link.expire_date
    if link.member_limit is not None:
        out["member_limit"] = link.member_limit
    if link.creates_join_request:
        out["pending_join_request_count"] = link.pending
    return out


def chat_full_json(world: World, chat: Chat, bot: Bot) -> dict[str, Any]:
    """ChatFullInfo of a channel or supergroup as the bot may see it."""
    out: dict[str, Any] = dict(chat.store.chat)
    out["accent_color_id"] = chat.id % 7
    out["max_reaction_count"] = 11
    if chat.join_by_request and chat.type == "supergroup":
        out["join_by_request"] = True
    if chat.primary_link and chat.has_right(bot.id, "can_invite_users"):
        out["invite_link"] = chat.primary_link
    return out


def private_full_json(account: Account) -> dict[str, Any]:
    """ChatFullInfo of a user's private chat."""
    out = account.private_chat_json()
    out["accent_color_id"] = account.id % 7
    out["max_reaction_count"] = 11
    return out


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
    out: dict[str, Any] = {
        "chat": chat.store.chat,
        "from": actor.json(),
        "date": world.now(),
        "old_chat_member": member_json(world, chat, old, viewer_id),
        "new_chat_member": member_json(world, chat, new, viewer_id),
    }
    if invite_link is not None:
        out["invite_link"] = invite_link_json(world, invite_link, viewer_id)
    if via_join_request:
        out["via_join_request"] = True
    return out
