"""The buttons of the team's alerts, as callback data: what they name is looked up again when
pressed, and the presser must be a linked member whose role may act (the data is the client's)."""

from __future__ import annotations

from dataclasses import dataclass

from sponsorbot.engine.callbacks import CallbackData


@dataclass(frozen=True, slots=True)
class TeamOrder(CallbackData, prefix="tmo"):
    """Approve, reject or ask for a change of an order (`move`: approve, reject, change)."""

    order_id: int
    move: str


@dataclass(frozen=True, slots=True)
class TeamRedrive(CallbackData, prefix="tmr"):
    """Re-drive a bot's dead updates and given-up messages."""

    bot_id: int
