"""Things that happen in the world, each sending the bot its updates: every kind of update
the simulator sends, in the situations a bot meets (see cases.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.simulator.conformance.calls_messages import KEYBOARD
from tests.simulator.conformance.spec import Ctx, Event, ends_as, entity_types
from tests.simulator.conformance.wire import Control


def _text(text: str) -> Callable[[Ctx, Control], None]:
    def send(ctx: Ctx, ctl: Control) -> None:
        ctl.act("send_text", user_id=ctx["user"], bot=ctx["bot"], text=text)

    return send


def _file(kind: str, **extra: Any) -> Callable[[Ctx, Control], None]:
    def send(ctx: Ctx, ctl: Control) -> None:
        ctl.act("send_file", user_id=ctx["user"], bot=ctx["bot"], kind=kind, **extra)

    return send


def _start(ctx: Ctx, ctl: Control) -> None:
    """A newcomer opens the bot's start link with a payload."""
    ctl.act("open_link", user_id=ctl.user("Newcomer"), bot=ctx["bot"], payload="ref_42")


def _pressed(ctx: Ctx, ctl: Control) -> None:
    """The bot sends a keyboard; the visitor presses its callback button."""
    sent = ctl.bot_api(
        ctx["token"], "sendMessage", chat_id=ctx["user"], text="Go?", reply_markup=KEYBOARD
    )
    ctl.act(
        "press_button",
        user_id=ctx["user"],
        bot=ctx["bot"],
        message_id=sent["message_id"],
        callback_data="done",
    )


def _bot_admin(chat_type: str, **rights: bool) -> Callable[[Ctx, Control], None]:
    def promote(ctx: Ctx, ctl: Control) -> None:
        chat = ctl.chat("Promoting", type=chat_type)
        ctl.admin(chat["id"], ctx["bot"], **rights)

    return promote


def _bot_demoted(remove: bool) -> Callable[[Ctx, Control], None]:
    def demote(ctx: Ctx, ctl: Control) -> None:
        chat = ctl.chat("Demoting")
        ctl.admin(chat["id"], ctx["bot"])
        ctl.act("admins/remove", chat_id=chat["id"], member_id=ctx["bot"], remove=remove)

    return demote


def _blocked(ctx: Ctx, ctl: Control) -> None:
    user = ctl.started(ctx["bot"])
    ctl.act("block", user_id=user, bot=ctx["bot"], blocked=True)


def _unblocked(ctx: Ctx, ctl: Control) -> None:
    user = ctl.started(ctx["bot"])
    ctl.act("block", user_id=user, bot=ctx["bot"], blocked=True)
    ctl.act("block", user_id=user, bot=ctx["bot"], blocked=False)


def _joins(
    chat: str, then: str | None = None, promote: bool = False
) -> Callable[[Ctx, Control], None]:
    def join(ctx: Ctx, ctl: Control) -> None:
        user = ctl.user("Joiner")
        ctl.act("join", user_id=user, chat_id=ctx[chat])
        if then == "left":
            ctl.act("leave", user_id=user, chat_id=ctx[chat])
        elif then is not None:
            ctl.act("status", chat_id=ctx[chat], member_id=user, status=then)
        if promote:
            ctl.admin(ctx[chat], user, can_invite_users=True)

    return join


def _joins_by_link(ctx: Ctx, ctl: Control) -> None:
    link = ctl.bot_api(ctx["token"], "createChatInviteLink", chat_id=ctx["channel"], name="Ev")
    ctl.act("join", user_id=ctl.user("Linked"), invite_link=link["invite_link"])


def _asks(by_link: bool) -> Callable[[Ctx, Control], None]:
    def ask(ctx: Ctx, ctl: Control) -> None:
        user = ctl.user("Asker")
        if by_link:
            link = ctl.bot_api(
                ctx["token"],
                "createChatInviteLink",
                chat_id=ctx["channel"],
                creates_join_request=True,
            )
            ctl.act("join", user_id=user, invite_link=link["invite_link"])
        else:
            ctl.act("request_join", user_id=user, chat_id=ctx["requests"])

    return ask


def _approved(ctx: Ctx, ctl: Control) -> None:
    user = ctl.user("Approved")
    ctl.act("request_join", user_id=user, chat_id=ctx["requests"])
    ctl.bot_api(ctx["token"], "approveChatJoinRequest", chat_id=ctx["requests"], user_id=user)


EVENTS: tuple[Event, ...] = (
    Event("message/start", ("message",), _start, entity_types("bot_command")),
    Event("message/text", ("message",), _text("just words")),
    Event(
        "message/auto_entities",
        ("message",),
        _text("/help https://example.com @durov #tag"),
        entity_types("bot_command", "url", "mention", "hashtag"),
    ),
    Event("message/photo", ("message",), _file("photo", caption="A photo")),
    Event("message/video", ("message",), _file("video")),
    Event("message/document", ("message",), _file("document", file_name="a.pdf", caption="PDF")),
    Event("callback_query/pressed", ("callback_query",), _pressed),
    Event("my_chat_member/channel_admin", ("my_chat_member",), _bot_admin("channel")),
    Event("my_chat_member/supergroup_admin", ("my_chat_member",), _bot_admin("supergroup")),
    Event(
        "my_chat_member/few_rights",
        ("my_chat_member",),
        _bot_admin("channel", can_post_messages=False, can_invite_users=True),
    ),
    Event(
        "my_chat_member/demoted",
        ("my_chat_member", "my_chat_member"),
        _bot_demoted(remove=False),
        ends_as("member"),
    ),
    Event(
        "my_chat_member/removed",
        ("my_chat_member", "my_chat_member"),
        _bot_demoted(remove=True),
        ends_as("left"),
    ),
    Event("my_chat_member/blocked", ("message", "my_chat_member"), _blocked),
    Event(
        "my_chat_member/unblocked",
        ("message", "my_chat_member", "my_chat_member"),
        _unblocked,
        ends_as("member"),
    ),
    Event("chat_member/joined_channel", ("chat_member",), _joins("channel")),
    Event("chat_member/joined_supergroup", ("chat_member",), _joins("supergroup")),
    Event("chat_member/joined_by_link", ("chat_member",), _joins_by_link),
    Event("chat_member/left", ("chat_member", "chat_member"), _joins("supergroup", "left")),
    Event(
        "chat_member/restricted",
        ("chat_member", "chat_member"),
        _joins("supergroup", "restricted"),
        ends_as("restricted"),
    ),
    Event(
        "chat_member/banned",
        ("chat_member", "chat_member"),
        _joins("supergroup", "kicked"),
        ends_as("kicked"),
    ),
    Event(
        "chat_member/promoted_supergroup",
        ("chat_member", "chat_member"),
        _joins("supergroup", promote=True),
        ends_as("administrator"),
    ),
    Event(
        "chat_member/promoted_channel",
        ("chat_member", "chat_member"),
        _joins("channel", promote=True),
        ends_as("administrator"),
    ),
    Event("chat_member/approved", ("chat_join_request", "chat_member"), _approved),
    Event("chat_join_request/direct", ("chat_join_request",), _asks(by_link=False)),
    Event("chat_join_request/by_link", ("chat_join_request",), _asks(by_link=True)),
)
