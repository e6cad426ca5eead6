"""Callback data: what is packed unpacks to the same thing; anything else is refused cleanly."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.engine.callbacks import CallbackData, InvalidCallback


@dataclass(frozen=True, slots=True)
class Pick(CallbackData, prefix="tpick"):
    order: int
    item: str
    urgent: bool


@given(
    order=st.integers(min_value=-(2**62), max_value=2**62),
    item=st.text(alphabet=st.characters(blacklist_characters=":"), max_size=20),
    urgent=st.booleans(),
)
def test_packed_data_unpacks_to_the_same_object(order: int, item: str, urgent: bool) -> None:
    data = Pick(order, item, urgent)
    try:
        packed = data.pack()
    except ValueError:
        return  # over Telegram's 64 bytes: refused when packing, never sent
    assert len(packed.encode()) <= 64
    assert Pick.unpack(packed) == data


@given(st.one_of(st.text(max_size=80), st.none(), st.integers(), st.binary()))
def test_anything_a_client_sends_either_unpacks_or_is_refused(data: object) -> None:
    with contextlib.suppress(InvalidCallback):
        Pick.unpack(data)


def test_refusals_name_what_is_wrong() -> None:
    for bad in ("tpick:1:x", "tpick:a:x:1", "tpick:1:x:2", "other:1:x:1", "tpick:1:x:1:extra"):
        assert Pick.parse(bad) is None
    with pytest.raises(ValueError, match="may not contain"):
        Pick(1, "a:b", False).pack()
    with pytest.raises(ValueError, match="over 64"):
        Pick(1, "x" * 70, False).pack()


def test_a_prefix_belongs_to_one_class() -> None:
    with pytest.raises(ValueError, match="taken"):

        @dataclass(frozen=True)
        class Other(CallbackData, prefix="tpick"):
            n: int

    with pytest.raises(ValueError, match="a-z"):

        @dataclass(frozen=True)
        class Bad(CallbackData, prefix="Has:Colon"):
            n: int
