"""How many updates a worker holds at once, adapted to where it runs.

An update is in hand for about two Telegram round trips, so a fixed count caps a worker near
count ÷ time in hand: 32 at 150 ms keep up with about 200/s at best. The count grows while
updates wait in the database (a claim got all it asked for) and the process keeps pace (its
event loop answers on time), one step per time in hand so each step's effect is seen before
the next. It shrinks when the process itself becomes the queue: the loop falls behind (CPU, or
more tasks than it can run), or an update's time in hand nears the lock's expiry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# The loop's lag (a timer's overshoot) below which the process keeps pace, and above which
# it is the bottleneck. A loop under load lags a few milliseconds; saturated, tens.
LAG_OK_S = 0.010
LAG_HIGH_S = 0.050
# Each sample's weight in the running averages of lag and time in hand.
LAG_WEIGHT = 0.2
HAND_WEIGHT = 0.05
GROW = 1.25
SHRINK = 0.8
# At most one shrink a second: a lag spike is seen by several samples in a row.
SHRINK_EVERY_S = 1.0
# Never grow faster than this, however short the time in hand.
MIN_STEP_S = 0.02


@dataclass
class InHandLimit:
    """The count, between ``low`` (the setting, where it starts) and ``high``."""

    low: int
    high: int
    lock_s: float = 120.0
    limit: int = field(init=False)
    lag_s: float = field(default=0.0, init=False)
    hand_s: float = field(default=0.0, init=False)
    _next_grow: float = field(default=0.0, init=False)
    _next_shrink: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self.low = max(1, self.low)
        self.high = max(self.low, self.high)
        self.limit = self.low

    @property
    def threshold(self) -> int:
        """Claim again once this many are free: a quarter of the count."""
        return max(1, self.limit // 4)

    def finished(self, seconds: float) -> None:
        """One update left our hands after ``seconds`` (claim to commit)."""
        if self.hand_s == 0.0:
            self.hand_s = seconds
        else:
            self.hand_s += (seconds - self.hand_s) * HAND_WEIGHT

    def lagged(self, seconds: float, now: float) -> bool:
        """A sample of the event loop's lag; whether the count shrank."""
        self.lag_s += (max(0.0, seconds) - self.lag_s) * LAG_WEIGHT
        if self.lag_s > LAG_HIGH_S or self.hand_s > self.lock_s / 4:
            return self._shrink(now)
        return False

    def claimed(self, asked: int, got: int, now: float) -> bool:
        """After a claim: whether the count grew. It grows only when the claim was full
        (more were waiting) and the process keeps pace."""
        if got < asked or now < self._next_grow or self.limit >= self.high:
            return False
        if self.lag_s > LAG_OK_S or self.hand_s > self.lock_s / 8:
            return False
        self.limit = min(self.high, max(self.limit + 1, math.ceil(self.limit * GROW)))
        self._next_grow = now + max(MIN_STEP_S, self.hand_s)
        return True

    def _shrink(self, now: float) -> bool:
        if now < self._next_shrink or self.limit <= self.low:
            return False
        self.limit = max(self.low, int(self.limit * SHRINK))
        self._next_shrink = now + SHRINK_EVERY_S
        # Growing again waits until the shrink has been felt.
        self._next_grow = now + SHRINK_EVERY_S
        return True
