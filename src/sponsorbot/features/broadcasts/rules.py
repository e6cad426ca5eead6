"""The broadcasts' vocabulary: where a broadcast stands, the moves between those statuses, and
where each of its recipients stands.

A broadcast is a draft until the owner sends it; it is then scheduled (for now or a set time),
sending once the producer starts choosing its audience, and done when every recipient has an
outcome. The owner may pause and resume it while it sends, and cancel it until it is done.
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class Status(enum.StrEnum):
    """Where a broadcast stands."""

    DRAFT = "draft"
    SCHEDULED = "scheduled"
    SENDING = "sending"
    PAUSED = "paused"
    CANCELLED = "cancelled"
    DONE = "done"


class Recipient(enum.StrEnum):
    """Where one recipient of a broadcast stands: waiting to be queued, queued in the outbox,
    or its outcome."""

    WAITING = "waiting"
    QUEUED = "queued"
    SENT = "sent"
    BLOCKED = "blocked"
    FAILED = "failed"
    UNKNOWN = "unknown"


STATUSES: tuple[Status, ...] = tuple(Status)
# What the owner may still change (the post, the audience, the time).
EDITABLE: tuple[Status, ...] = (Status.DRAFT, Status.SCHEDULED)
# While a broadcast is in one of these its progress may still move: the producer watches it.
LIVE: tuple[Status, ...] = (Status.SCHEDULED, Status.SENDING, Status.PAUSED)
FINISHED: tuple[Status, ...] = (Status.CANCELLED, Status.DONE)
# Moving into one of these takes back what no sender has claimed yet.
STOPPED: tuple[Status, ...] = (Status.PAUSED, Status.CANCELLED)
# The outcomes a report lists as not delivered.
UNDELIVERED: tuple[Recipient, ...] = (Recipient.FAILED, Recipient.BLOCKED, Recipient.UNKNOWN)


class Move(NamedTuple):
    """A status change: the statuses it may start from, and the one it ends in."""

    sources: tuple[Status, ...]
    to: Status


# Every status change there is; `start` and `finish` are the producer's, the rest the owner's.
# Anything else is a 409 naming the broadcast's status.
MOVES: dict[str, Move] = {
    "send": Move(EDITABLE, Status.SCHEDULED),
    "start": Move((Status.SCHEDULED,), Status.SENDING),
    "pause": Move((Status.SENDING,), Status.PAUSED),
    "resume": Move((Status.PAUSED,), Status.SENDING),
    "cancel": Move((Status.DRAFT, *LIVE), Status.CANCELLED),
    "finish": Move((Status.SENDING,), Status.DONE),
}


def can(move: str, status: str) -> bool:
    """Whether `move` may happen to a broadcast in `status`."""
    return status in MOVES[move].sources
