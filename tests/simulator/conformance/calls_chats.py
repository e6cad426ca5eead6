"""The calls about the bot itself, its updates and webhook, and about chats: members,
administrators, invite links and join requests, each with typical and edge arguments (see
cases.py)."""

from __future__ import annotations

from collections.abc import Callable

from tests.simulator.conformance.spec import (
    ALL_UPDATES,
    Call,
    Ctx,
    Expect,
    bad,
    equals,
    forbidden,
    keep,
)
from tests.simulator.conformance.wire import Control


def _request(chat: str) -> Callable[[Ctx, Control], None]:
    def ask(ctx: Ctx, ctl: Control) -> None:
        ctx["requester"] = ctl.user("Asker")
        ctl.act("request_join", user_id=ctx["requester"], chat_id=ctx[chat])

    return ask


BOT_CALLS: tuple[Call, ...] = (
    # The bot itself, its updates and its webhook.
    Call("getMe/typical", "getMe", lambda c: {}),
    Call("getUpdates/typical", "getUpdates", lambda c: {"timeout": 0, "limit": 5}),
    Call("getUpdates/negative_offset", "getUpdates", lambda c: {"offset": -1, "timeout": 0}),
    Call(
        "getUpdates/allowed_updates",
        "getUpdates",
        lambda c: {"timeout": 0, "allowed_updates": ALL_UPDATES},
    ),
    Call(
        "getUpdates/offset_beyond",
        "getUpdates",
        lambda c: {"offset": 2**31 - 1, "timeout": 0},
        Expect(check=equals("", [])),
    ),
    Call("getWebhookInfo/none", "getWebhookInfo", lambda c: {}),
    Call("setWebhook/not_http", "setWebhook", lambda c: {"url": "ftp://example.com/hook"}, bad()),
    Call(
        "setWebhook/typical",
        "setWebhook",
        lambda c: {
            "url": c["dead_hook"],
            "secret_token": "s3cret_-X",
            "max_connections": 10,
            "allowed_updates": ["message", "chat_member"],
            "drop_pending_updates": True,
        },
    ),
    Call(
        "getUpdates/while_webhook",
        "getUpdates",
        lambda c: {"timeout": 0},
        Expect(
            "conflict",
            "Conflict: can't use getUpdates method while webhook is active; "
            "use deleteWebhook to delete the webhook first",
        ),
    ),
    Call(
        "getWebhookInfo/failing",
        "getWebhookInfo",
        lambda c: {},
        before=lambda c, ctl: ctl.act("send_text", user_id=c["user"], bot=c["bot"], text="hi"),
    ),
    Call(
        "setWebhook/bad_secret",
        "setWebhook",
        lambda c: {"url": c["dead_hook"], "secret_token": "not allowed!"},
        bad("secret token contains unallowed characters"),
    ),
    Call("deleteWebhook/typical", "deleteWebhook", lambda c: {"drop_pending_updates": True}),
    Call("deleteWebhook/again", "deleteWebhook", lambda c: {}),
)
CHAT_CALLS: tuple[Call, ...] = (
    # Chats.
    Call("getChat/private", "getChat", lambda c: {"chat_id": c["user"]}),
    Call("getChat/channel", "getChat", lambda c: {"chat_id": "@" + c["channel_username"]}),
    Call("getChat/private_channel", "getChat", lambda c: {"chat_id": c["private_channel"]}),
    Call("getChat/supergroup", "getChat", lambda c: {"chat_id": c["supergroup"]}),
    Call("getChat/outsider", "getChat", lambda c: {"chat_id": c["outside"]}),
    Call(
        "getChat/unknown", "getChat", lambda c: {"chat_id": -1009999999999}, bad("chat not found")
    ),
    Call(
        "getChat/retry_after",
        "getChat",
        lambda c: {"chat_id": c["channel"]},
        Expect("retry_after", "Too Many Requests: retry after 7", retry_after=7),
        before=lambda c, ctl: ctl.act("faults", method="getChat", force_429_next=1, retry_after=7),
    ),
    Call(
        "getChat/server_error",
        "getChat",
        lambda c: {"chat_id": c["channel"]},
        Expect("server_error", "Internal Server Error"),
        before=lambda c, ctl: ctl.act("faults", method="getChat", error_rate=1, status=500),
        after=lambda c, ctl: ctl.act("faults/clear"),
    ),
    Call(
        "getChatMember/self_admin",
        "getChatMember",
        lambda c: {"chat_id": c["channel"], "user_id": c["bot"]},
        Expect(check=equals("status", "administrator")),
    ),
    Call(
        "getChatMember/creator",
        "getChatMember",
        lambda c: {"chat_id": c["channel"], "user_id": c["owner"]},
        Expect(check=equals("status", "creator")),
    ),
    Call(
        "getChatMember/member",
        "getChatMember",
        lambda c: {"chat_id": c["channel"], "user_id": c["member"]},
        Expect(check=equals("status", "member")),
    ),
    Call(
        "getChatMember/admin_user",
        "getChatMember",
        lambda c: {"chat_id": c["supergroup"], "user_id": c["admin_user"]},
        Expect(check=equals("status", "administrator")),
    ),
    Call(
        "getChatMember/restricted",
        "getChatMember",
        lambda c: {"chat_id": c["supergroup"], "user_id": c["restricted"]},
        Expect(check=equals("status", "restricted")),
    ),
    Call(
        "getChatMember/banned",
        "getChatMember",
        lambda c: {"chat_id": c["supergroup"], "user_id": c["banned"]},
        Expect(check=equals("status", "kicked")),
    ),
    Call(
        "getChatMember/stranger",
        "getChatMember",
        lambda c: {"chat_id": c["channel"], "user_id": c["stranger"]},
        Expect(check=equals("status", "left")),
    ),
    Call(
        "getChatMember/private",
        "getChatMember",
        lambda c: {"chat_id": c["user"], "user_id": c["user"]},
        Expect(check=equals("status", "member")),
    ),
    Call(
        "getChatMember/private_self",
        "getChatMember",
        lambda c: {"chat_id": c["user"], "user_id": c["bot"]},
        Expect(check=equals("status", "member")),
    ),
    Call(
        "getChatMember/not_admin",
        "getChatMember",
        lambda c: {"chat_id": c["outside"], "user_id": c["user"]},
        bad("member list is inaccessible"),
    ),
    Call(
        "getChatAdministrators/channel",
        "getChatAdministrators",
        lambda c: {"chat_id": c["channel"]},
    ),
    Call(
        "getChatAdministrators/supergroup",
        "getChatAdministrators",
        lambda c: {"chat_id": c["supergroup"]},
    ),
    Call(
        "getChatAdministrators/private",
        "getChatAdministrators",
        lambda c: {"chat_id": c["user"]},
        bad("there are no administrators in the private chat"),
    ),
    Call(
        "getChatMemberCount/channel",
        "getChatMemberCount",
        lambda c: {"chat_id": c["channel"]},
    ),
    Call(
        "getChatMemberCount/private",
        "getChatMemberCount",
        lambda c: {"chat_id": c["user"]},
        Expect(check=equals("", 2)),
    ),
    # Invite links and join requests.
    Call(
        "exportChatInviteLink/typical",
        "exportChatInviteLink",
        lambda c: {"chat_id": c["channel"]},
    ),
    Call(
        "createChatInviteLink/typical",
        "createChatInviteLink",
        lambda c: {"chat_id": c["channel"]},
        keep=keep("link", "invite_link"),
    ),
    Call(
        "createChatInviteLink/limited",
        "createChatInviteLink",
        lambda c: {
            "chat_id": c["channel"],
            "name": "Spring",
            "member_limit": 10,
            "expire_date": c["now"] + 86400,
        },
    ),
    Call(
        "createChatInviteLink/join_request",
        "createChatInviteLink",
        lambda c: {"chat_id": c["channel"], "creates_join_request": True, "name": "Ask"},
    ),
    Call(
        # tdlib cuts a link's name to 32 characters (clean_name, MAX_INVITE_LINK_TITLE_LENGTH).
        "createChatInviteLink/name_cut",
        "createChatInviteLink",
        lambda c: {"chat_id": c["channel"], "name": "n" * 40},
        Expect(check=equals("name", "n" * 32)),
    ),
    Call(
        "createChatInviteLink/limit_with_request",
        "createChatInviteLink",
        lambda c: {"chat_id": c["channel"], "member_limit": 5, "creates_join_request": True},
        bad(),
    ),
    Call(
        "createChatInviteLink/not_member",
        "createChatInviteLink",
        lambda c: {"chat_id": c["outside"]},
        forbidden("Forbidden: bot is not a member of the channel chat"),
    ),
    Call(
        "createChatInviteLink/no_right",
        "createChatInviteLink",
        lambda c: {"chat_id": c["no_invite"]},
        bad("not enough rights to manage chat invite link"),
    ),
    Call(
        "revokeChatInviteLink/typical",
        "revokeChatInviteLink",
        lambda c: {"chat_id": c["channel"], "invite_link": c["link"]},
        Expect(check=equals("is_revoked", True)),
    ),
    Call(
        "revokeChatInviteLink/unknown",
        "revokeChatInviteLink",
        lambda c: {"chat_id": c["channel"], "invite_link": "https://t.me/+nothing0here00000"},
        bad(),
    ),
    Call(
        "approveChatJoinRequest/typical",
        "approveChatJoinRequest",
        lambda c: {"chat_id": c["requests"], "user_id": c["requester"]},
        before=_request("requests"),
    ),
    Call(
        "approveChatJoinRequest/none_pending",
        "approveChatJoinRequest",
        lambda c: {"chat_id": c["requests"], "user_id": c["stranger"]},
        bad("HIDE_REQUESTER_MISSING"),
    ),
    Call(
        "declineChatJoinRequest/typical",
        "declineChatJoinRequest",
        lambda c: {"chat_id": c["requests"], "user_id": c["requester"]},
        before=_request("requests"),
    ),
    Call(
        "declineChatJoinRequest/none_pending",
        "declineChatJoinRequest",
        lambda c: {"chat_id": c["requests"], "user_id": c["requester"]},
        bad("HIDE_REQUESTER_MISSING"),
    ),
    # Errors of any method.
    Call(
        "getMe/bad_token",
        "getMe",
        lambda c: {},
        Expect("unauthorized", "Unauthorized"),
        bad_token=True,
    ),
)
