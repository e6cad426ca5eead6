"""The joins-and-leaves chart: leaves on a scale of their own below the line, each scale
written at its end (the lower one negative), and an empty chart that says so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sponsorbot.features.campaigns.queries import Hour
from sponsorbot.web.panel import chart, i18n
from sponsorbot.web.panel.web import make_environment

START = datetime(2026, 11, 20, tzinfo=UTC)


def _days(joins: list[int], leaves: list[int]) -> list[Hour]:
    # More hours than a week: one bar a day.
    hours = []
    for day, (j, left) in enumerate(zip(joins, leaves, strict=True)):
        for hour in range(24):
            at = START + timedelta(days=day, hours=hour)
            hours.append(Hour(at, j if hour == 12 else 0, left if hour == 13 else 0))
    return hours


def _svg(c: chart.Chart) -> str:
    i18n.use_language("en")
    module = make_environment().from_string(
        '{% from "_chart.html" import joins_chart %}{{ joins_chart(c) }}'
    )
    return module.render(c=c)


def test_leaves_fill_their_own_part_of_the_plot_on_their_own_scale() -> None:
    c = chart.build(_days([407, 300, 120, 90, 50, 30, 20, 10], [10, 25, 12, 5, 0, 3, 2, 1]), "UTC")
    assert c.per_day and c.top == 407 and c.bottom == 25
    below = c.bottom_edge - c.middle
    tallest = max(b.leave_height for b in c.bars)
    assert abs(tallest - below) < 0.01  # 25 leaves reach the lower edge, not a sliver
    joins_top = max(b.join_height for b in c.bars)
    assert abs(joins_top - (c.middle - c.top_edge)) < 0.01
    assert below < c.middle - c.top_edge  # joins keep the larger part
    svg = _svg(c)
    assert ">407</text>" in svg and ">−25</text>" in svg and ">0</text>" in svg
    assert "No joins yet" not in svg


def test_a_new_campaign_says_no_joins_yet_instead_of_a_one_zero_one_scale() -> None:
    c = chart.build([Hour(START, 0, 0)], "UTC")
    svg = _svg(c)
    assert "No joins yet" in svg
    assert ">1</text>" not in svg and ">−1</text>" not in svg
