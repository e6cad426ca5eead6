"""Tests for the sliding-window send limiter."""

from __future__ import annotations

import asyncio
import heapq
import time
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsorbot.engine.ratelimit import RateLimiter
from tests.examples import examples


class FakeClock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_allows_up_to_per_chat_then_waits_for_oldest_send() -> None:
    clock = FakeClock()
    lim = RateLimiter(per_bot=25, per_chat=3, clock=clock)
    for _ in range(3):
        assert lim.reserve(1) == 0.0
        clock.now += 0.25
    # Sends at 100.0, 100.25, 100.5; now 100.75: the one at 100.0 leaves at 101.0.
    assert lim.reserve(1) == pytest.approx(0.25)
    assert lim.reserve(2) == 0.0  # another chat is unaffected
    clock.now = 101.0
    assert lim.reserve(1) == 0.0


def test_wait_records_nothing() -> None:
    clock = FakeClock()
    lim = RateLimiter(per_bot=2, per_chat=2, clock=clock)
    assert lim.reserve("a") == 0.0
    assert lim.reserve("a") == 0.0
    for _ in range(5):
        assert lim.reserve("a") == pytest.approx(1.0)
        assert lim.reserve("b") == pytest.approx(1.0)
    clock.now += 1.0
    assert lim.reserve("b") == 0.0
    assert lim.reserve("b") == 0.0


def test_bot_limit_across_chats() -> None:
    clock = FakeClock()
    lim = RateLimiter(per_bot=25, per_chat=3, clock=clock)
    for chat in range(25):
        assert lim.reserve(chat) == 0.0
        clock.now += 0.01
    assert lim.reserve(999) == pytest.approx(0.75)
    clock.now = 101.0
    assert lim.reserve(999) == 0.0  # the send at exactly 100.0 has left the window
    assert lim.reserve(998) == pytest.approx(0.01)


def test_wait_is_the_later_of_bot_and_chat_limits() -> None:
    clock = FakeClock(0.0)
    lim = RateLimiter(per_bot=3, per_chat=1, clock=clock)
    assert lim.reserve(1) == 0.0
    clock.now = 0.5
    assert lim.reserve(2) == 0.0
    assert lim.reserve(3) == 0.0
    clock.now = 0.75
    # Bot-wide: oldest send (0.0) leaves at 1.0; chat 2: its send (0.5) leaves at 1.5.
    assert lim.reserve(4) == pytest.approx(0.25)
    assert lim.reserve(2) == pytest.approx(0.75)


def test_pause_holds_every_chat_and_never_shortens() -> None:
    clock = FakeClock()
    lim = RateLimiter(clock=clock)
    lim.pause(5.0)
    lim.pause(2.0)
    assert lim.paused_for() == pytest.approx(5.0)
    assert lim.reserve(1) == pytest.approx(5.0)
    clock.now += 4.0
    assert lim.reserve(2) == pytest.approx(1.0)
    assert lim.paused_for(now=clock.now + 2) == 0.0
    clock.now += 1.0
    assert lim.paused_for() == 0.0
    assert lim.reserve(1) == 0.0


def test_idle_chats_are_forgotten() -> None:
    clock = FakeClock()
    lim = RateLimiter(per_bot=10_000, per_chat=3, clock=clock)
    for chat in range(1000):
        lim.reserve(chat)
    assert lim.tracked_chats() == 1000
    clock.now += 0.5
    lim.reserve("late")
    assert lim.tracked_chats() == 1001
    clock.now += 0.6
    lim.reserve("new")
    assert lim.tracked_chats() == 2  # "late" and "new"


def test_chat_log_emptied_while_bot_limit_blocks_is_pruned() -> None:
    clock = FakeClock(0.0)
    lim = RateLimiter(per_bot=2, per_chat=1, clock=clock)
    assert lim.reserve("x") == 0.0
    clock.now = 0.9
    assert lim.reserve("y") == 0.0
    clock.now = 1.5  # "x" has room again, but the bot is full until 1.9
    assert lim.reserve("z") == 0.0
    assert lim.reserve("x") == pytest.approx(0.4)
    clock.now = 3.0
    assert lim.reserve("w") == 0.0
    assert lim.tracked_chats() == 1


def test_time_going_backwards_is_clamped() -> None:
    lim = RateLimiter(per_bot=5, per_chat=1, clock=FakeClock())
    assert lim.reserve(1, now=10.0) == 0.0
    assert lim.reserve(1, now=9.0) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kwargs", [{"per_bot": 0}, {"per_chat": 0}, {"window_s": 0.0}, {"window_s": -1.0}]
)
def test_rejects_bad_settings(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RateLimiter(**kwargs)  # type: ignore[arg-type]


def test_rejects_negative_pause() -> None:
    with pytest.raises(ValueError):
        RateLimiter().pause(-1.0)


# --- Property tests -------------------------------------------------------------------------
#
# Times are multiples of 1/256 s and the window is 1 s, so every sum and difference below is
# exact in binary floating point and the limiter's waits can be compared with ==.

WINDOW = 1.0


def _needed_wait(times: Sequence[float], limit: int, now: float) -> float:
    """Seconds until fewer than `limit` of `times` lie in the window ending at `now`."""
    inside = sorted(s for s in times if now - s < WINDOW)
    if len(inside) < limit:
        return 0.0
    return inside[len(inside) - limit] + WINDOW - now


def _max_in_any_window(times: Sequence[float]) -> int:
    ordered = sorted(times)
    # The fullest half-open window [a, a + WINDOW) can always start at a send time.
    return max((sum(1 for s in ordered if 0 <= s - a < WINDOW) for a in ordered), default=0)


requests_strategy = st.lists(
    st.tuples(st.integers(0, 4), st.integers(0, 6 * 256).map(lambda k: k / 256)),
    max_size=80,
)


@settings(max_examples=examples(300), deadline=None)
@given(
    per_bot=st.integers(1, 6),
    per_chat=st.integers(1, 4),
    requests=requests_strategy,
)
def test_property_limits_hold_and_waits_are_exact(
    per_bot: int, per_chat: int, requests: list[tuple[int, float]]
) -> None:
    # Discrete-event simulation of concurrent senders: each request arrives at its time, asks
    # reserve(), and if told to wait, comes back exactly that much later.
    lim = RateLimiter(per_bot=per_bot, per_chat=per_chat, window_s=WINDOW, clock=FakeClock())
    queue = [(arrival, seq, chat) for seq, (chat, arrival) in enumerate(requests)]
    heapq.heapify(queue)
    sends: list[tuple[float, int]] = []
    steps = 0
    while queue:
        steps += 1
        assert steps < 100 * (len(requests) + 1), "no progress"
        now, seq, chat = heapq.heappop(queue)
        expected = max(
            _needed_wait([t for t, _ in sends], per_bot, now),
            _needed_wait([t for t, c in sends if c == chat], per_chat, now),
        )
        wait = lim.reserve(chat, now=now)
        assert wait == expected
        if wait == 0.0:
            sends.append((now, chat))
        else:
            heapq.heappush(queue, (now + wait, seq, chat))

    assert len(sends) == len(requests)
    assert _max_in_any_window([t for t, _ in sends]) <= per_bot
    for chat in {c for _, c in sends}:
        assert _max_in_any_window([t for t, c in sends if c == chat]) <= per_chat

    # Memory: one window after the last send, only the newly sending chat is tracked.
    last = max((t for t, _ in sends), default=0.0)
    assert lim.reserve("fresh", now=last + WINDOW) == 0.0
    assert lim.tracked_chats() == 1


@settings(max_examples=examples(200), deadline=None)
@given(
    pause_at=st.integers(0, 4 * 256).map(lambda k: k / 256),
    pause_len=st.integers(0, 3 * 256).map(lambda k: k / 256),
    requests=requests_strategy,
)
def test_property_nothing_is_sent_during_a_pause(
    pause_at: float, pause_len: float, requests: list[tuple[int, float]]
) -> None:
    # One sequential sender; a 429 arrives at the first send attempt at or after pause_at.
    lim = RateLimiter(per_bot=4, per_chat=2, window_s=WINDOW, clock=FakeClock())
    pause: tuple[float, float] | None = None
    now = 0.0
    for chat, arrival in sorted(requests, key=lambda r: r[1]):
        now = max(now, arrival)
        if pause is None and now >= pause_at:
            lim.pause(pause_len, now=now)
            pause = (now, now + pause_len)
        while (wait := lim.reserve(chat, now=now)) > 0:
            now += wait
        if pause is not None:
            assert not pause[0] <= now < pause[1]


# --- Real asyncio ---------------------------------------------------------------------------


async def test_concurrent_chat_tasks_obey_limits() -> None:
    window, per_bot, per_chat = 0.1, 5, 2
    recorded: list[float] = []

    def clock() -> float:
        recorded.append(time.monotonic())
        return recorded[-1]

    lim = RateLimiter(per_bot=per_bot, per_chat=per_chat, window_s=window, clock=clock)
    sends: list[tuple[float, int]] = []

    async def chat_task(chat: int) -> None:
        for _ in range(15):
            await lim.acquire(chat)
            # No await since reserve() returned 0: the last clock reading is this send's time.
            sends.append((recorded[-1], chat))

    started = time.monotonic()
    await asyncio.gather(*(chat_task(chat) for chat in range(4)))
    elapsed = time.monotonic() - started

    assert len(sends) == 60
    times = sorted(t for t, _ in sends)
    for i, a in enumerate(times):
        assert sum(1 for s in times[i:] if s - a < window) <= per_bot
    for chat in range(4):
        mine = sorted(t for t, c in sends if c == chat)
        for i, a in enumerate(mine):
            assert sum(1 for s in mine[i:] if s - a < window) <= per_chat
    # 60 sends at 5 per 0.1 s: the last batch can start no sooner than 11 windows in, and the
    # limiter should not be much slower than that.
    assert elapsed >= 11 * window - 0.01
    assert elapsed < 11 * window + 0.8


def test_headroom_leaves_slots_for_replies_and_room_counts_them() -> None:
    clock = FakeClock()
    lim = RateLimiter(per_bot=5, per_chat=3, clock=clock)
    assert lim.room(headroom=1) == 4
    for chat in range(4):
        assert lim.reserve(chat, headroom=1) == 0.0
        clock.now += 0.1
    assert lim.room(headroom=1) == 0
    # Background work waits for the oldest send to leave; a reply takes the free slot now.
    assert lim.reserve(10, headroom=1) == pytest.approx(0.6)
    assert lim.reserve(11) == 0.0
    assert lim.room() == 0
    clock.now = 101.0
    assert lim.room(headroom=1) == 0  # four sends still inside the window: 100.1 .. 100.4
    clock.now = 101.2
    assert lim.room(headroom=1) == 2
    lim.pause(1.0)
    assert lim.room() == 0


@settings(max_examples=examples(300), deadline=None)
@given(
    per_bot=st.integers(2, 6),
    headroom=st.integers(1, 2),
    requests=st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 6 * 256).map(lambda k: k / 256), st.booleans()),
        max_size=80,
    ),
)
def test_property_background_sends_leave_the_headroom(
    per_bot: int, headroom: int, requests: list[tuple[int, float, bool]]
) -> None:
    # Replies may fill the bot's whole window; a background send only goes while fewer than
    # per_bot - headroom sends (of either kind) are inside it, and its wait is exact.
    lim = RateLimiter(per_bot=per_bot, per_chat=10, window_s=WINDOW, clock=FakeClock())
    limit = max(1, per_bot - headroom)
    queue = [(arrival, seq, chat, bg) for seq, (chat, arrival, bg) in enumerate(requests)]
    heapq.heapify(queue)
    sends: list[float] = []
    while queue:
        now, seq, chat, bg = heapq.heappop(queue)
        expected = _needed_wait(sends, limit if bg else per_bot, now)
        wait = lim.reserve(chat, now=now, headroom=headroom if bg else 0)
        assert wait == expected
        if wait == 0.0:
            sends.append(now)
        else:
            heapq.heappush(queue, (now + wait, seq, chat, bg))
    assert len(sends) == len(requests)
    assert _max_in_any_window(sends) <= per_bot
