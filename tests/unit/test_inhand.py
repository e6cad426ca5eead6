"""The adaptive count of updates in hand: grows on a backlog while the process keeps pace,
shrinks when the process lags, always within its bounds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.engine.inhand import MIN_STEP_S, SHRINK_EVERY_S, InHandLimit


def test_starts_at_low_and_bounds_are_sane() -> None:
    limit = InHandLimit(32, 512)
    assert (limit.limit, limit.threshold) == (32, 8)
    # A maximum below the start pins the count at the start.
    pinned = InHandLimit(64, 16)
    assert (pinned.low, pinned.high, pinned.limit) == (64, 64, 64)
    assert InHandLimit(0, 0).limit == 1


def test_grows_on_full_claims_one_step_per_time_in_hand() -> None:
    limit = InHandLimit(32, 512)
    limit.finished(0.3)
    assert limit.claimed(32, 32, now=10.0)
    assert limit.limit == 40
    # The next step waits for one time in hand, so the last step's effect is seen first.
    assert not limit.claimed(40, 40, now=10.2)
    assert limit.claimed(40, 40, now=10.31)
    assert limit.limit == 50


def test_does_not_grow_without_a_backlog() -> None:
    limit = InHandLimit(32, 512)
    assert not limit.claimed(32, 31, now=1.0)
    assert not limit.claimed(8, 0, now=2.0)
    assert limit.limit == 32


def test_does_not_grow_while_the_loop_lags_and_shrinks_when_it_lags_badly() -> None:
    limit = InHandLimit(32, 4096)
    now = 0.0
    for _ in range(8):
        now += 1.0
        assert limit.claimed(limit.limit, limit.limit, now)
    grown = limit.limit
    assert grown > 150
    for _ in range(10):  # some lag, steadily: no more growth, no shrink
        now += 0.1
        assert not limit.lagged(0.02, now)
    assert not limit.claimed(grown, grown, now + 1.0)
    assert limit.limit == grown
    shrinks = 0
    for _ in range(10):  # badly, for one second: one shrink
        now += 0.1
        shrinks += limit.lagged(0.2, now)
    assert shrinks == 1
    assert limit.limit == int(grown * 0.8)


def test_shrinks_when_time_in_hand_nears_the_lock() -> None:
    limit = InHandLimit(8, 64, lock_s=4.0)
    for now in range(10):
        limit.claimed(limit.limit, limit.limit, float(now))
    grown = limit.limit
    limit.finished(1.5)  # above lock / 8: no growth
    assert not limit.claimed(grown, grown, 100.0)
    limit.finished(3.0)  # the average passes lock / 4: shrink
    assert limit.hand_s > 1.0
    assert limit.lagged(0.0, 200.0)
    assert limit.limit < grown


def test_never_below_low() -> None:
    limit = InHandLimit(32, 512)
    for i in range(50):
        limit.lagged(1.0, i * SHRINK_EVERY_S)
    assert limit.limit == 32


events = st.lists(
    st.one_of(
        st.tuples(st.just("claim"), st.integers(0, 600), st.integers(0, 600)),
        st.tuples(st.just("lag"), st.floats(0, 1.0), st.just(0)),
        st.tuples(st.just("hand"), st.floats(0, 200.0), st.just(0)),
    ),
    max_size=200,
)


@given(st.integers(1, 100), st.integers(1, 1000), events)
def test_the_count_stays_within_its_bounds(
    low: int, high: int, steps: list[tuple[str, float, int]]
) -> None:
    limit = InHandLimit(low, high, lock_s=120.0)
    now = 0.0
    for kind, a, b in steps:
        now += MIN_STEP_S
        before = limit.limit
        if kind == "claim":
            grew = limit.claimed(int(a), int(min(a, b)), now)
            assert grew == (limit.limit > before)
            assert not grew or b >= a  # growth only on a full claim
        elif kind == "lag":
            limit.lagged(a, now)
            assert limit.limit <= before
        else:
            limit.finished(a)
        assert max(1, low) <= limit.limit <= max(low, high)
        assert 1 <= limit.threshold <= limit.limit
