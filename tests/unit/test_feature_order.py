"""Features are set up after the features they require, in list order otherwise; an unknown or
circular requirement stops the install with its names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.features.all import FEATURES
from sponsorbot.features.base import Feature, Parts, Shared, setup_order


def nothing(shared: Shared) -> Parts:
    return Parts()


def feature(name: str, *requires: str) -> Feature:
    return Feature(name, nothing, requires=requires)


def names(features: list[Feature]) -> list[str]:
    return [f.name for f in features]


def test_each_feature_comes_after_what_it_requires_and_in_list_order_otherwise() -> None:
    listed = [feature("alerts", "shop"), feature("bots"), feature("shop", "gate"), feature("gate")]
    assert names(setup_order(listed)) == ["bots", "gate", "shop", "alerts"]
    assert names(setup_order([feature("b"), feature("a")])) == ["b", "a"]


def test_the_product_s_features_all_come_after_what_they_require() -> None:
    ordered = names(setup_order(FEATURES))
    assert sorted(ordered) == sorted(f.name for f in FEATURES)
    for f in FEATURES:
        for required in f.requires:
            assert ordered.index(required) < ordered.index(f.name), (f.name, required)
    # The shop stands on the gate it extends and the features it fulfils through.
    shop = next(f for f in FEATURES if f.name == "shop")
    assert {"gate", "campaigns", "broadcasts"} <= set(shop.requires)


def test_an_unknown_requirement_is_named() -> None:
    with pytest.raises(ValueError, match="shop requires campaigns, which is not installed"):
        setup_order([feature("shop", "campaigns")])


def test_a_circle_of_requirements_is_named() -> None:
    circle = [feature("gate", "shop"), feature("shop", "campaigns"), feature("campaigns", "gate")]
    with pytest.raises(ValueError, match="gate -> shop -> campaigns -> gate"):
        setup_order(circle)
    with pytest.raises(ValueError, match="a -> a"):
        setup_order([feature("a", "a")])


def test_two_features_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="share a name"):
        setup_order([feature("a"), feature("a")])


@st.composite
def acyclic(draw: st.DrawFn) -> list[Feature]:
    """Features that each require only features made before them, listed in any order."""
    count = draw(st.integers(1, 8))
    made = [
        feature(f"f{i}", *draw(st.sets(st.sampled_from([f"f{j}" for j in range(i)]))))
        if i
        else feature("f0")
        for i in range(count)
    ]
    return draw(st.permutations(made))


@given(acyclic())
def test_any_acyclic_list_is_ordered_with_every_requirement_first(listed: list[Feature]) -> None:
    ordered = names(setup_order(listed))
    assert sorted(ordered) == sorted(names(listed))
    for f in listed:
        assert all(ordered.index(r) < ordered.index(f.name) for r in f.requires)
