"""The shop's buttons in the bot, as callback data (the gate's welcome offers the first)."""

from __future__ import annotations

from dataclasses import dataclass

from sponsorbot.engine.callbacks import CallbackData


@dataclass(frozen=True, slots=True)
class AdMenu(CallbackData, prefix="adm"):
    """The welcome's "advertise here" button."""


@dataclass(frozen=True, slots=True)
class AdProduct(CallbackData, prefix="adp"):
    """A product picked from the menu."""

    product_id: int


@dataclass(frozen=True, slots=True)
class AdSubmit(CallbackData, prefix="ads"):
    """Submit the order in the summary."""


@dataclass(frozen=True, slots=True)
class AdCancel(CallbackData, prefix="adc"):
    """Drop the order in the summary."""
