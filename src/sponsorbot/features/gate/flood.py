"""Per-person flood limits for the visitor's side (the security review, L11).

Every message a person sends used to get a reply, so someone typing faster than Telegram lets
a bot write to one chat (3 a second) built an endless queue of replies for themselves, and ten
such people used up the whole bot's budget. Counted in the worker's memory: approximate across
workers, which is all a flood limit needs, and free of database writes.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable


class PerPerson:
    """At most `limit` events per person in any `window_s`; the `keep` most recent people."""

    def __init__(
        self,
        limit: int,
        window_s: float,
        *,
        keep: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.keep = keep
        self._clock = clock
        self._seen: OrderedDict[tuple[int, int], deque[float]] = OrderedDict()

    def allow(self, bot_id: int, user_id: int) -> bool:
        """Count one event of this person; False when it is over the limit (not counted)."""
        now = self._clock()
        key = (bot_id, user_id)
        times = self._seen.get(key)
        if times is None:
            times = self._seen[key] = deque()
            while len(self._seen) > self.keep:
                self._seen.popitem(last=False)
        else:
            self._seen.move_to_end(key)
        while times and now - times[0] >= self.window_s:
            times.popleft()
        if len(times) >= self.limit:
            return False
        times.append(now)
        return True
