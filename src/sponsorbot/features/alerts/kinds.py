"""The kinds of alert, in one table: who may receive each, whether repeats gather, what it acts on.

A member gets a kind when their role holds its permission (features/accounts/permissions.py)
and they did not turn it off on the panel's Notifications page. `once` kinds are about one
thing (an order submitted); the others gather repeats for `gather_s` before going out, so a
burst of twenty dead updates is one message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sponsorbot.features.accounts.permissions import allowed

Kind = Literal[
    "order_review",
    "payment_decision",
    "payment_credited",
    "bot_refused",
    "channel_rights",
    "dead_updates",
    "given_up",
    "tron_key",
    "campaign_done",
    "broadcast_done",
]


@dataclass(frozen=True, slots=True)
class KindRule:
    """One kind: the permission that receives it, repeats, and its button (if any)."""

    permission: str
    once: bool
    # What its button does: an order's review moves, a re-drive of the bot; None: a link only.
    acts: Literal["order", "redrive"] | None = None
    gather: bool = False


KINDS: dict[Kind, KindRule] = {
    "order_review": KindRule("bots", once=True, acts="order"),
    "payment_decision": KindRule("bots", once=True),
    "payment_credited": KindRule("bots", once=True),
    "bot_refused": KindRule("bots", once=True),
    "channel_rights": KindRule("content", once=True),
    "dead_updates": KindRule("bots", once=False, acts="redrive", gather=True),
    "given_up": KindRule("bots", once=False, acts="redrive", gather=True),
    "tron_key": KindRule("bots", once=True),
    "campaign_done": KindRule("content", once=True),
    "broadcast_done": KindRule("content", once=True),
}
# The daily digest is no alert kind (one per member per day, not per event); anyone may ask.
DIGEST_PERMISSION = "view"
# The moves an order's buttons make, and the permission each needs (the panel's, for the same).
ORDER_MOVES = ("approve", "reject", "change")
ACT_PERMISSION = "bots"


def kinds_for(role: str) -> list[Kind]:
    """The kinds a member of this role may receive, in the table's order."""
    return [kind for kind, rule in KINDS.items() if allowed(rule.permission, role)]


def receives(kind: str, role: str, muted: list[str] | tuple[str, ...]) -> bool:
    """Whether a member of `role` who turned `muted` off gets an alert of `kind`."""
    rule = KINDS.get(kind)  # type: ignore[call-overload]
    return rule is not None and allowed(rule.permission, role) and kind not in muted
