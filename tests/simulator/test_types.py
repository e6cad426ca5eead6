"""The table of Bot API types: closed, complete for the registry, and strict when building
and checking objects (pure logic, no server)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.simulator import botapi
from sponsorbot.simulator.types import (
    ADMIN_RIGHTS,
    RESULTS,
    SUPERGROUP_ONLY_RIGHTS,
    TYPES,
    UNIONS,
    ShapeError,
    check_shapes,
    problems,
    shape,
)

SCALARS = {"Integer", "Float", "String", "Boolean", "True"}


def base_kind(kind: str) -> str:
    kind = kind.removeprefix("optional ")
    while kind.startswith("Array of "):
        kind = kind.removeprefix("Array of ")
    return kind


def test_every_kind_the_table_names_is_in_the_table() -> None:
    named = {base_kind(k) for fields in TYPES.values() for k in fields.values()}
    named |= {base_kind(k) for k in RESULTS.values()}
    named |= {v for _, variants in UNIONS.values() for v in variants.values()}
    unknown = {k for k in named if k not in SCALARS and not k.startswith('"')}
    assert unknown <= TYPES.keys() | UNIONS.keys()


def test_every_method_of_the_registry_has_a_result_type() -> None:
    assert {m.lower() for m in RESULTS} == set(botapi.METHODS)


def test_union_variants_carry_their_discriminator() -> None:
    for key, variants in UNIONS.values():
        for value, variant in variants.items():
            assert TYPES[variant][key] == f'"{value}"'


# The fields Telegram lists as required, as measured missing by aiogram 3.31 (issue 18).
@pytest.mark.parametrize(
    ("type_name", "field"),
    [
        ("ChatMemberRestricted", "can_react_to_messages"),
        ("ChatMemberRestricted", "can_edit_tag"),
        ("ChatMemberAdministrator", "can_send_welcome_messages"),
        ("ChatFullInfo", "accepted_gift_types"),
        ("ChatFullInfo", "max_reaction_count"),
        ("ChatFullInfo", "accent_color_id"),
    ],
)
def test_fields_clients_require_are_required(type_name: str, field: str) -> None:
    assert not TYPES[type_name][field].startswith("optional")


def test_shape_fills_constants_and_leaves_empty_optionals_out() -> None:
    user = {"id": 1, "is_bot": False, "first_name": "A"}
    assert shape("ChatMemberLeft", user=user) == {"status": "left", "user": user}
    built = shape(
        "Message",
        message_id=1,
        from_=user,
        chat={"id": 1, "type": "private"},
        date=0,
        text="hi",
        entities=[],
        caption=None,
        has_protected_content=False,
        edit_date=None,
    )
    assert built == {
        "message_id": 1,
        "from": user,
        "chat": {"id": 1, "type": "private"},
        "date": 0,
        "text": "hi",
    }


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"id": 1, "is_bot": False}, "User lacks required first_name"),
        ({"id": 1, "is_bot": False, "first_name": None}, "User lacks required first_name"),
        ({"id": 1, "is_bot": False, "first_name": "A", "nick": "x"}, "User has no field 'nick'"),
    ],
)
def test_shape_refuses_what_the_type_does_not_allow(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        shape("User", **values)
    # The simulator itself builds without checking (the tests check, as here).
    previous = check_shapes(False)
    try:
        shape("User", **values)
    finally:
        check_shapes(previous)


def test_shape_takes_fields_that_are_all_there_as_they_are() -> None:
    # An administrator's rights: false ones are values, given as one mapping.
    rights = {right: False for right in ADMIN_RIGHTS + SUPERGROUP_ONLY_RIGHTS}
    built = shape("ChatMemberAdministrator", rights, user=USER, can_be_edited=False)
    assert built == {"status": "administrator", "user": USER, "can_be_edited": False, **rights}
    assert problems("ChatMemberAdministrator", built) == []
    with pytest.raises(ShapeError, match="given no value for can_manage_tags"):
        shape("ChatMemberAdministrator", {**rights, "can_manage_tags": None}, user=USER)
    with pytest.raises(ShapeError, match="lacks required can_be_edited"):
        shape("ChatMemberAdministrator", rights, user=USER)


USER = {"id": 1, "is_bot": False, "first_name": "A"}


@pytest.mark.parametrize(
    ("kind", "value", "found"),
    [
        ("User", USER, []),
        ("User", {"id": 1, "is_bot": False}, ["$: User lacks required 'first_name'"]),
        ("User", USER | {"nick": "x"}, ["$: User has no field 'nick'"]),
        ("User", USER | {"id": True}, ["$.id: True is not Integer"]),
        ("User", USER | {"is_premium": False}, ["$.is_premium: False is not True"]),
        ("Array of User", [USER, 5], ["$[1]: expected User, got int"]),
        ("ChatMember", {"status": "left", "user": USER}, []),
        (
            "ChatMember",
            {"status": "gone", "user": USER},
            ["$: no ChatMember variant for status='gone'"],
        ),
        (
            "ChatMember",
            {"status": "kicked", "user": USER},
            ["$: ChatMemberBanned lacks required 'until_date'"],
        ),
        (
            "Update",
            {"update_id": 1, "message": {}},
            [
                "$.message: Message lacks required 'chat'",
                "$.message: Message lacks required 'date'",
                "$.message: Message lacks required 'message_id'",
            ],
        ),
        ("Float", 1.5, []),
        ("Integer", 1.5, ["$: 1.5 is not Integer"]),
    ],
)
def test_problems_name_each_fault_with_its_path(kind: str, value: Any, found: list[str]) -> None:
    assert problems(kind, value) == found


SCALAR_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "Integer": st.integers(),
    "Float": st.floats(allow_nan=False),
    "String": st.text(),
    "Boolean": st.booleans(),
    "True": st.booleans(),
}
FLAT_TYPES = [
    name
    for name, fields in TYPES.items()
    if fields and all(k.removeprefix("optional ") in SCALAR_VALUES for k in fields.values())
]


@st.composite
def flat_objects(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(FLAT_TYPES))
    values = {}
    for field, kind in TYPES[name].items():
        optional = kind.startswith("optional ")
        if optional and draw(st.booleans()):
            continue
        value = draw(SCALAR_VALUES[kind.removeprefix("optional ")])
        values[field] = True if kind == "True" else value
    return name, values


@given(flat_objects())
def test_whatever_shape_builds_passes_the_check(case: tuple[str, dict[str, Any]]) -> None:
    name, values = case
    assert problems(name, shape(name, **values)) == []
