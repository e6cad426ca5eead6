"""Everything the simulator emits in its flows fits the table of Bot API types.

The conftest checks every answer (``Sim.api``) and every webhook delivery (``receiver``); this
walk goes through every method of the registry and every kind of update the simulator sends,
by getUpdates and by webhook, so each shape is seen at least once.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sponsorbot.simulator.types import PERMISSIONS
from tests.simulator.conftest import Receiver, Scene, Sim

ALL_KINDS = ["message", "callback_query", "my_chat_member", "chat_member", "chat_join_request"]
EVERY_BUTTON = {
    "inline_keyboard": [
        [{"text": "data", "callback_data": "go"}, {"text": "site", "url": "https://example.com"}],
        [
            {"text": "copy", "copy_text": {"text": "code"}},
            {"text": "app", "web_app": {"url": "https://a.io"}},
        ],
        [{"text": "login", "login_url": {"url": "https://example.com/login"}}],
        [
            {"text": "share", "switch_inline_query": "q"},
            {"text": "here", "switch_inline_query_current_chat": ""},
        ],
        [
            {
                "text": "pick",
                "switch_inline_query_chosen_chat": {"query": "q", "allow_user_chats": True},
            }
        ],
        [{"text": "profile", "url": "tg://user?id=42"}],
    ]
}


async def test_every_method_and_update_kind_fits_the_table(sim: Sim, scene: Scene) -> None:
    token, uid, bot_id = scene.token, scene.user["id"], scene.bot["id"]
    channel = scene.channel["id"]
    await sim.control.set_limits(per_bot_per_second=1000, per_chat_per_second=1000)
    await sim.updates(token, allowed_updates=ALL_KINDS)
    group = (await sim.control.create_channel("Club", "club", chat_type="supergroup"))["id"]
    await sim.control.make_admin(group, bot_id)

    await sim.ok(token, "getMe")
    for chat in (uid, channel, group, "@news"):
        await sim.ok(token, "getChat", chat_id=chat)
    await sim.control.send_text(uid, "gate_bot", "hello")
    photo = (await sim.control.send_file(uid, "gate_bot", "photo"))["file_id"]
    video = (await sim.control.send_file(uid, "gate_bot", "video", "clip.mp4"))["file_id"]
    document = (await sim.control.send_file(uid, "gate_bot", "document", "a.pdf", "cap"))["file_id"]

    sent = await sim.ok(token, "sendMessage", chat_id=uid, text="menu", reply_markup=EVERY_BUTTON)
    await sim.ok(token, "sendPhoto", chat_id=uid, photo=photo, caption="p")
    await sim.ok(token, "sendVideo", chat_id=uid, video=video)
    await sim.ok(token, "sendDocument", chat_id=uid, document=document, protect_content=True)
    await sim.ok(token, "copyMessage", chat_id=uid, from_chat_id=uid, message_id=1)
    await sim.ok(token, "forwardMessage", chat_id=uid, from_chat_id=uid, message_id=1)
    post = await sim.ok(token, "sendMessage", chat_id=channel, text="post")
    await sim.ok(
        token, "forwardMessage", chat_id=uid, from_chat_id=channel, message_id=post["message_id"]
    )
    mid = sent["message_id"]
    await sim.ok(token, "editMessageText", chat_id=uid, message_id=mid, text="menu 2")
    await sim.ok(
        token, "editMessageReplyMarkup", chat_id=uid, message_id=mid, reply_markup=EVERY_BUTTON
    )
    query = await sim.control.press_button(uid, "gate_bot", mid, "go")
    await sim.ok(token, "answerCallbackQuery", callback_query_id=query, text="ok")
    await sim.ok(token, "deleteMessage", chat_id=uid, message_id=mid)

    others = [(await sim.control.create_user(name))["id"] for name in ("Bo", "Cy", "Di")]
    for other in others:
        await sim.control.join(other, group)
    await sim.control.set_status(group, others[0], "restricted")
    await sim.control.set_status(group, others[1], "kicked")
    await sim.control.leave(others[2], group)
    for chat in (channel, group):
        await sim.ok(token, "getChatAdministrators", chat_id=chat)
        await sim.ok(token, "getChatMemberCount", chat_id=chat)
        for member in (uid, bot_id, scene.channel["owner_id"], *others):
            await sim.ok(token, "getChatMember", chat_id=chat, user_id=member)
    await sim.ok(token, "getChatMemberCount", chat_id=uid)
    await sim.ok(token, "getChatMember", chat_id=uid, user_id=bot_id)

    link = await sim.ok(
        token, "createChatInviteLink", chat_id=channel, name="vip", creates_join_request=True
    )
    await sim.control.join(uid, invite_link=link["invite_link"])
    await sim.ok(token, "approveChatJoinRequest", chat_id=channel, user_id=uid)
    await sim.control.request_join(others[2], channel)
    await sim.ok(token, "declineChatJoinRequest", chat_id=channel, user_id=others[2])
    await sim.ok(token, "revokeChatInviteLink", chat_id=channel, invite_link=link["invite_link"])
    await sim.ok(token, "exportChatInviteLink", chat_id=channel)
    await sim.control.remove_admin(channel, bot_id)
    await sim.control.make_admin(channel, bot_id)
    await sim.control.block_bot(uid, "gate_bot")
    await sim.control.block_bot(uid, "gate_bot", blocked=False)

    kinds = {next(k for k in u if k != "update_id") for u in await sim.drain(token)}
    assert kinds == set(ALL_KINDS)
    await sim.ok(token, "getWebhookInfo")


async def test_updates_by_webhook_fit_the_table(sim: Sim, scene: Scene, receiver: Receiver) -> None:
    token, uid = scene.token, scene.user["id"]
    await sim.ok(token, "setWebhook", url=receiver.url, allowed_updates=ALL_KINDS)
    sent = await sim.ok(token, "sendMessage", chat_id=uid, text="?", reply_markup=EVERY_BUTTON)
    await sim.control.send_text(uid, "gate_bot", "hi")
    await sim.control.press_button(uid, "gate_bot", sent["message_id"], "go")
    await sim.control.request_join(uid, scene.channel["id"])
    await sim.control.join((await sim.control.create_user("Bo"))["id"], scene.channel["id"])
    await sim.control.block_bot(uid, "gate_bot")
    await sim.control.remove_admin(scene.channel["id"], scene.bot["id"])
    async with asyncio.timeout(5):
        while len(receiver.seen) < 6:
            await asyncio.sleep(0.01)
    info = await sim.ok(token, "getWebhookInfo")
    assert info["allowed_updates"] == ALL_KINDS and info["max_connections"] == 40
    assert {next(k for k in u if k != "update_id") for u in receiver.seen} == set(ALL_KINDS)


async def member(sim: Sim, scene: Scene, chat: int, user: int) -> dict[str, Any]:
    result: dict[str, Any] = await sim.ok(scene.token, "getChatMember", chat_id=chat, user_id=user)
    return result


async def test_the_fields_aiogram_missed_are_there(sim: Sim, scene: Scene) -> None:
    """aiogram 3.31 could not parse these before (issue 18): each now carries them."""
    group = (await sim.control.create_channel("Club", "club", chat_type="supergroup"))["id"]
    await sim.control.make_admin(group, scene.bot["id"])
    await sim.control.join(scene.user["id"], group)
    await sim.control.set_status(group, scene.user["id"], "restricted")
    restricted = await member(sim, scene, group, scene.user["id"])
    assert set(PERMISSIONS) <= restricted.keys()
    assert restricted["can_react_to_messages"] is False and restricted["can_edit_tag"] is False
    for chat in (group, scene.channel["id"]):
        admin = await member(sim, scene, chat, scene.bot["id"])
        assert admin["can_send_welcome_messages"] is True
    channel_admin = await member(sim, scene, scene.channel["id"], scene.bot["id"])
    group_admin = await member(sim, scene, group, scene.bot["id"])
    # The server writes the rights of the kind of chat: posting in channels, pinning in groups.
    assert {"can_post_messages", "can_manage_direct_messages"} <= channel_admin.keys()
    assert "can_pin_messages" not in channel_admin
    assert {"can_pin_messages", "can_manage_topics", "can_manage_tags"} <= group_admin.keys()
    assert "can_post_messages" not in group_admin
    info = await sim.ok(scene.token, "getChat", chat_id=group)
    assert info["accepted_gift_types"] == dict.fromkeys(info["accepted_gift_types"], False)
    assert info["max_reaction_count"] == 11 and "permissions" in info
    private = await sim.ok(scene.token, "getChat", chat_id=scene.user["id"])
    assert private["accepted_gift_types"]["unlimited_gifts"] is True
    assert private["can_send_gift"] is True and private["active_usernames"] == ["ann"]
