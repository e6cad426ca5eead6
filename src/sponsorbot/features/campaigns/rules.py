"""The crediting rules of a campaign, as pure functions over one person's record.

A person is credited once per campaign, for ever: their first join through one of the
campaign's invite links, made while the bot knew them (they had opened the bot, so the gate
showed them the link). Any other join (the channel's username, a link someone shared) is
counted apart, as outside the gate. A credited join is *kept* once the retention window has
passed without the person leaving; a leave inside the window makes it *left*, whatever follows.

Every field of the record is a minimum or a bounded set of the earliest leaves, so folding the
same updates in any order, or twice, gives the same record: updates of a network campaign come
through several bots, each handled by whichever worker claims it. The SQL upsert in
`credit.py` and the trigger of migration 0009 are this fold in the database.

Here too is the campaign's vocabulary: its statuses, the moves between them, what its goal is
counted in and where it stands in a gate.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal, NamedTuple, get_args

MAX_LEAVES = 16  # earliest leaves kept per person; more is someone toggling for fun


class Status(enum.StrEnum):
    """Where a campaign stands: in the gates (running), waiting for its start, held back by
    the owner, or finished (its goal reached, or ended by its date or the owner)."""

    SCHEDULED = "scheduled"
    RUNNING = "running"
    PAUSED = "paused"
    REACHED = "reached"
    ENDED = "ended"


STATUSES: tuple[Status, ...] = tuple(Status)
FINISHED: tuple[Status, ...] = (Status.REACHED, Status.ENDED)
# Every status a campaign may still leave: what the periodic job watches.
LIVE: tuple[Status, ...] = (Status.SCHEDULED, Status.RUNNING, Status.PAUSED)
GoalKind = Literal["kept", "joins"]
Position = Literal["first", "last"]
GOAL_KINDS: tuple[str, ...] = get_args(GoalKind)
POSITIONS: tuple[str, ...] = get_args(Position)


class Move(NamedTuple):
    """A status change: the statuses it may start from, and the one it ends in."""

    sources: tuple[Status, ...]
    to: Status


# Every status change there is. Anything else is a 409 naming the campaign's status.
MOVES: dict[str, Move] = {
    "start": Move((Status.SCHEDULED,), Status.RUNNING),
    "pause": Move((Status.RUNNING, Status.SCHEDULED), Status.PAUSED),
    "resume": Move((Status.PAUSED,), Status.RUNNING),
    "end": Move(LIVE, Status.ENDED),
    "reach": Move(LIVE, Status.REACHED),
}


class Verdict(enum.Enum):
    """Where one person stands in a campaign's counts."""

    NONE = "none"  # no join seen (only leaves, or nothing)
    OUTSIDE = "outside"  # joined, but not through the gate
    WAITING = "waiting"  # credited, inside the retention window, still in
    LEFT = "left"  # credited, left inside the window
    KEPT = "kept"  # credited, stayed for the whole window


@dataclass(frozen=True, slots=True)
class Member:
    """One person's record in one campaign."""

    gate_joined_at: datetime | None = None
    bot_id: int | None = None
    outside_at: datetime | None = None
    leaves: tuple[datetime, ...] = ()

    @property
    def joined_at(self) -> datetime | None:
        """The join that counts: through the gate if there was one, else the outside one."""
        return self.gate_joined_at or self.outside_at

    @property
    def left_at(self) -> datetime | None:
        """The first leave after the join that counts."""
        start = self.joined_at
        if start is None:
            return None
        return next((at for at in self.leaves if at >= start), None)


@dataclass(frozen=True, slots=True)
class Join:
    """A join seen in a chat_member update: when, through which bot, and whether it was
    through the campaign's link by someone that bot knows."""

    at: datetime
    bot_id: int
    through_gate: bool


@dataclass(frozen=True, slots=True)
class Leave:
    """A leave (left, kicked, or restricted and out) seen in a chat_member update."""

    at: datetime


def apply(member: Member, change: Join | Leave) -> Member:
    """The record after one update; commutative and idempotent."""
    if isinstance(change, Leave):
        leaves = tuple(sorted({*member.leaves, change.at}))[:MAX_LEAVES]
        return replace(member, leaves=leaves)
    if not change.through_gate:
        return replace(member, outside_at=_earliest(member.outside_at, change.at))
    first = member.gate_joined_at
    if first is None or (change.at, change.bot_id) < (first, member.bot_id or 0):
        return replace(member, gate_joined_at=change.at, bot_id=change.bot_id)
    return member


def verdict(member: Member, window: timedelta, now: datetime) -> Verdict:
    """Where the person stands at `now` with this retention window."""
    if member.gate_joined_at is None:
        return Verdict.OUTSIDE if member.outside_at is not None else Verdict.NONE
    deadline = member.gate_joined_at + window
    left = member.left_at
    if left is not None and left < deadline:
        return Verdict.LEFT
    return Verdict.KEPT if deadline <= now else Verdict.WAITING


@dataclass(frozen=True, slots=True)
class Counts:
    """A campaign's figures."""

    joins: int = 0
    kept: int = 0
    left: int = 0
    waiting: int = 0
    outside_gate: int = 0

    def progress(self, goal_kind: str) -> int:
        """What the goal is measured in: kept joins or plain joins."""
        return self.kept if goal_kind == "kept" else self.joins


def count(members: list[Member], window: timedelta, now: datetime) -> Counts:
    """The figures over every person's record."""
    tally = dict.fromkeys(Verdict, 0)
    for member in members:
        tally[verdict(member, window, now)] += 1
    credited = tally[Verdict.KEPT] + tally[Verdict.LEFT] + tally[Verdict.WAITING]
    return Counts(
        joins=credited,
        kept=tally[Verdict.KEPT],
        left=tally[Verdict.LEFT],
        waiting=tally[Verdict.WAITING],
        outside_gate=tally[Verdict.OUTSIDE],
    )


def _earliest(a: datetime | None, b: datetime) -> datetime:
    return b if a is None or b < a else a
