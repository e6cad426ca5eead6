"""The team's alerts' pure rules: quiet hours (never inside them, never later than their end),
who receives which kind, the panel's time fields, and the texts in both languages."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta
from typing import Any, cast
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsorbot.features.alerts.deliver import after_quiet
from sponsorbot.features.alerts.digest import delta
from sponsorbot.features.alerts.kinds import KINDS, kinds_for, receives
from sponsorbot.features.alerts.messages import Alert, build
from sponsorbot.features.alerts.texts import TEAM_TEXTS
from sponsorbot.web.panel.routes_alerts import clock_of, minutes
from tests.examples import examples

ZONES = ["UTC", "Asia/Tehran", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"]
MOMENTS = st.datetimes(
    min_value=datetime(2024, 1, 1), max_value=datetime(2030, 12, 31), timezones=st.just(UTC)
)


def quiet_at(moment: datetime, zone: ZoneInfo, start: int, end: int) -> bool:
    local = moment.astimezone(zone)
    m = local.hour * 60 + local.minute
    return start <= m < end if start < end else (m >= start or m < end)


@settings(max_examples=examples(2000))
@given(
    MOMENTS,
    st.sampled_from(ZONES),
    st.integers(0, 1439),
    st.integers(0, 1439),
)
def test_an_alert_goes_now_or_at_the_end_of_the_quiet_hours_never_inside_them(
    now: datetime, zone_name: str, start: int, end: int
) -> None:
    zone = ZoneInfo(zone_name)
    due = after_quiet(now, zone, start, end)
    assert due >= now
    assert due - now <= timedelta(hours=25)  # a day, and an hour a clock change may add
    if start == end or not quiet_at(now, zone, start, end):
        assert due == now
    else:
        local = due.astimezone(zone)
        assert (local.hour * 60 + local.minute == end) or not quiet_at(due, zone, start, end)


def test_quiet_hours_across_midnight_in_tehran() -> None:
    zone = ZoneInfo("Asia/Tehran")  # UTC+03:30
    late = datetime(2026, 12, 5, 20, 0, tzinfo=UTC)  # 23:30 in Tehran
    due = after_quiet(late, zone, 22 * 60, 7 * 60)
    assert due.astimezone(zone) == datetime(2026, 12, 6, 7, 0, tzinfo=zone)
    noon = datetime(2026, 12, 5, 8, 30, tzinfo=UTC)  # 12:00 in Tehran
    assert after_quiet(noon, zone, 22 * 60, 7 * 60) == noon
    assert after_quiet(noon, zone, None, None) == noon


def test_each_role_receives_the_kinds_its_permission_covers_and_never_a_muted_one() -> None:
    assert kinds_for("owner") == list(KINDS)
    assert kinds_for("admin") == list(KINDS)
    assert set(kinds_for("editor")) == {"channel_rights", "campaign_done", "broadcast_done"}
    assert kinds_for("analyst") == []
    assert receives("order_review", "admin", [])
    assert not receives("order_review", "admin", ["order_review"])
    assert not receives("order_review", "editor", [])
    assert not receives("no_such_kind", "owner", [])


@pytest.mark.parametrize(
    ("typed", "value"),
    [("22:30", 1350), ("7:05", 425), ("۲۲:۳۰", 1350), ("00:00", 0), ("", None), (" 23:59 ", 1439)],
)
def test_a_time_of_day_is_read_in_latin_or_persian_digits(typed: str, value: int | None) -> None:
    assert minutes(typed) == value
    if value is not None:
        assert minutes(clock_of(value)) == value


@pytest.mark.parametrize("typed", ["24:00", "22:60", "2230", "noon", "22:3", "-1:00"])
def test_anything_else_is_refused(typed: str) -> None:
    with pytest.raises(ValueError):
        minutes(typed)


def test_both_languages_have_every_text_with_the_same_placeholders() -> None:
    field = re.compile(r"{(\w+)}")
    assert TEAM_TEXTS["en"].keys() == TEAM_TEXTS["fa"].keys()
    for key, english in TEAM_TEXTS["en"].items():
        assert set(field.findall(english)) == set(field.findall(TEAM_TEXTS["fa"][key])), key


def test_a_figure_against_the_day_before_reads_as_words() -> None:
    assert delta(12, 10, "en") == "+2"
    assert delta(8, 10, "en") == "−2"
    assert delta(5, 5, "en") == "same as the day before"
    assert delta(0, 0, "en") == "nothing the day before"
    assert delta(12, 10, "fa") == "\u2066+2\u2069"


async def test_a_channel_alert_names_the_missing_rights_in_the_members_language() -> None:
    data = {"bot": "cinema_bot", "channel": "Cinema", "status": "missing_rights"}
    alert = Alert("channel_rights", 7, {**data, "missing": ["can_invite_users"]}, 1, "en", "editor")
    # This kind reads nothing more from the database.
    made = await build(cast(Any, None), alert, "https://panel.example", datetime.now(UTC))
    assert made is not None
    assert "@cinema_bot lost its rights in Cinema" in made.text
    assert "rights missing: can_invite_users" in made.text
    assert made.keyboard == [
        [{"text": "Open in the panel", "url": "https://panel.example/bots/7/channels"}]
    ]
    persian = await build(
        cast(Any, None), dataclasses.replace(alert, language="fa"), None, datetime.now(UTC)
    )
    assert persian is not None and "دسترسی‌ها کم است" in persian.text and persian.keyboard is None
