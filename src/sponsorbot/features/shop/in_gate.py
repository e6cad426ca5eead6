"""What the shop adds to the gate's answers: the "advertise here" button under the welcome,
and the paid banners after delivered content. The shop's setup adds both to the gate's hooks
(`features/gate/hooks.py`); the gate does not know the shop."""

from __future__ import annotations

from typing import Any

from sponsorbot.engine import calls
from sponsorbot.engine.unit import UnitOfWork
from sponsorbot.features.botconfig import BotConfig
from sponsorbot.features.shop.buttons import AdMenu
from sponsorbot.features.texts import escape, render


def welcome_button(config: BotConfig, lang: str) -> list[list[dict[str, Any]]]:
    """The welcome's "advertise here" button, when the bot's shop is open."""
    if not config.shop_enabled:
        return []
    label = render("shop_button", lang, config.texts, html=False)
    return [[{"text": label, "callback_data": AdMenu().pack()}]]


def banners(uow: UnitOfWork, user_id: int, lang: str, config: BotConfig) -> None:
    """The running paid banners, one message each, after the content."""
    for banner in config.banners:
        label = render("shop_banner_open", lang, config.texts, html=False)
        markup = {"inline_keyboard": [[{"text": label, "url": banner.url}]]}
        uow.queue(calls.send_message(user_id, escape(banner.text), markup=markup))
