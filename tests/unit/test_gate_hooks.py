"""The gate's hooks: what features above it add to the welcome and after delivered content,
and what the shop adds through them (handlerkit: no database, no Telegram)."""

from __future__ import annotations

from typing import Any

from sponsorbot.engine import calls
from sponsorbot.engine.unit import UnitOfWork
from sponsorbot.features.botconfig import Banner, BotConfig
from sponsorbot.features.gate.hooks import GateHooks
from sponsorbot.features.gate.membership import MembershipCache
from sponsorbot.features.gate.visitor import BY_CODE, Visitor
from sponsorbot.features.shop import in_gate
from sponsorbot.features.shop.buttons import AdMenu
from tests.handlerkit import ScriptedReads, ScriptedTelegram, StaticConfig, context, message, sent

USER = 501
CODE = "Abc123xyz0"


def document(auto_delete_s: int = 0) -> dict[str, Any]:
    """BY_CODE's answer: an enabled document, no gate open."""
    return {
        "id": 77,
        "code": CODE,
        "kind": "document",
        "items": [{"kind": "document", "file_id": "FILE"}],
        "caption": None,
        "protect": False,
        "auto_delete_s": auto_delete_s,
        "enabled": True,
        "gate_content_id": None,
        "gate_ref": None,
        "gate_checks": 0,
        "pending": [],
    }


def two_rows(config: BotConfig, lang: str) -> list[list[dict[str, Any]]]:
    return [[{"text": f"one {lang}", "url": "https://one.example"}], [{"text": "two"}]]


def after(uow: UnitOfWork, user_id: int, lang: str, config: BotConfig) -> None:
    uow.queue(calls.send_message(user_id, f"after, in {lang}"))


async def test_without_hooks_the_welcome_has_no_buttons() -> None:
    ctx = context(ScriptedTelegram(), ScriptedReads(), USER)
    await Visitor(StaticConfig(BotConfig()), MembershipCache()).welcome(message(USER, "hi"), ctx)
    [welcome] = sent(ctx, "sendMessage")
    assert "reply_markup" not in welcome.params


async def test_the_welcome_carries_every_hook_s_rows_in_order() -> None:
    hooks = GateHooks(welcome_buttons=[two_rows, lambda config, lang: []])
    visitor = Visitor(StaticConfig(BotConfig()), MembershipCache(), hooks)
    ctx = context(ScriptedTelegram(), ScriptedReads(), USER)
    await visitor.welcome(message(USER, "hi", "fa"), ctx)
    [welcome] = sent(ctx, "sendMessage")
    rows = welcome.params["reply_markup"]["inline_keyboard"]
    assert [row[0]["text"] for row in rows] == ["one fa", "two"]


async def test_what_follows_delivery_comes_after_the_content_and_its_auto_delete_notice() -> None:
    hooks = GateHooks(after_delivery=[after])
    visitor = Visitor(StaticConfig(BotConfig()), MembershipCache(), hooks)
    reads = ScriptedReads()
    reads.on(BY_CODE, lambda bot, code, user: document(auto_delete_s=600))
    ctx = context(ScriptedTelegram(), reads, USER)
    await visitor.start(message(USER, f"/start {CODE}"), ctx)
    # The document, the notice that it goes in 10 minutes, its two deletes, then the hook's.
    methods = [c.method for c in ctx.uow.calls]
    assert methods == [
        "sendDocument",
        "sendMessage",
        "deleteMessage",
        "deleteMessage",
        "sendMessage",
    ]
    notice, last = sent(ctx, "sendMessage")
    assert "10" in notice.params["text"] and last.params["text"] == "after, in en"


def test_the_shop_offers_its_button_only_while_it_is_open() -> None:
    assert in_gate.welcome_button(BotConfig(), "en") == []
    [[button]] = in_gate.welcome_button(BotConfig(shop_enabled=True), "en")
    assert AdMenu.unpack(button["callback_data"]) == AdMenu()


def test_the_shop_sends_one_message_per_running_banner() -> None:
    uow = UnitOfWork(bot_id=1)
    banners = (Banner("Night <films>", "https://films.example"), Banner("Two", "https://t.example"))
    in_gate.banners(uow, USER, "en", BotConfig(banners=banners))
    assert [c.params["text"] for c in uow.calls] == ["Night &lt;films&gt;", "Two"]
    first = uow.calls[0].params["reply_markup"]["inline_keyboard"][0][0]
    assert first["url"] == "https://films.example"
