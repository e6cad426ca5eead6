"""Message text over real HTTP: parse modes, trimming, automatic entities and their errors, as
the real Bot API answers them (telegram-bot-api's Client.cpp and tdlib's MessageEntity.cpp)."""

from __future__ import annotations

import aiohttp
import pytest

from sponsorbot.simulator.client import SimulatorError
from tests.simulator.conftest import Scene, Sim


async def test_each_parse_mode_gives_telegrams_entities(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    sent = await sim.ok(
        scene.token,
        "sendMessage",
        chat_id=uid,
        text='<b>Tom</b> & <a href="">Jerry</a> <pre><code class="language-python">x</code></pre>',
        parse_mode="HTML",
    )
    # tdlib: a bare & is text, <a href=""> links nothing, pre+code with a language is one pre
    assert sent["text"] == "Tom & Jerry x"
    assert sent["entities"] == [
        {"offset": 0, "length": 3, "type": "bold"},
        {"offset": 12, "length": 1, "type": "pre", "language": "python"},
    ]
    sent = await sim.ok(
        scene.token, "sendMessage", chat_id=uid, text="*Hi* _there_\\!", parse_mode="MarkdownV2"
    )
    assert (sent["text"], [e["type"] for e in sent["entities"]]) == (
        "Hi there!",
        ["bold", "italic"],
    )
    sent = await sim.ok(
        scene.token, "sendMessage", chat_id=uid, text="*Hi* v1.2!", parse_mode="Markdown"
    )
    assert (sent["text"], sent["entities"]) == (
        "Hi v1.2!",
        [{"offset": 0, "length": 2, "type": "bold"}],
    )


async def test_a_mention_by_id_carries_the_user(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    sent = await sim.ok(
        scene.token,
        "sendMessage",
        chat_id=uid,
        text=f'Hi <a href="tg://user?id={uid}">Ann</a>',
        parse_mode="HTML",
    )
    [mention] = sent["entities"]
    assert mention["type"] == "text_mention" and mention["user"]["id"] == uid
    assert mention["user"]["first_name"] == "Ann"


@pytest.mark.parametrize(
    ("params", "description"),
    [
        ({"text": " \n\t "}, "Bad Request: text must be non-empty"),
        ({"text": ""}, "Bad Request: message text is empty"),
        ({"text": "x", "parse_mode": "Foo"}, "Bad Request: unsupported parse_mode"),
        (
            {"text": "a <b>x</i>", "parse_mode": "HTML"},
            "Bad Request: can't parse entities: Unmatched end tag at byte offset 6, "
            'expected "</b>", found "</i>"',
        ),
        (
            {"text": "Done.", "parse_mode": "MarkdownV2"},
            "Bad Request: can't parse entities: "
            "Character '.' is reserved and must be escaped with the preceding '\\'",
        ),
        (
            {"text": "x", "entities": [{"type": "bold", "offset": 0}]},
            "Bad Request: can't parse MessageEntity: Can't find field \"length\"",
        ),
    ],
)
async def test_bad_text_is_refused_as_telegram_refuses(
    sim: Sim, scene: Scene, params: dict[str, object], description: str
) -> None:
    code, got = await sim.error(scene.token, "sendMessage", chat_id=scene.user["id"], **params)
    assert (code, got) == (400, description)


async def test_text_is_trimmed_and_gets_automatic_entities(sim: Sim, scene: Scene) -> None:
    sent = await sim.ok(
        scene.token,
        "sendMessage",
        chat_id=scene.user["id"],
        text="  Use /help or visit t.me/news #info  \n",
    )
    assert sent["text"] == "Use /help or visit t.me/news #info"
    assert sent["entities"] == [
        {"offset": 4, "length": 5, "type": "bot_command"},
        {"offset": 19, "length": 9, "type": "url"},
        {"offset": 29, "length": 5, "type": "hashtag"},
    ]


async def test_a_caption_may_be_empty_and_is_parsed_like_text(sim: Sim, scene: Scene) -> None:
    form = aiohttp.FormData()
    form.add_field("chat_id", str(scene.user["id"]))
    form.add_field("caption", "<i>new</i> @news")
    form.add_field("parse_mode", "HTML")
    form.add_field("document", b"x", filename="a.txt")
    async with sim.http.post(f"{sim.url}/bot{scene.token}/sendDocument", data=form) as resp:
        sent = (await resp.json())["result"]
    assert sent["caption"] == "new @news"
    assert sent["caption_entities"] == [
        {"offset": 0, "length": 3, "type": "italic"},
        {"offset": 4, "length": 5, "type": "mention"},
    ]
    file_id = sent["document"]["file_id"]
    sent = await sim.ok(
        scene.token, "sendDocument", chat_id=scene.user["id"], document=file_id, caption="  "
    )
    assert "caption" not in sent


async def test_a_person_sending_a_command_gives_a_bot_command(sim: Sim, scene: Scene) -> None:
    await sim.control.send_text(scene.user["id"], "gate_bot", "  /help@gate_bot now ")
    [update] = await sim.drain(scene.token)
    message = update["message"]
    assert message["text"] == "/help@gate_bot now"
    assert message["entities"] == [{"offset": 0, "length": 14, "type": "bot_command"}]
    with pytest.raises(SimulatorError) as refused:
        await sim.control.send_text(scene.user["id"], "gate_bot", " \n ")
    assert refused.value.status == 400
