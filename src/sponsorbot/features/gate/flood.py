"""Per-person pacing on the visitor's side: a token bucket per person, and a word when refused.

Every message a person sends used to get a reply, so someone typing faster than Telegram lets
a bot write to one chat built an endless queue of replies for themselves, and ten such people
used up the whole bot's budget (docs/adr/0020-flood-limits.md). A hard count per minute fixed that
but dropped, without a word, the 21st link a person opened in a minute: someone bingeing a
channel's list of 30 episodes, one tap every 2 seconds, got 20 of them and silence.

So a person has a bucket of `burst` taps that refills at `per_s` a second. A tap takes one
token; with none left it is refused, and the first refusal of each `notice_every_s` window is
answered (the caller sends the visitor a text), the rest of that window are not. A human's pace
(one tap a second or slower, for as long as they like) never empties a bucket that refills at
least once a second; a script gets at most `burst + per_s * T` answers in any T seconds, plus
one notice per window. What the person is sent is then paced again by the engine's sender, to
what Telegram lets a bot send to one chat.

The rule (`step`) is pure. `PerPerson` keeps the buckets in the worker's memory: approximate
across workers, which is all a flood limit needs, and free of database writes. `@paced(...)`
puts a handler behind one of them, so handlers do not check the limit themselves.
"""

from __future__ import annotations

import enum
import functools
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sponsorbot.engine.unit import Context
from sponsorbot.features.turn import Method, Turn

# A person whose taps are exactly 1 s apart at 1 token a second must find a whole token each
# time, but `now - at` of two float clock readings can come out a hair short of the gap.
EPSILON = 1e-9


class Paced(enum.Enum):
    """What to do with one tap."""

    ALLOW = "allow"
    TELL = "tell"  # refused: tell the person why (the first refusal of a window)
    QUIET = "quiet"  # refused: they were told within this window already


@dataclass(frozen=True, slots=True)
class Pace:
    """A bucket of `burst` taps refilled at `per_s` a second; a notice every `notice_every_s`."""

    burst: int
    per_s: float
    notice_every_s: float

    def __post_init__(self) -> None:
        if self.burst < 1 or self.per_s <= 0 or self.notice_every_s <= 0:
            raise ValueError("a pace needs a burst of 1 or more and positive rates")

    def faster(self, factor: float) -> Pace:
        """The same pace with time running `factor` times faster (tests compress time)."""
        return Pace(self.burst, self.per_s * factor, self.notice_every_s / factor)

    def bound(self, window_s: float) -> float:
        """The most taps allowed in any `window_s` seconds: the burst and the refill."""
        return self.burst + self.per_s * window_s


@dataclass(frozen=True, slots=True)
class Bucket:
    """One person's state: tokens left at time `at`, when they were last told, and how many
    taps were refused without a word since then."""

    tokens: float
    at: float
    told_at: float = float("-inf")
    quiet: int = 0


def step(bucket: Bucket | None, pace: Pace, now: float) -> tuple[Bucket, Paced]:
    """One tap at `now` (seconds on a monotonic clock): the person's new state and the verdict.

    A clock that steps back counts as no time passing.
    """
    if bucket is None:
        bucket = Bucket(float(pace.burst), now)
    at = max(now, bucket.at)
    tokens = min(float(pace.burst), bucket.tokens + (at - bucket.at) * pace.per_s)
    if tokens >= 1.0 - EPSILON:
        return replace(bucket, tokens=max(0.0, tokens - 1.0), at=at), Paced.ALLOW
    if at - bucket.told_at >= pace.notice_every_s:
        return Bucket(tokens, at, at, 0), Paced.TELL
    return replace(bucket, tokens=tokens, at=at, quiet=bucket.quiet + 1), Paced.QUIET


class PerPerson:
    """A `Pace` per (bot, person), for the `keep` people seen most recently."""

    def __init__(
        self,
        pace: Pace,
        *,
        keep: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pace = pace
        self.keep = keep
        self._clock = clock
        self._buckets: OrderedDict[tuple[int, int], Bucket] = OrderedDict()

    def check(self, bot_id: int, user_id: int) -> tuple[Paced, int]:
        """Count one tap of this person: the verdict, and with TELL how many of their taps were
        refused without a word since the notice before (for the log line)."""
        key = (bot_id, user_id)
        old = self._buckets.get(key)
        new, verdict = step(old, self.pace, self._clock())
        self._buckets[key] = new
        self._buckets.move_to_end(key)
        while len(self._buckets) > self.keep:
            self._buckets.popitem(last=False)
        quiet = old.quiet if verdict is Paced.TELL and old is not None else 0
        return verdict, quiet


def paced(limit: Callable[[Any], PerPerson], notice: str, doing: str) -> Callable[[Method], Method]:
    """Answer `handler(self, event, ctx, turn, ...)` only within the person's pace, read by
    `limit(self)`. The first refusal of a window tells the person why (the text `notice`) and
    leaves a line for the owner in the handler's module's log (`doing`: what they do too fast);
    the rest are dropped without a word. The turn still ends (the person was seen)."""

    def wrap(handler: Method) -> Method:
        log = logging.getLogger(handler.__module__)

        @functools.wraps(handler)
        async def run(owner: Any, event: Any, ctx: Context, turn: Turn, *args: Any) -> object:
            # A retry (the first try's commit failed) was counted already.
            if ctx.attempt == 1:
                pace = limit(owner)
                verdict, quiet = pace.check(ctx.bot.id, turn.user_id)
                if verdict is Paced.TELL:
                    turn.say(notice)
                    log.info(
                        "bot %s: user %s %s faster than the pace (%s a second after a burst of"
                        " %s); told to wait, %s refused without a word since the last notice",
                        ctx.bot.id,
                        turn.user_id,
                        doing,
                        f"{pace.pace.per_s:g}",
                        pace.pace.burst,
                        quiet,
                    )
                if verdict is not Paced.ALLOW:
                    return None
            return await handler(owner, event, ctx, turn, *args)

        return run

    return wrap
