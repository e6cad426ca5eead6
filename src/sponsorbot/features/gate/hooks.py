"""What features above the gate add to its answers, without the gate knowing them.

The gate is the core of the product and stands low in the feature graph; a feature that
extends what a visitor sees (the shop: an "advertise here" button under the welcome, paid
banners after delivered content) requires the gate and adds its functions here at setup
(docs/adr/0023-feature-graph.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sponsorbot.engine.unit import UnitOfWork
from sponsorbot.features.botconfig import BotConfig

# (the bot's configuration, the visitor's language) → rows of inline buttons for the welcome.
WelcomeButtons = Callable[[BotConfig, str], list[list[dict[str, Any]]]]
# (the unit of work, the visitor, their language, the bot's configuration): queue what follows
# delivered content, after the content and its auto-delete notice.
AfterDelivery = Callable[[UnitOfWork, int, str, BotConfig], None]


@dataclass(slots=True)
class GateHooks:
    """The gate's extension points, filled in by the setups of the features that require it."""

    welcome_buttons: list[WelcomeButtons] = field(default_factory=list)
    after_delivery: list[AfterDelivery] = field(default_factory=list)

    def welcome_markup(self, config: BotConfig, lang: str) -> dict[str, Any] | None:
        """The welcome's keyboard: every feature's rows in setup order (None: no buttons)."""
        rows = [row for buttons in self.welcome_buttons for row in buttons(config, lang)]
        return {"inline_keyboard": rows} if rows else None

    def delivered(self, uow: UnitOfWork, user_id: int, lang: str, config: BotConfig) -> None:
        """Queue what the features add after delivered content."""
        for after in self.after_delivery:
            after(uow, user_id, lang, config)
