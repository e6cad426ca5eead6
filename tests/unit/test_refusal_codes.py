"""Refusal codes: every code raised anywhere in `src/` is a `Code`, every `Code` is raised, and
each has its status and a text in both catalogues (`web/panel/refusals.py`)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import sponsorbot
from sponsorbot.features.bots.service import _AS_FEATURE
from sponsorbot.features.broadcasts.rules import Status as BroadcastStatus
from sponsorbot.features.errors import Code, FeatureError
from sponsorbot.web.panel import errors, i18n
from sponsorbot.web.panel.refusals import API_STATUS, REFUSALS

SRC = Path(sponsorbot.__file__).resolve().parent
KINDS: list[type[FeatureError]] = [FeatureError, *API_STATUS]
CLASSES = {kind.__name__: kind for kind in KINDS}
PLACEHOLDER = re.compile(r"%\((\w+)\)s")
# Codes that are not literals where they are raised, and what they are instead.
DYNAMIC = {
    # A move the broadcast's status does not allow: the code is the status (the API's answer).
    ("features/broadcasts/service.py", "status"),
    # The engine's refusals, turned into the features' by a table (read below).
    ("features/bots/service.py", "code"),
}
# Raised under two classes, so answered with two statuses: a malformed value is a 422 (or, for
# a bot's missing right seen by the campaign's check, names the bots), a state that forbids it
# a 409 (or Telegram's refusal a 400). The table holds the status of the second.
TWO_STATUSES = {Code.SHOP_ADDRESS, Code.ORDER_STATE, Code.TRANSFER_STATE, Code.RIGHTS_MISSING}
# Placeholders the panel fills from the refusal's details (errors.describe), not the table.
FROM_DETAILS = {
    Code.GATE_FULL: {"n"},
    Code.TOO_LARGE: {"mb"},
    Code.CAMPAIGN_OVERLAP: {"name"},
    Code.POST_TEXT: {"error"},
    Code.PREVIEW_REFUSED: {"error"},
}


def raised() -> dict[str, set[type[FeatureError]]]:
    """Each code raised in `src/`, with the classes it is raised as."""
    found: dict[str, set[type[FeatureError]]] = defaultdict(set)
    for path in SRC.rglob("*.py"):
        where = str(path.relative_to(SRC))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name not in CLASSES:
                continue
            for keyword in node.keywords:
                if keyword.arg != "code":
                    continue
                value = keyword.value
                if isinstance(value, ast.Constant):
                    found[str(value.value)].add(CLASSES[name])
                elif isinstance(value, ast.Attribute) and ast.unparse(value.value) == "Code":
                    found[Code[value.attr].value].add(CLASSES[name])
                else:
                    assert (where, ast.unparse(value)) in DYNAMIC, f"{where}: code={value}"
    for _engine, cls, code in _AS_FEATURE:
        found[code].add(cls)
    return found


def catalog(language: str) -> dict[str, str]:
    path = Path(i18n.__file__).resolve().parent.parent / "locale" / language / "LC_MESSAGES"
    with (path / "messages.po").open("rb") as po:
        return {str(m.id): str(m.string) for m in read_po(po) if m.id and not m.fuzzy}


def test_every_code_raised_is_a_code_and_every_code_is_raised() -> None:
    codes = raised()
    assert len(codes) > 50  # the scan finds the raises
    assert set(codes) - set(Code) == set(), "raised, but not in Code"
    assert set(Code) - set(codes) == set(), "in Code, but raised nowhere"


def test_a_broadcast_refused_for_its_status_is_coded_by_a_status_the_panel_names() -> None:
    from sponsorbot.web.panel.routes_broadcasts import STATUS_NAMES

    assert set(BroadcastStatus) == set(STATUS_NAMES)
    assert not set(BroadcastStatus) & set(Code)


def test_every_code_has_its_status_and_a_text() -> None:
    assert set(REFUSALS) == set(Code)
    for code, classes in raised().items():
        statuses = {API_STATUS.get(cls) for cls in classes}
        if Code(code) in TWO_STATUSES:
            assert len(statuses) == 2, code  # else it belongs with the others
        assert REFUSALS[Code(code)].status in statuses, code


@pytest.mark.parametrize("language", i18n.LANGUAGES)
def test_every_text_is_in_both_catalogues_with_its_placeholders(language: str) -> None:
    entries = catalog(language)
    for code, refusal in REFUSALS.items():
        translated = entries.get(refusal.text)
        assert translated, f"{language}: {code} has no text"
        wanted = set(PLACEHOLDER.findall(refusal.text))
        assert set(PLACEHOLDER.findall(translated)) == wanted, code
        filled = {name for name, _value in refusal.values} | FROM_DETAILS.get(code, set())
        assert wanted == filled, f"{code}: placeholders {wanted}, filled {filled}"


def test_the_panel_says_each_refusal_in_persian() -> None:
    i18n.use_language("fa")
    try:
        for code in Code:
            text = errors.describe(FeatureError("english", code=code, limit=1 << 20, most=3))
            assert text != "english" and "%(" not in text, code
            assert not re.search(r"[0-9]", text.replace("\u2066", "").replace("\u2069", "")) or (
                code in {Code.TOKEN_MALFORMED, Code.BUTTON_URL, Code.CHANNEL_REF}
            ), f"{code}: {text}"
    finally:
        i18n.use_language("en")


def test_an_unknown_code_falls_back_to_the_services_words() -> None:
    assert errors.describe(FeatureError("as the service said", code="nothing_like_it")) == (
        "as the service said"
    )
    assert errors.say("nothing_like_it") is None
