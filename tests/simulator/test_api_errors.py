"""Answers and errors as the real Bot API gives them, over real HTTP.

Each test names what the official server does (telegram-bot-api's Client.cpp, and tdlib
behind it) and checks the simulator does the same.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from tests.simulator.conftest import Scene, Sim


async def bad(sim: Sim, token: str, method: str, **params: Any) -> str:
    code, description = await sim.error(token, method, **params)
    assert code == 400
    return description.removeprefix("Bad Request: ")


async def test_private_chats_have_two_members_and_no_administrators(sim: Sim, scene: Scene) -> None:
    # process_get_chat_member_count_query: 1 + (user_id != my_id) for a private chat.
    token, uid = scene.token, scene.user["id"]
    assert await sim.ok(token, "getChatMemberCount", chat_id=uid) == 2
    assert await sim.ok(token, "getChatMemberCount", chat_id=scene.bot["id"]) == 1
    assert await bad(sim, token, "getChatAdministrators", chat_id=uid) == (
        "there are no administrators in the private chat"
    )
    member = await sim.ok(token, "getChatMember", chat_id=uid, user_id=uid)
    assert member["status"] == "member" and member["user"]["id"] == uid
    stranger = (await sim.control.create_user("Cy"))["id"]
    assert await bad(sim, token, "getChatMember", chat_id=uid, user_id=stranger) == (
        "member not found"
    )
    # A private chat the bot never had is unknown to it.
    assert await bad(sim, token, "getChatMemberCount", chat_id=stranger) == "chat not found"


@pytest.mark.parametrize("user_id", [None, "abc", -5, 0])
async def test_a_user_id_must_be_positive(sim: Sim, scene: Scene, user_id: Any) -> None:
    # get_user_id: td::to_integer, and anything not above zero is refused before the chat.
    params = {"chat_id": "@nobody"} | ({} if user_id is None else {"user_id": user_id})
    assert await bad(sim, scene.token, "getChatMember", **params) == "invalid user_id specified"


async def test_supergroup_members_are_visible_to_a_plain_member_bot(sim: Sim, scene: Scene) -> None:
    # tdlib refuses "member list is inaccessible" in broadcast channels only.
    group = await sim.control.create_channel("Club", "club", chat_type="supergroup")
    uid = scene.user["id"]
    await sim.control.join(uid, group["id"])
    member = await sim.ok(scene.token, "getChatMember", chat_id="@club", user_id=uid)
    assert member["status"] == "member"
    await sim.control.create_channel("Other", "other")
    assert await bad(sim, scene.token, "getChatMember", chat_id="@other", user_id=uid) == (
        "member list is inaccessible"
    )


@pytest.mark.parametrize("chat_type", ["channel", "supergroup"])
async def test_a_kicked_bot_is_forbidden_even_to_read(
    sim: Sim, scene: Scene, chat_type: str
) -> None:
    # check_chat_access: a banned bot gets 403 for any access, public chat or not.
    chat = await sim.control.create_channel("Gone", "gone", chat_type=chat_type)
    await sim.control.make_admin(chat["id"], scene.bot["id"])
    await sim.control.set_status(chat["id"], scene.bot["id"], "kicked")
    assert await sim.error(scene.token, "getChat", chat_id="@gone") == (
        403,
        f"Forbidden: bot was kicked from the {chat_type} chat",
    )


async def test_a_bot_outside_a_chat_may_read_only_public_ones(sim: Sim, scene: Scene) -> None:
    # Public chats need membership to write; private ones even to read, once the bot has left
    # them (a private chat it never saw is not found at all).
    token, uid = scene.token, scene.user["id"]
    await sim.control.create_channel("Open", "open")
    await sim.ok(token, "getChat", chat_id="@open")
    assert await sim.error(token, "sendMessage", chat_id="@open", text="x") == (
        403,
        "Forbidden: bot is not a member of the channel chat",
    )
    assert await sim.error(token, "createChatInviteLink", chat_id="@open") == (
        403,
        "Forbidden: bot is not a member of the channel chat",
    )
    secret = (await sim.control.create_channel("Secret", private=True))["id"]
    assert await bad(sim, token, "getChat", chat_id=secret) == "chat not found"
    await sim.control.make_admin(secret, scene.bot["id"])
    await sim.control.remove_admin(secret, scene.bot["id"], remove=True)
    assert await sim.error(token, "getChat", chat_id=secret) == (
        403,
        "Forbidden: bot is not a member of the channel chat",
    )
    assert await bad(sim, token, "sendMessage", chat_id=uid, text="") == "message text is empty"


async def test_invite_links_follow_tdlib(sim: Sim, scene: Scene) -> None:
    token, cid = scene.token, scene.channel["id"]
    # The server clamps numbers and cuts names to 32 characters rather than refuse them.
    link = await sim.ok(token, "createChatInviteLink", chat_id=cid, name="n" * 40, member_limit="x")
    assert link["name"] == "n" * 32 and "member_limit" not in link
    assert await bad(
        sim, token, "createChatInviteLink", chat_id=cid, member_limit=5, creates_join_request=True
    ) == ("member limit can't be specified for links requiring administrator approval")
    # 100000 passes the server's clamp; Telegram allows at most 99999.
    assert await bad(sim, token, "createChatInviteLink", chat_id=cid, member_limit=10**6) == (
        "USAGE_LIMIT_INVALID"
    )
    assert await bad(sim, token, "revokeChatInviteLink", chat_id=cid) == (
        "invite link must be non-empty"
    )
    uid = scene.user["id"]
    assert await bad(sim, token, "exportChatInviteLink", chat_id=uid) == (
        "can't invite members to a private chat"
    )
    assert await bad(sim, token, "approveChatJoinRequest", chat_id=uid, user_id=uid) == (
        "the chat can't have join requests"
    )
    await sim.control.make_admin(cid, scene.bot["id"], can_invite_users=False)
    assert await bad(sim, token, "declineChatJoinRequest", chat_id=cid, user_id=uid) == (
        "not enough rights to manage chat join requests"
    )


async def test_delete_and_edit_parameters_and_limits(sim: Sim, scene: Scene) -> None:
    token, uid, cid = scene.token, scene.user["id"], scene.channel["id"]
    # process_delete_message_query checks its parameters before anything else.
    assert await bad(sim, token, "deleteMessage", message_id=1) == (
        "chat identifier is not specified"
    )
    assert await bad(sim, token, "deleteMessage", chat_id=uid, message_id="x") == (
        "message identifier is not specified"
    )
    # Without chat_id and message_id an edit is of an inline message.
    assert await bad(sim, token, "editMessageText", text="x") == (
        "message identifier is not specified"
    )
    assert await bad(sim, token, "editMessageText", text="x", inline_message_id="AAA") == (
        "invalid inline message identifier specified"
    )
    assert await bad(sim, token, "editMessageText", chat_id=uid, text="x") == (
        "message to edit not found"
    )
    assert await bad(sim, token, "copyMessage", chat_id=uid, message_id=1) == (
        'parameter "from_chat_id" is required'
    )
    forwarded = await sim.ok(token, "forwardMessage", chat_id=uid, from_chat_id=uid, message_id=1)
    assert await bad(
        sim, token, "editMessageText", chat_id=uid, message_id=forwarded["message_id"], text="y"
    ) == ("message can't be edited")
    post = await sim.ok(token, "sendMessage", chat_id=cid, text="post")
    # Bots may delete messages for two days.
    await sim.control.advance_clock(2 * 86400 + 60)
    assert await bad(sim, token, "deleteMessage", chat_id=uid, message_id=1) == (
        "message can't be deleted for everyone"
    )
    assert await bad(sim, token, "deleteMessage", chat_id=cid, message_id=post["message_id"]) == (
        "message can't be deleted"
    )


async def test_a_file_of_one_type_cannot_be_sent_as_another(sim: Sim, scene: Scene) -> None:
    # tdlib's FileManager: documents and videos stand for each other, photos do not.
    uid = scene.user["id"]
    document = (await sim.control.send_file(uid, "gate_bot", "document", "a.pdf"))["file_id"]
    video = (await sim.control.send_file(uid, "gate_bot", "video"))["file_id"]
    assert await bad(sim, scene.token, "sendPhoto", chat_id=uid, photo=document) == (
        "can't use file of type Document as Photo"
    )
    sent = await sim.ok(scene.token, "sendDocument", chat_id=uid, document=video)
    assert sent["document"]["file_id"] == video
    assert (
        await bad(sim, scene.token, "sendVideo", chat_id=uid) == "there is no video in the request"
    )


async def test_webhook_parameters_are_clamped_or_refused_like_the_server(
    sim: Sim, scene: Scene
) -> None:
    token = scene.token
    url = "http://127.0.0.1:9/hook"
    await sim.ok(token, "setWebhook", url=url, max_connections=0)
    assert (await sim.ok(token, "getWebhookInfo"))["max_connections"] == 1
    await sim.ok(token, "setWebhook", url=url, max_connections=1000)
    assert (await sim.ok(token, "getWebhookInfo"))["max_connections"] == 100
    again = await sim.api(token, "setWebhook", url=url, max_connections=1000)
    assert again.body["description"] == "Webhook is already set"
    assert await bad(sim, token, "setWebhook", url="http://a b/") == "invalid webhook URL specified"
    assert await bad(sim, token, "setWebhook", url=url, secret_token="s" * 257) == (
        "secret token is too long"
    )
    assert await bad(sim, token, "setWebhook", url=url, secret_token="no spaces") == (
        "secret token contains unallowed characters"
    )
    assert (await sim.api(token, "deleteWebhook")).body["description"] == "Webhook was deleted"
    assert (await sim.api(token, "deleteWebhook")).body["description"] == (
        "Webhook is already deleted"
    )
    info = await sim.ok(token, "getWebhookInfo")
    assert info == {"url": "", "has_custom_certificate": False, "pending_update_count": 0}


async def test_allowed_updates_are_read_as_the_server_reads_them(sim: Sim, scene: Scene) -> None:
    # get_allowed_update_types: unreadable lists are ignored, unknown names skipped, case
    # ignored, an empty choice means the default; getWebhookInfo lists them in server order.
    token = scene.token
    await sim.updates(token, allowed_updates=["Chat_Member", "message", "nonsense"])
    assert (await sim.ok(token, "getWebhookInfo"))["allowed_updates"] == ["message", "chat_member"]
    await sim.updates(token, allowed_updates="not json")
    await sim.updates(token, allowed_updates=["message", 5])
    assert (await sim.ok(token, "getWebhookInfo"))["allowed_updates"] == ["message", "chat_member"]
    await sim.updates(token, allowed_updates=[])
    assert "allowed_updates" not in await sim.ok(token, "getWebhookInfo")


async def test_get_updates_clamps_its_numbers(sim: Sim, scene: Scene) -> None:
    for text in ("a", "b"):
        await sim.control.send_text(scene.user["id"], "gate_bot", text)
    assert len(await sim.updates(scene.token, limit=0)) == 1
    assert len(await sim.updates(scene.token, limit="abc", offset="x")) == 1
    assert len(await sim.updates(scene.token, limit=500, timeout=-3)) == 2


async def test_the_text_then_the_keyboard_then_the_chat_are_checked(sim: Sim, scene: Scene) -> None:
    # process_send_message_query reads the text, then do_send_message the reply_markup JSON,
    # then check_chat; tdlib checks the buttons against the chat last.
    token = scene.token
    assert await bad(sim, token, "sendMessage", chat_id="@nobody", reply_markup="{") == (
        "message text is empty"
    )
    assert await bad(sim, token, "sendMessage", chat_id="@nobody", text="x", reply_markup="{") == (
        "can't parse reply keyboard markup JSON object"
    )
    keyboard = {"inline_keyboard": [[{"text": "t", "url": "not a url"}]]}
    assert await bad(
        sim, token, "sendMessage", chat_id="@nobody", text="x", reply_markup=keyboard
    ) == ("chat not found")
    assert await bad(
        sim, token, "sendMessage", chat_id=scene.user["id"], text="x", reply_markup=keyboard
    ) == ("inline keyboard button URL 'not a url' is invalid: Disallowed character in URL host")


async def test_buttons_the_server_accepts_come_back_as_it_stores_them(
    sim: Sim, scene: Scene
) -> None:
    keyboard = {
        "inline_keyboard": [
            [{"text": "copy", "copy_text": {"text": "X1"}}],
            [{"text": "app", "web_app": {"url": "https://a.io"}}],
            [{"text": "in", "login_url": {"url": "https://a.io/in"}}],
            [{"text": "site", "url": "Example.com"}],
        ]
    }
    sent = await sim.ok(
        scene.token, "sendMessage", chat_id=scene.user["id"], text="x", reply_markup=keyboard
    )
    assert sent["reply_markup"]["inline_keyboard"] == [
        [{"text": "copy", "copy_text": {"text": "X1"}}],
        [{"text": "app", "web_app": {"url": "https://a.io/"}}],
        [{"text": "in", "url": "https://a.io/in"}],
        [{"text": "site", "url": "http://example.com/"}],
    ]
    assert await bad(
        sim,
        scene.token,
        "sendMessage",
        chat_id=scene.channel["id"],
        text="x",
        reply_markup=keyboard,
    ) == ("BUTTON_TYPE_INVALID")


async def test_a_json_body_must_be_an_object(sim: Sim, scene: Scene) -> None:
    url = f"{sim.url}/bot{scene.token}/getMe"
    async with sim.http.post(url, data=b"[1]", headers={"Content-Type": "application/json"}) as r:
        assert (r.status, (await r.json())["description"]) == (
            400,
            "Bad Request: JSON object expected",
        )


async def test_a_reply_carries_the_message_it_answers(sim: Sim, scene: Scene) -> None:
    # get_reply_parameters / check_reply_parameters: the reply is looked up in the chat; the
    # Message shows it as reply_to_message, itself without a nested reply.
    token, uid = scene.token, scene.user["id"]
    asked = await sim.control.send_text(uid, "gate_bot", "question")
    first = await sim.ok(
        token,
        "sendMessage",
        chat_id=uid,
        text="answer",
        reply_parameters={"message_id": asked["message_id"]},
    )
    assert first["reply_to_message"]["text"] == "question"
    second = await sim.ok(
        token, "sendMessage", chat_id=uid, text="again", reply_to_message_id=first["message_id"]
    )
    assert second["reply_to_message"]["message_id"] == first["message_id"]
    assert "reply_to_message" not in second["reply_to_message"]
    assert await bad(
        sim, token, "sendMessage", chat_id=uid, text="x", reply_parameters={"message_id": 99}
    ) == ("message to be replied not found")
    alone = await sim.ok(
        token,
        "sendMessage",
        chat_id=uid,
        text="x",
        reply_parameters={"message_id": 99, "allow_sending_without_reply": True},
    )
    assert "reply_to_message" not in alone
    assert await bad(sim, token, "sendMessage", chat_id=uid, text="x", reply_parameters="{") == (
        "can't parse reply parameters JSON object"
    )
    assert await bad(
        sim, token, "sendMessage", chat_id=uid, text="x", reply_parameters={"chat_id": uid}
    ) == ('can\'t find field "message_id"')


async def test_an_upload_may_be_attached_under_another_name(sim: Sim, scene: Scene) -> None:
    # get_input_file: a value "attach://<name>" takes the multipart part <name> (aiogram's way).
    form = aiohttp.FormData()
    form.add_field("chat_id", str(scene.user["id"]))
    form.add_field("photo", "attach://file1")
    form.add_field("file1", b"\x89PNG" + b"0" * 100, filename="dot.png")
    async with sim.http.post(f"{sim.url}/bot{scene.token}/sendPhoto", data=form) as resp:
        body = await resp.json()
    assert body["ok"] is True and body["result"]["photo"][-1]["file_size"] == 104
    form = aiohttp.FormData()
    form.add_field("chat_id", str(scene.user["id"]))
    form.add_field("photo", "attach://missing")
    async with sim.http.post(f"{sim.url}/bot{scene.token}/sendPhoto", data=form) as resp:
        assert (await resp.json())["description"] == "Bad Request: there is no photo in the request"


async def test_administrators_leave_other_bots_out(sim: Sim, scene: Scene) -> None:
    # JsonChatMembers: other bots are skipped unless return_bots is set.
    other = await sim.control.create_bot("other_bot")
    await sim.control.make_admin(scene.channel["id"], other["id"])
    admins = await sim.ok(scene.token, "getChatAdministrators", chat_id=scene.channel["id"])
    assert other["id"] not in {a["user"]["id"] for a in admins}
    assert scene.bot["id"] in {a["user"]["id"] for a in admins}
    everyone = await sim.ok(
        scene.token, "getChatAdministrators", chat_id=scene.channel["id"], return_bots=True
    )
    assert other["id"] in {a["user"]["id"] for a in everyone}
