"""The simulator's one reader of client numbers, chat references and JSON fields, against
tdlib's to_integer / to_integer_safe (tdutils/td/utils/misc.h) and JsonObject's field getters
(tdutils/td/utils/JsonBuilder.cpp). Each case names what tdlib does."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.simulator.readers import (
    FieldError,
    chat_ref,
    integer,
    optional_integer,
    optional_text,
    required,
    required_integer,
    to_integer,
    to_integer_safe,
)

HUGE = "1" * 5000  # past Python's int() limit of 4300 digits
# HUGE is (10**5000 - 1) / 9: its value modulo 2**64, found without writing it out, as int64.
_HUGE_MOD = (pow(10, 5000, 9 << 64) - 1) // 9
HUGE_INT64 = _HUGE_MOD - (1 << 64) if _HUGE_MOD >= 1 << 63 else _HUGE_MOD

TO_INTEGER = [
    ("tdlib: the leading digits", "12abc", 64, 12),
    ("tdlib: no digits is 0", "abc", 64, 0),
    ("tdlib: one minus only", "--5", 64, 0),
    ("tdlib: a minus alone", "-", 64, 0),
    ("tdlib: superscript two is no digit", "²", 64, 0),
    ("tdlib: Arabic-Indic three is no digit", "٣", 64, 0),
    ("tdlib: a digit after a non-ASCII one is not read", "1٣2", 64, 1),
    ("tdlib: no plus sign", "+5", 64, 0),
    ("tdlib: spaces are not skipped", " 5", 64, 0),
    ("tdlib: negative", "-42x", 64, -42),
    ("tdlib: wraps past int64", "9223372036854775808", 64, -(1 << 63)),
    ("tdlib: wraps past int32", "4294967297", 32, 1),
    ("tdlib: int64 minimum", "-9223372036854775808", 64, -(1 << 63)),
    ("tdlib: thousands of digits wrap too", HUGE, 64, HUGE_INT64),
    ("tdlib: and negative ones", "-" + HUGE, 64, -HUGE_INT64),
]


@pytest.mark.parametrize(("case", "text", "bits", "value"), TO_INTEGER)
def test_to_integer_reads_as_tdlib_does(case: str, text: str, bits: int, value: int) -> None:
    assert to_integer(text, bits) == value


@given(st.integers(min_value=-(10**40), max_value=10**40), st.sampled_from([32, 64]))
def test_to_integer_wraps_like_twos_complement(number: int, bits: int) -> None:
    wrapped = number % (1 << bits)
    if wrapped >= 1 << (bits - 1):
        wrapped -= 1 << bits
    assert to_integer(str(number), bits) == wrapped
    assert integer(number, bits) == wrapped  # a JSON number reads as its text


TO_INTEGER_SAFE = [
    ("tdlib: canonical", "123", 64, 123),
    ("tdlib: negative", "-7", 64, -7),
    ("tdlib: leading zero refused", "007", 64, None),
    ("tdlib: minus zero refused", "-0", 64, None),
    ("tdlib: plus refused", "+1", 64, None),
    ("tdlib: trailing text refused", "1x", 64, None),
    ("tdlib: empty refused", "", 64, None),
    ("tdlib: Arabic-Indic digits refused", "٣", 64, None),
    ("tdlib: superscript refused", "²", 64, None),
    ("tdlib: int64 maximum", "9223372036854775807", 64, (1 << 63) - 1),
    ("tdlib: past int64 refused", "9223372036854775808", 64, None),
    ("tdlib: past int32 refused", "2147483648", 32, None),
    ("tdlib: thousands of digits refused", HUGE, 64, None),
    ("tdlib: a fraction is no integer", "1.0", 64, None),
]


@pytest.mark.parametrize(("case", "text", "bits", "value"), TO_INTEGER_SAFE)
def test_to_integer_safe_wants_the_canonical_form(
    case: str, text: str, bits: int, value: int | None
) -> None:
    assert to_integer_safe(text, bits) == value


CHAT_REFS = [
    ("check_chat: a number", "-1001234", -1001234),
    ("check_chat: a JSON number", -1001234, -1001234),
    ("check_chat: a username as it is", "@news", "@news"),
    ("check_chat: text is to_integer's", "12abc", 12),
    ("check_chat: no number is chat 0", "news", 0),
    ("check_chat: superscript is chat 0", "²", 0),
    ("check_chat: two minus signs are chat 0", "--5", 0),
    ("check_chat: thousands of digits wrap", HUGE, HUGE_INT64),
    ("check_chat: a JSON number past int64 wraps", 1 << 64, 0),
]


@pytest.mark.parametrize(("case", "value", "ref"), CHAT_REFS)
def test_chat_ref_reads_chat_id_as_check_chat_does(
    case: str, value: object, ref: int | str
) -> None:
    assert chat_ref(value) == ref


FIELDS = [
    ("JsonObject: a number", {"n": 5}, 5),
    ("JsonObject: a string holding a number", {"n": "5"}, 5),
    ("JsonObject: absent is 0", {}, 0),
    ("JsonObject: a boolean is no Number", {"n": True}, 'Field "n" must be a Number'),
    ("JsonObject: null is no Number", {"n": None}, 'Field "n" must be a Number'),
    ("JsonObject: a fraction", {"n": 1.5}, 'Field "n" must be a valid Number'),
    ("JsonObject: leading zeros", {"n": "05"}, 'Field "n" must be a valid Number'),
    ("JsonObject: past int32", {"n": 1 << 31}, 'Field "n" must be a valid Number'),
    ("JsonObject: thousands of digits", {"n": HUGE}, 'Field "n" must be a valid Number'),
    ("JsonObject: superscript", {"n": "²"}, 'Field "n" must be a valid Number'),
]


@pytest.mark.parametrize(("case", "obj", "expected"), FIELDS)
def test_integer_fields_as_json_object_reads_them(
    case: str, obj: dict[str, object], expected: int | str
) -> None:
    if isinstance(expected, int):
        assert optional_integer(obj, "n") == expected
    else:
        with pytest.raises(FieldError, match=expected):
            optional_integer(obj, "n")


def test_required_and_text_fields() -> None:
    with pytest.raises(FieldError, match='Can\'t find field "n"'):
        required_integer({}, "n")
    assert required_integer({"n": str(1 << 40)}, "n", 64) == 1 << 40
    assert optional_text({"s": 12}, "s") == "12"  # a number is taken as its text
    assert optional_text({}, "s") is None
    with pytest.raises(FieldError, match='Field "s" must be of type String'):
        optional_text({"s": False}, "s")
    with pytest.raises(FieldError, match='Field "o" must be of type Object'):
        required({"o": []}, "o", dict)
