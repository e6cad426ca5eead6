"""The status of a panel page that answers a refusal, by the refusal's kind."""

from __future__ import annotations

import pytest

from sponsorbot.features.errors import (
    Conflict,
    FeatureError,
    Invalid,
    NotFound,
    Refused,
    TooLarge,
)
from sponsorbot.telegram import TelegramError
from sponsorbot.web.panel.errors import status_of


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        (NotFound, 404),
        (Conflict, 409),
        (TooLarge, 413),
        (Invalid, 422),
        (Refused, 422),
        (FeatureError, 422),
    ],
)
def test_a_refusal_answers_its_kind_s_status(kind: type[FeatureError], status: int) -> None:
    assert status_of(kind("no")) == status


def test_telegram_or_the_network_failing_is_a_503() -> None:
    assert status_of(OSError("down")) == 503
    assert status_of(TelegramError("sendMessage", 0, "down")) == 503
