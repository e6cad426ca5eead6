"""What the clients do and what the real Bot API answers: every method of the simulator's
registry with typical and edge arguments (CALLS), and every kind of update it sends (EVENTS).

Each expectation is the real server's: descriptions are quoted from telegram-bot-api's
Client.cpp and tdlib's MessageEntity.cpp (a 400 of td's own is "Bad Request: " and the text
with its first letter lowered). Cases run in order against one scene (`driver.setup`): a case
may keep what it got for a later one. Standard library only (see the package's docstring).
"""

from __future__ import annotations

from tests.simulator.conformance.calls_chats import BOT_CALLS, CHAT_CALLS
from tests.simulator.conformance.calls_messages import MESSAGE_CALLS
from tests.simulator.conformance.events import EVENTS
from tests.simulator.conformance.spec import ALL_UPDATES, Call

CALLS: tuple[Call, ...] = (*BOT_CALLS, *MESSAGE_CALLS, *CHAT_CALLS)
WEBHOOK_SECRET = "conformance_secret-1"
# The webhook phase's own calls: to the receiver, with every update kind, and back.
WEBHOOK_ON = Call(
    "setWebhook/receiver",
    "setWebhook",
    lambda c: {
        "url": c["receiver"],
        "secret_token": WEBHOOK_SECRET,
        "allowed_updates": ALL_UPDATES,
        "drop_pending_updates": True,
    },
)
WEBHOOK_OFF = Call("deleteWebhook/receiver", "deleteWebhook", lambda c: {})
PHASES = ("getUpdates", "webhook")


def case_ids() -> list[str]:
    """Every case a client prints, in the order it prints them."""
    events = [f"{phase}:{e.id}" for phase in PHASES for e in EVENTS]
    calls = [c.id for c in CALLS]
    return events[: len(EVENTS)] + calls + [WEBHOOK_ON.id, *events[len(EVENTS) :], WEBHOOK_OFF.id]
