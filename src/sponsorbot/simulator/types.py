"""The Bot API types the simulator emits, as one table: every field, required or optional.

Every object the simulator answers or sends in an update is built with :func:`shape`, which
(while :func:`check_shapes` is on, as it is in the tests) refuses a field the type does not
have and an object that lacks a required one, so a field cannot be present in one method's
answer and missing from another's (the envelope around a result, and an error with its
``parameters``, are botapi's, not the table's). :func:`problems` checks a whole JSON value
against the table (the tests run it over everything the simulator emits).

Fields and whether they are required follow the Bot API documentation (version 10.3, as
aiogram 3.31 generates its types from it); which fields the server fills, and when, follow
the official ``telegram-bot-api`` server (Client.cpp's Json* builders). A type lists the
optional fields the simulator can fill, not every optional field Telegram has.

A field's kind is ``Integer``, ``Float``, ``String``, ``Boolean``, ``True`` (present only when
true), a type or union name from the tables, ``Array of <kind>``, or a quoted constant (the
status or type a variant of a union always carries, filled in by :func:`shape`). A kind
starting with ``optional`` is an optional field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_USER_FIELDS = {
    "id": "Integer",
    "is_bot": "Boolean",
    "first_name": "String",
    "last_name": "optional String",
    "username": "optional String",
    "language_code": "optional String",
    "is_premium": "optional True",
    "added_to_attachment_menu": "optional True",
}
# getMe answers these for the bot itself, every one of them, true or false.
_BOT_FIELDS = {
    "can_join_groups": "optional Boolean",
    "can_read_all_group_messages": "optional Boolean",
    "supports_inline_queries": "optional Boolean",
    "supports_guest_queries": "optional Boolean",
    "can_connect_to_business": "optional Boolean",
    "has_main_web_app": "optional Boolean",
    "has_topics_enabled": "optional Boolean",
    "allows_users_to_create_topics": "optional Boolean",
    "can_manage_bots": "optional Boolean",
}
_CHAT_FIELDS = {
    "id": "Integer",
    "type": "String",
    "title": "optional String",
    "username": "optional String",
    "first_name": "optional String",
    "last_name": "optional String",
    "is_forum": "optional True",
    "is_direct_messages": "optional True",
}
# A restricted member's permissions are ChatPermissions' fields, all of them required.
PERMISSIONS = (
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
    "can_react_to_messages",
    "can_edit_tag",
    "can_change_info",
    "can_invite_users",
    "can_pin_messages",
    "can_manage_topics",
)
# ChatMemberAdministrator: the rights every chat has (required), then those of one kind of chat.
ADMIN_RIGHTS = (
    "is_anonymous",
    "can_manage_chat",
    "can_delete_messages",
    "can_manage_video_chats",
    "can_restrict_members",
    "can_promote_members",
    "can_change_info",
    "can_invite_users",
    "can_post_stories",
    "can_edit_stories",
    "can_delete_stories",
    "can_send_welcome_messages",
)
CHANNEL_ONLY_RIGHTS = ("can_post_messages", "can_edit_messages", "can_manage_direct_messages")
SUPERGROUP_ONLY_RIGHTS = ("can_pin_messages", "can_manage_topics", "can_manage_tags")
_ENTITY_FIELDS = {
    "type": "String",
    "offset": "Integer",
    "length": "Integer",
    "url": "optional String",
    "user": "optional User",
    "language": "optional String",
    "custom_emoji_id": "optional String",
    "unix_time": "optional Integer",
    "date_time_format": "optional String",
}

TYPES: dict[str, dict[str, str]] = {
    "User": _USER_FIELDS | _BOT_FIELDS,
    "Chat": _CHAT_FIELDS,
    "ChatFullInfo": _CHAT_FIELDS
    | {
        "accent_color_id": "Integer",
        "max_reaction_count": "Integer",
        "accepted_gift_types": "AcceptedGiftTypes",
        "active_usernames": "optional Array of String",
        "bio": "optional String",
        "description": "optional String",
        "invite_link": "optional String",
        "permissions": "optional ChatPermissions",
        "join_to_send_messages": "optional True",
        "join_by_request": "optional True",
        "has_visible_history": "optional True",
        "has_protected_content": "optional True",
        "can_send_gift": "optional True",
        "linked_chat_id": "optional Integer",
    },
    "AcceptedGiftTypes": {
        "unlimited_gifts": "Boolean",
        "limited_gifts": "Boolean",
        "unique_gifts": "Boolean",
        "premium_subscription": "Boolean",
        "gifts_from_channels": "Boolean",
    },
    "ChatPermissions": {name: "optional Boolean" for name in PERMISSIONS},
    "Message": {
        "message_id": "Integer",
        "from": "optional User",
        "sender_chat": "optional Chat",
        "chat": "Chat",
        "date": "Integer",
        "forward_origin": "optional MessageOrigin",
        "reply_to_message": "optional Message",
        "edit_date": "optional Integer",
        "has_protected_content": "optional True",
        "author_signature": "optional String",
        "text": "optional String",
        "entities": "optional Array of MessageEntity",
        "photo": "optional Array of PhotoSize",
        "video": "optional Video",
        "document": "optional Document",
        "caption": "optional String",
        "caption_entities": "optional Array of MessageEntity",
        "show_caption_above_media": "optional True",
        "has_media_spoiler": "optional True",
        "reply_markup": "optional InlineKeyboardMarkup",
    },
    "MessageId": {"message_id": "Integer"},
    "MessageEntity": _ENTITY_FIELDS,
    "PhotoSize": {
        "file_id": "String",
        "file_unique_id": "String",
        "width": "Integer",
        "height": "Integer",
        "file_size": "optional Integer",
    },
    "Video": {
        "file_id": "String",
        "file_unique_id": "String",
        "width": "Integer",
        "height": "Integer",
        "duration": "Integer",
        "thumbnail": "optional PhotoSize",
        "file_name": "optional String",
        "mime_type": "optional String",
        "file_size": "optional Integer",
    },
    "Document": {
        "file_id": "String",
        "file_unique_id": "String",
        "thumbnail": "optional PhotoSize",
        "file_name": "optional String",
        "mime_type": "optional String",
        "file_size": "optional Integer",
    },
    "MessageOriginUser": {"type": '"user"', "date": "Integer", "sender_user": "User"},
    "MessageOriginHiddenUser": {
        "type": '"hidden_user"',
        "date": "Integer",
        "sender_user_name": "String",
    },
    "MessageOriginChat": {
        "type": '"chat"',
        "date": "Integer",
        "sender_chat": "Chat",
        "author_signature": "optional String",
    },
    "MessageOriginChannel": {
        "type": '"channel"',
        "date": "Integer",
        "chat": "Chat",
        "message_id": "Integer",
        "author_signature": "optional String",
    },
    "InlineKeyboardMarkup": {"inline_keyboard": "Array of Array of InlineKeyboardButton"},
    "InlineKeyboardButton": {
        "text": "String",
        "icon_custom_emoji_id": "optional String",
        "style": "optional String",
        "url": "optional String",
        "callback_data": "optional String",
        "web_app": "optional WebAppInfo",
        "login_url": "optional LoginUrl",
        "switch_inline_query": "optional String",
        "switch_inline_query_current_chat": "optional String",
        "switch_inline_query_chosen_chat": "optional SwitchInlineQueryChosenChat",
        "copy_text": "optional CopyTextButton",
        "callback_game": "optional CallbackGame",
        "pay": "optional True",
    },
    "WebAppInfo": {"url": "String"},
    "CopyTextButton": {"text": "String"},
    "LoginUrl": {
        "url": "String",
        "forward_text": "optional String",
        "bot_username": "optional String",
        "request_write_access": "optional Boolean",
    },
    "SwitchInlineQueryChosenChat": {
        "query": "optional String",
        "allow_user_chats": "optional Boolean",
        "allow_bot_chats": "optional Boolean",
        "allow_group_chats": "optional Boolean",
        "allow_channel_chats": "optional Boolean",
    },
    "CallbackGame": {},
    "CallbackQuery": {
        "id": "String",
        "from": "User",
        "message": "optional Message",
        "inline_message_id": "optional String",
        "chat_instance": "String",
        "data": "optional String",
        "game_short_name": "optional String",
    },
    "ChatMemberOwner": {
        "status": '"creator"',
        "user": "User",
        "is_anonymous": "Boolean",
        "custom_title": "optional String",
    },
    "ChatMemberAdministrator": {"status": '"administrator"', "user": "User"}
    | {"can_be_edited": "Boolean"}
    | {right: "Boolean" for right in ADMIN_RIGHTS}
    | {right: "optional Boolean" for right in CHANNEL_ONLY_RIGHTS + SUPERGROUP_ONLY_RIGHTS}
    | {"custom_title": "optional String"},
    "ChatMemberMember": {
        "status": '"member"',
        "user": "User",
        "tag": "optional String",
        "until_date": "optional Integer",
    },
    "ChatMemberRestricted": {"status": '"restricted"', "user": "User", "is_member": "Boolean"}
    | {permission: "Boolean" for permission in PERMISSIONS}
    | {"until_date": "Integer", "tag": "optional String"},
    "ChatMemberLeft": {"status": '"left"', "user": "User"},
    "ChatMemberBanned": {"status": '"kicked"', "user": "User", "until_date": "Integer"},
    "ChatMemberUpdated": {
        "chat": "Chat",
        "from": "User",
        "date": "Integer",
        "old_chat_member": "ChatMember",
        "new_chat_member": "ChatMember",
        "invite_link": "optional ChatInviteLink",
        "via_join_request": "optional True",
        "via_chat_folder_invite_link": "optional True",
    },
    "ChatJoinRequest": {
        "chat": "Chat",
        "from": "User",
        "user_chat_id": "Integer",
        "date": "Integer",
        "bio": "optional String",
        "invite_link": "optional ChatInviteLink",
    },
    "ChatInviteLink": {
        "invite_link": "String",
        "creator": "User",
        "creates_join_request": "Boolean",
        "is_primary": "Boolean",
        "is_revoked": "Boolean",
        "name": "optional String",
        "expire_date": "optional Integer",
        "member_limit": "optional Integer",
        "pending_join_request_count": "optional Integer",
    },
    "WebhookInfo": {
        "url": "String",
        "has_custom_certificate": "Boolean",
        "pending_update_count": "Integer",
        "ip_address": "optional String",
        "last_error_date": "optional Integer",
        "last_error_message": "optional String",
        "last_synchronization_error_date": "optional Integer",
        "max_connections": "optional Integer",
        "allowed_updates": "optional Array of String",
    },
    "Update": {
        "update_id": "Integer",
        "message": "optional Message",
        "edited_message": "optional Message",
        "channel_post": "optional Message",
        "edited_channel_post": "optional Message",
        "callback_query": "optional CallbackQuery",
        "my_chat_member": "optional ChatMemberUpdated",
        "chat_member": "optional ChatMemberUpdated",
        "chat_join_request": "optional ChatJoinRequest",
    },
}

# Unions: the field that tells the variants apart, and the variant for each of its values.
UNIONS: dict[str, tuple[str, dict[str, str]]] = {
    "ChatMember": (
        "status",
        {
            "creator": "ChatMemberOwner",
            "administrator": "ChatMemberAdministrator",
            "member": "ChatMemberMember",
            "restricted": "ChatMemberRestricted",
            "left": "ChatMemberLeft",
            "kicked": "ChatMemberBanned",
        },
    ),
    "MessageOrigin": (
        "type",
        {
            "user": "MessageOriginUser",
            "hidden_user": "MessageOriginHiddenUser",
            "chat": "MessageOriginChat",
            "channel": "MessageOriginChannel",
        },
    ),
}

# What each method of the simulator's registry answers.
RESULTS: dict[str, str] = {
    "getMe": "User",
    "getUpdates": "Array of Update",
    "setWebhook": "True",
    "deleteWebhook": "True",
    "getWebhookInfo": "WebhookInfo",
    "answerCallbackQuery": "True",
    "sendMessage": "Message",
    "sendPhoto": "Message",
    "sendVideo": "Message",
    "sendDocument": "Message",
    "copyMessage": "MessageId",
    "forwardMessage": "Message",
    "editMessageText": "Message",
    "editMessageReplyMarkup": "Message",
    "deleteMessage": "True",
    "getChat": "ChatFullInfo",
    "getChatMember": "ChatMember",
    "getChatAdministrators": "Array of ChatMember",
    "getChatMemberCount": "Integer",
    "createChatInviteLink": "ChatInviteLink",
    "revokeChatInviteLink": "ChatInviteLink",
    "exportChatInviteLink": "String",
    "approveChatJoinRequest": "True",
    "declineChatJoinRequest": "True",
}

_SCALARS = frozenset({"Integer", "Float", "String", "Boolean", "True"})
_OPTIONAL = "optional "
_ARRAY = "Array of "


class ShapeError(ValueError):
    """An object that does not fit its type: a bug in the simulator, never a client's fault."""


@dataclass(frozen=True, slots=True)
class _Spec:
    """One type of the table, read for fast building."""

    fields: dict[str, str]
    required: frozenset[str]
    constants: dict[str, str]
    empty_left_out: frozenset[str]  # arrays left out when empty, ``True`` fields when false


def _read(kind: str) -> tuple[bool, str]:
    """Whether a field is optional, and its kind without the word."""
    if kind.startswith(_OPTIONAL):
        return True, kind[len(_OPTIONAL) :]
    return False, kind


def _compile() -> dict[str, _Spec]:
    specs: dict[str, _Spec] = {}
    for name, fields in TYPES.items():
        kinds = {field: _read(kind)[1] for field, kind in fields.items()}
        required = frozenset(f for f, kind in fields.items() if not _read(kind)[0])
        constants = {f: k.strip('"') for f, k in kinds.items() if k.startswith('"')}
        empty = frozenset(f for f, k in kinds.items() if k == "True" or k.startswith(_ARRAY))
        specs[name] = _Spec(kinds, required, constants, empty)
    return specs


_SPECS = _compile()
# Whether shape() checks what it builds: the tests turn it on (and check every answer and
# update against the table besides); the simulator itself builds without, as every object
# of every answer goes through here.
_checking = False


def check_shapes(enabled: bool) -> bool:
    """Make :func:`shape` refuse objects that do not fit the table (or stop it); returns the
    setting it had."""
    global _checking
    previous, _checking = _checking, enabled
    return previous


def shape(type_name: str, given: dict[str, Any] | None = None, /, **values: Any) -> dict[str, Any]:
    """The JSON object of ``type_name`` from ``values`` (``from_`` names the field ``from``)
    and ``given``: fields already left out where empty, none of them None (an administrator's
    rights, a message built field by field); a ``given`` dict may come back as the object.

    Fields in ``values`` given as None, an empty array, or False for a ``True`` field are left
    out, as Telegram leaves them out (an empty string is a value: a switch-inline button's
    query); constants (a ChatMember's status) are filled in. While :func:`check_shapes` is on,
    raises :class:`ShapeError` for a field the type lacks or a required field left out.
    """
    spec = _SPECS[type_name]
    out = given if given is not None else {}
    if values:
        if "from_" in values:
            values["from"] = values.pop("from_")
        # One pass in a comprehension: this runs for every object of every answer and update.
        empty_left_out = spec.empty_left_out
        filtered = {
            name: value
            for name, value in values.items()
            if value is not None and (value or name not in empty_left_out)
        }
        out = {**out, **filtered} if out else filtered
    if spec.constants:
        out = {**spec.constants, **out}
    if _checking:
        _check(type_name, spec, out, given or {})
    return out


def _check(type_name: str, spec: _Spec, out: dict[str, Any], given: dict[str, Any]) -> None:
    empty = sorted(name for name, value in given.items() if value is None)
    if empty:
        raise ShapeError(f"{type_name} was given no value for {', '.join(empty)}")
    if not out.keys() <= spec.fields.keys():
        unknown = sorted(out.keys() - spec.fields.keys())
        raise ShapeError(f"{type_name} has no field {', '.join(map(repr, unknown))}")
    missing = spec.required - out.keys() - spec.constants.keys()
    if missing:
        raise ShapeError(f"{type_name} lacks required {', '.join(sorted(missing))}")


def problems(kind: str, value: Any, path: str = "$") -> list[str]:
    """Everything wrong with ``value`` as a ``kind`` (a kind of the table), with JSON paths."""
    if kind.startswith(_ARRAY):
        if not isinstance(value, list):
            return [f"{path}: expected an array, got {type(value).__name__}"]
        item = kind[len(_ARRAY) :]
        return [p for i, v in enumerate(value) for p in problems(item, v, f"{path}[{i}]")]
    if kind in _SCALARS or kind.startswith('"'):
        return [] if _scalar_fits(kind, value) else [f"{path}: {value!r} is not {kind}"]
    if kind in UNIONS:
        key, variants = UNIONS[kind]
        variant = variants.get(str(value.get(key))) if isinstance(value, dict) else None
        if variant is None:
            return [f"{path}: no {kind} variant for {key}={_peek(value, key)!r}"]
        return problems(variant, value, path)
    spec = _SPECS.get(kind)
    if spec is None:
        raise ShapeError(f"the table has no type {kind!r}")
    if not isinstance(value, dict):
        return [f"{path}: expected {kind}, got {type(value).__name__}"]
    found = [f"{path}: {kind} lacks required {f!r}" for f in sorted(spec.required - value.keys())]
    for name, field_value in value.items():
        field_kind = spec.fields.get(name)
        if field_kind is None:
            found.append(f"{path}: {kind} has no field {name!r}")
        else:
            found.extend(problems(field_kind, field_value, f"{path}.{name}"))
    return found


def _peek(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else value


def _scalar_fits(kind: str, value: Any) -> bool:
    if kind.startswith('"'):
        return bool(value == kind.strip('"'))
    if kind == "Boolean":
        return isinstance(value, bool)
    if kind == "True":
        return value is True
    if kind == "String":
        return isinstance(value, str)
    if kind == "Integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, int | float) and not isinstance(value, bool)
