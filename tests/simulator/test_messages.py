"""Sending, copying, forwarding, editing and deleting messages, and callback queries."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from sponsorbot.simulator.client import SimulatorError
from tests.simulator.conftest import Scene, Sim, SimFactory

KEYBOARD = {"inline_keyboard": [[{"text": "I've joined", "callback_data": "check"}]]}


async def test_start_link_is_a_message_with_a_bot_command(sim: Sim, scene: Scene) -> None:
    await sim.control.open_link(scene.user["id"], "gate_bot", "abc123")
    [update] = await sim.drain(scene.token)
    message = update["message"]
    assert message["text"] == "/start abc123"
    assert message["entities"] == [{"offset": 0, "length": 6, "type": "bot_command"}]
    assert message["from"] == {
        "id": scene.user["id"],
        "is_bot": False,
        "first_name": "Ann",
        "last_name": "Lee",
        "username": "ann",
        "language_code": "en",
    }
    assert message["chat"] == {
        "id": scene.user["id"],
        "first_name": "Ann",
        "last_name": "Lee",
        "username": "ann",
        "type": "private",
    }


async def test_send_message_html_entities(sim: Sim, scene: Scene) -> None:
    sent = await sim.ok(
        scene.token,
        "sendMessage",
        chat_id=scene.user["id"],
        text='Join <b>News</b> &amp; <a href="https://t.me/news">here</a>',
        parse_mode="HTML",
        reply_markup=KEYBOARD,
        protect_content=True,
    )
    assert sent["text"] == "Join News & here"
    assert sent["entities"] == [
        {"type": "bold", "offset": 5, "length": 4},
        {"type": "text_link", "url": "https://t.me/news", "offset": 12, "length": 4},
    ]
    assert sent["from"]["id"] == scene.bot["id"]
    assert sent["has_protected_content"] is True
    assert sent["reply_markup"] == KEYBOARD


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("<b>open", 'Can\'t find end tag corresponding to start tag "b"'),
        ("<blink>x</blink>", 'Unsupported start tag "blink" at byte offset 0'),
        ("<b>x</i></b>", 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'),
    ],
)
async def test_bad_html_is_refused(sim: Sim, scene: Scene, text: str, detail: str) -> None:
    code, description = await sim.error(
        scene.token, "sendMessage", chat_id=scene.user["id"], text=text, parse_mode="HTML"
    )
    assert (code, description) == (400, f"Bad Request: can't parse entities: {detail}")


async def test_upload_then_resend_by_file_id(sim: Sim, scene: Scene) -> None:
    form = aiohttp.FormData()
    form.add_field("chat_id", str(scene.user["id"]))
    form.add_field("caption", "the file")
    form.add_field("document", b"x" * 1234, filename="book.pdf")
    async with sim.http.post(f"{sim.url}/bot{scene.token}/sendDocument", data=form) as resp:
        document = (await resp.json())["result"]["document"]
    assert document["file_name"] == "book.pdf" and document["file_size"] == 1234
    assert document["file_unique_id"]
    again = await sim.ok(
        scene.token, "sendDocument", chat_id=scene.user["id"], document=document["file_id"]
    )
    assert again["document"]["file_id"] == document["file_id"]
    code, description = await sim.error(
        scene.token, "sendDocument", chat_id=scene.user["id"], document="nonsense"
    )
    assert (code, description) == (400, "Bad Request: wrong file identifier/HTTP URL specified")


async def test_photo_and_video_from_a_users_file(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    photo = await sim.control.send_file(uid, "gate_bot", "photo")
    video = await sim.control.send_file(uid, "gate_bot", "video", caption="clip")
    [u1, u2] = await sim.drain(scene.token)
    assert u1["message"]["photo"][-1]["file_id"] == photo["file_id"]
    assert u2["message"]["video"]["file_id"] == video["file_id"]
    assert u2["message"]["caption"] == "clip"
    sent = await sim.ok(scene.token, "sendPhoto", chat_id=uid, photo=photo["file_id"])
    assert sent["photo"][-1]["file_id"] == photo["file_id"] and len(sent["photo"]) == 2
    sent = await sim.ok(scene.token, "sendVideo", chat_id=uid, video=video["file_id"])
    assert sent["video"]["file_id"] == video["file_id"]
    chat = await sim.control.read_chat(uid, "gate_bot")
    assert [m["media"]["kind"] for m in chat if m["from"] == "bot"] == ["photo", "video"]


async def test_copy_and_forward(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    storage = await sim.ok(scene.token, "sendMessage", chat_id=scene.channel["id"], text="post")
    assert storage["sender_chat"]["id"] == scene.channel["id"] and "from" not in storage
    copied = await sim.ok(
        scene.token,
        "copyMessage",
        chat_id=uid,
        from_chat_id=scene.channel["id"],
        message_id=storage["message_id"],
    )
    assert set(copied) == {"message_id"}
    forwarded = await sim.ok(
        scene.token,
        "forwardMessage",
        chat_id=uid,
        from_chat_id="@news",
        message_id=storage["message_id"],
    )
    assert forwarded["text"] == "post"
    assert forwarded["forward_origin"]["type"] == "channel"
    texts = [m["text"] for m in await sim.control.read_chat(uid, "gate_bot")]
    assert texts[-2:] == ["post", "post"]
    assert await sim.error(
        scene.token, "copyMessage", chat_id=uid, from_chat_id=scene.channel["id"], message_id=999
    ) == (400, "Bad Request: message to copy not found")


async def test_edit_text_and_markup(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    sent = await sim.ok(scene.token, "sendMessage", chat_id=uid, text="a", reply_markup=KEYBOARD)
    mid = sent["message_id"]
    assert await sim.error(
        scene.token, "editMessageText", chat_id=uid, message_id=mid, text="a", reply_markup=KEYBOARD
    ) == (
        400,
        "Bad Request: message is not modified: specified new message content and reply markup "
        "are exactly the same as a current content and reply markup of the message",
    )
    edited = await sim.ok(
        scene.token, "editMessageText", chat_id=uid, message_id=mid, text="b", reply_markup=KEYBOARD
    )
    assert edited["text"] == "b" and "edit_date" in edited
    code, _ = await sim.error(
        scene.token, "editMessageReplyMarkup", chat_id=uid, message_id=mid, reply_markup=KEYBOARD
    )
    assert code == 400
    cleared = await sim.ok(scene.token, "editMessageReplyMarkup", chat_id=uid, message_id=mid)
    assert "reply_markup" not in cleared
    assert await sim.error(
        scene.token, "editMessageText", chat_id=uid, message_id=777, text="x"
    ) == (400, "Bad Request: message to edit not found")
    [seen] = [m for m in await sim.control.read_chat(uid, "gate_bot") if m["message_id"] == mid]
    assert seen["edited"] is True and seen["text"] == "b" and seen["buttons"] == []


async def test_delete(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    sent = await sim.ok(scene.token, "sendMessage", chat_id=uid, text="bye")
    assert await sim.ok(scene.token, "deleteMessage", chat_id=uid, message_id=sent["message_id"])
    assert await sim.error(
        scene.token, "deleteMessage", chat_id=uid, message_id=sent["message_id"]
    ) == (400, "Bad Request: message to delete not found")
    chat = await sim.control.read_chat(uid, "gate_bot")
    assert [m["deleted"] for m in chat if m["message_id"] == sent["message_id"]] == [True]


async def test_blocked_deactivated_and_strangers(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    await sim.control.block_bot(uid, "gate_bot")
    [update] = await sim.drain(scene.token)
    assert update["my_chat_member"]["new_chat_member"]["status"] == "kicked"
    assert await sim.error(scene.token, "sendMessage", chat_id=uid, text="x") == (
        403,
        "Forbidden: bot was blocked by the user",
    )
    stranger = await sim.control.create_user("Bo")
    assert await sim.error(scene.token, "sendMessage", chat_id=stranger["id"], text="x") == (
        403,
        "Forbidden: bot can't initiate conversation with a user",
    )
    await sim.control.open_link(stranger["id"], "gate_bot")
    await sim.control.deactivate_user(stranger["id"])
    assert await sim.error(scene.token, "sendMessage", chat_id=stranger["id"], text="x") == (
        403,
        "Forbidden: user is deactivated",
    )
    assert await sim.error(scene.token, "sendMessage", chat_id=42, text="x") == (
        400,
        "Bad Request: chat not found",
    )


async def test_not_a_member_of_the_channel(sim: Sim, scene: Scene) -> None:
    other = await sim.control.create_channel("Other", username="other")
    assert await sim.error(scene.token, "sendMessage", chat_id="@other", text="x") == (
        403,
        "Forbidden: bot is not a member of the channel chat",
    )
    assert other["type"] == "channel"


async def test_callback_query_round_trip(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    sent = await sim.ok(scene.token, "sendMessage", chat_id=uid, text="?", reply_markup=KEYBOARD)
    query_id = await sim.control.press_button(uid, "gate_bot", sent["message_id"], "check")
    [update] = await sim.drain(scene.token)
    query = update["callback_query"]
    assert query["id"] == query_id and query["data"] == "check"
    assert query["from"]["id"] == uid and query["message"]["message_id"] == sent["message_id"]
    assert "chat_instance" in query
    assert await sim.ok(scene.token, "answerCallbackQuery", callback_query_id=query_id, text="ok")
    assert await sim.error(scene.token, "answerCallbackQuery", callback_query_id=query_id) == (
        400,
        "Bad Request: query is too old and response timeout expired or query ID is invalid",
    )
    answers = await sim.control.callback_answers(uid, "gate_bot")
    assert answers[-1]["text"] == "ok"


async def test_callback_answered_too_late(make_sim: SimFactory) -> None:
    sim = await make_sim(callback_timeout=0.2)
    bot = await sim.control.create_bot("slow_bot")
    user = await sim.control.create_user("Ed")
    await sim.control.open_link(user["id"], "slow_bot")
    sent = await sim.ok(
        bot["token"], "sendMessage", chat_id=user["id"], text="?", reply_markup=KEYBOARD
    )
    query_id = await sim.control.press_button(user["id"], "slow_bot", sent["message_id"], "check")
    await asyncio.sleep(0.3)
    assert await sim.error(bot["token"], "answerCallbackQuery", callback_query_id=query_id) == (
        400,
        "Bad Request: query is too old and response timeout expired or query ID is invalid",
    )
    with pytest.raises(SimulatorError):
        await sim.control.press_button(user["id"], "slow_bot", sent["message_id"], "nope")
