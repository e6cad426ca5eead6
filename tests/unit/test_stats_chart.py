"""The statistics charts: geometry invariants, labels in both languages, and the SVG they render."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sponsorbot.web.panel import i18n, stats_chart
from sponsorbot.web.panel.stats_chart import SeriesChart
from sponsorbot.web.panel.web import make_environment
from tests.examples import examples

ZONE = "Asia/Tehran"
START = datetime(2026, 3, 20, 20, 30, tzinfo=UTC)  # 00:00 on 21 March (Nowruz) in Tehran
EPSILON = 0.011  # two rounded numbers added together may be off by this much


@pytest.fixture
def persian() -> Iterator[None]:
    i18n.use_language("fa")
    yield
    i18n.use_language("en")


def hours(values: list[int]) -> list[tuple[datetime, int]]:
    return [(START + timedelta(hours=i), v) for i, v in enumerate(values)]


def days(values: list[int]) -> list[tuple[datetime, int]]:
    return [(START + timedelta(days=i), v) for i, v in enumerate(values)]


def assert_inside_plot(chart: SeriesChart) -> None:
    for bar in chart.bars:
        assert chart.left - EPSILON <= bar.x
        assert bar.x + bar.width <= chart.right_edge + EPSILON
        assert chart.top_edge - EPSILON <= bar.y
        assert bar.y + bar.height == pytest.approx(chart.bottom_edge, abs=EPSILON)
        assert bar.slot_x <= bar.x and bar.x + bar.width <= bar.slot_x + bar.slot_width + EPSILON


@pytest.mark.parametrize(
    ("top", "ticks"),
    [
        (1, [0, 1]),
        (3, [0, 1, 2, 3]),
        (5, [0, 2, 4, 6]),
        (10, [0, 5, 10]),
        (11, [0, 5, 10, 15]),
        (1234, [0, 500, 1000, 1500]),
        (100_000, [0, 50_000, 100_000]),
    ],
)
def test_the_scale_steps_by_round_numbers_and_covers_the_top(top: int, ticks: list[int]) -> None:
    chart = stats_chart.series(hours([top, 0]), None, ZONE, "hour", "Joins")
    assert [t.value for t in chart.ticks] == ticks
    assert [t.label.text for t in chart.ticks] == [f"{t:,}" for t in ticks]
    ys = [t.y for t in chart.ticks]
    assert ys == sorted(ys, reverse=True)  # higher values higher up
    assert ys[0] == chart.bottom_edge and ys[-1] >= chart.top_edge


def test_one_day_has_a_bar_per_hour_proportional_to_its_value() -> None:
    values = [i * 7 % 50 for i in range(24)]
    chart = stats_chart.series(hours(values), None, ZONE, "hour", "Joins")
    assert not chart.empty and len(chart.bars) == 24 and chart.total == sum(values)
    assert chart.caption == "Joins per hour"
    assert_inside_plot(chart)
    ceiling = chart.ticks[-1].value
    plot = chart.bottom_edge - chart.top_edge
    for bar, value in zip(chart.bars, values, strict=True):
        assert bar.height == pytest.approx(plot * value / ceiling, abs=0.01)
    xs = [b.x for b in chart.bars]
    assert xs == sorted(xs)  # time runs left to right
    assert chart.bars[0].title == "2026-03-21 00:00: 0"
    assert chart.bars[1].title == "2026-03-21 01:00: 7"
    assert [label.text for label in chart.labels] == [f"{h:02d}:00" for h in range(0, 24, 3)]


def test_day_labels_are_thinned_so_they_never_overlap() -> None:
    for count in (1, 2, 7, 31, 90, 366):
        chart = stats_chart.series(days([5] * count), None, ZONE, "day", "Joins")
        assert 1 <= len(chart.labels) <= stats_chart.MAX_LABELS
        width = max(len(label.text) for label in chart.labels) * stats_chart.CHAR_WIDTH
        for a, b in zip(chart.labels, chart.labels[1:], strict=False):
            assert b.x - a.x >= width
        for label in chart.labels:
            half = len(label.text) * stats_chart.CHAR_WIDTH / 2
            assert half <= label.x <= stats_chart.WIDTH - half
    chart = stats_chart.series(days([5] * 31), None, ZONE, "day", "Joins")
    assert chart.labels[0].text == "2026-03-21" and chart.caption == "Joins per day"


def test_the_previous_period_is_aligned_by_position() -> None:
    chart = stats_chart.series(hours([4, 8, 2]), [2, 10, 0, 99], ZONE, "hour", "Joins")
    assert chart.previous_total == 12  # the value past the last bar is dropped
    points = [tuple(map(float, p.split(","))) for p in chart.previous_points.split()]
    assert len(points) == 3
    ceiling = chart.ticks[-1].value
    assert ceiling >= 10  # the scale covers the previous period too
    plot = chart.bottom_edge - chart.top_edge
    for (x, y), bar, old in zip(points, chart.bars, [2, 10, 0], strict=True):
        assert x == pytest.approx(bar.slot_x + bar.slot_width / 2, abs=EPSILON)
        assert y == pytest.approx(chart.bottom_edge - plot * old / ceiling, abs=EPSILON)
        assert bar.previous == old
    assert chart.bars[1].title == "2026-03-21 01:00: 8 (previous period: 10)"
    shorter = stats_chart.series(hours([4, 8, 2]), [1], ZONE, "hour", "Joins")
    assert len(shorter.previous_points.split()) == 1 and shorter.bars[1].previous is None
    assert stats_chart.series(hours([4]), None, ZONE, "hour", "Joins").previous_points == ""


def test_an_empty_range_is_flagged_not_drawn() -> None:
    for chart in (
        stats_chart.series([], None, ZONE, "day", "Joins"),
        stats_chart.series([], [5, 6], ZONE, "day", "Joins"),
        stats_chart.series(days([0, 0, 0]), [0, 0], ZONE, "day", "Joins"),
    ):
        assert chart.empty and not chart.bars and not chart.ticks and not chart.labels
    assert not stats_chart.series(days([0, 0]), [0, 3], ZONE, "day", "Joins").empty


def test_persian_series_uses_jalali_dates_and_persian_digits(persian: None) -> None:
    chart = stats_chart.series(days([1234, 5]), None, ZONE, "day", "عضویت")
    assert chart.labels[0].text == "۱۴۰۵/۰۱/۰۱"
    assert chart.bars[0].title == "۱۴۰۵/۰۱/۰۱: ۱٬۲۳۴"
    assert [t.label.text for t in chart.ticks] == ["۰", "۵۰۰", "۱٬۰۰۰", "۱٬۵۰۰"]
    hourly = stats_chart.series(hours([1] * 24), None, ZONE, "hour", "عضویت")
    assert hourly.labels[1].text == "۰۳:۰۰"


def test_heat_map_classes_rise_linearly_to_the_busiest_hour() -> None:
    expected = {0: 0, 1: 1, 25: 1, 26: 2, 50: 2, 51: 3, 75: 3, 76: 4, 100: 4}
    assert {v: stats_chart.level(v, 100) for v in expected} == expected
    for top in range(1, 40):
        legend = stats_chart._legend(top)
        assert legend[0].level == 0
        for value in range(1, top + 1):
            item = next(i for i in legend if i.level == stats_chart.level(value, top))
            low, _, high = item.text.partition("–")
            assert int(low) <= value <= int(high or low)


def test_heat_map_grid_labels_and_hovers() -> None:
    chart = stats_chart.heatmap({(3, 21): 1234, (0, 0): 1, (9, 9): 50}, "en")
    assert not chart.empty and chart.top == 1234 and chart.total == 1235
    assert [r.name for r in chart.rows][:2] == ["Monday", "Tuesday"]
    assert [r.label.text for r in chart.rows] == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    thursday = chart.rows[3].cells[21]
    assert thursday.title == "Thursday 21:00 — 1,234" and thursday.level == 4
    assert chart.rows[0].cells[0].level == 1 and chart.rows[1].cells[0].level == 0
    assert [c.text for c in chart.columns] == [f"{h:02d}:00" for h in range(0, 24, 3)]
    for row in chart.rows:
        assert len(row.cells) == 24
        for cell in row.cells:
            assert cell.x >= 0 and cell.x + cell.width <= chart.width
            assert cell.y >= 0 and cell.y + cell.height <= chart.height
    assert stats_chart.heatmap({}, "en").empty
    assert stats_chart.heatmap({(1, 1): 0}, "fa").empty


def test_the_persian_week_starts_on_saturday() -> None:
    order = [r.name for r in stats_chart.heatmap({(3, 21): 1}, "fa").rows]
    assert order == ["Saturday", "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def test_persian_heat_map_names_and_digits(persian: None) -> None:
    chart = stats_chart.heatmap({(3, 21): 1234}, "fa")
    assert chart.rows[0].name == i18n.gettext("Saturday")
    assert chart.rows[5].cells[21].title == f"{i18n.gettext('Thursday')} ۲۱:۰۰ — ۱٬۲۳۴"
    assert chart.legend[-1].text == "۹۲۶–۱٬۲۳۴"
    assert chart.columns[1].text == "۰۳:۰۰"


def test_funnel_shares_of_the_first_and_the_previous_step() -> None:
    chart = stats_chart.funnel([("Saw the gate", 1000), ("Joined", 250), ("Stayed", 300)])
    full = stats_chart.WIDTH - 2 * stats_chart.FUNNEL_SIDE
    assert [s.width for s in chart.steps] == [full, full / 4, full * 0.3]
    for step in chart.steps:
        assert step.x + step.width / 2 == pytest.approx(chart.width / 2)  # centred
        assert step.y >= 0 and step.y + step.height <= chart.height
    assert [s.share_of_first for s in chart.steps] == [100.0, 25.0, 30.0]
    assert [s.share_of_previous for s in chart.steps] == [None, 25.0, 120.0]
    assert [s.of_previous for s in chart.steps] == ["", "25.0%", "120.0%"]
    assert chart.steps[0].caption == "Saw the gate: 1,000"
    assert chart.steps[2].caption == (
        "Stayed: 300 · 30.0% of the first step · 120.0% of the previous step"
    )
    assert chart.direction == "ltr"


def test_funnel_with_a_zero_first_step_or_none_at_all() -> None:
    chart = stats_chart.funnel([("Saw", 0), ("Joined", 5), ("Stayed", 0)])
    assert [s.width for s in chart.steps] == [0, 0, 0]
    assert [s.of_first for s in chart.steps] == ["—", "—", "—"]
    assert [s.of_previous for s in chart.steps] == ["", "—", "0.0%"]
    big = stats_chart.funnel([("Saw", 10), ("Joined", 35)])
    assert big.steps[1].width == stats_chart.WIDTH - 2 * stats_chart.FUNNEL_SIDE  # capped
    assert big.steps[1].of_first == "350.0%"
    assert stats_chart.funnel([]).empty


def test_persian_funnel_percentages(persian: None) -> None:
    chart = stats_chart.funnel([("دیدن", 3), ("عضویت", 1)])
    assert chart.direction == "rtl"
    assert chart.steps[1].of_first == "۳۳٫۳٪"
    assert chart.steps[0].of_first == "۱۰۰٫۰٪"


def coordinates(obj: object) -> Iterator[tuple[str, float]]:
    """Every number of a chart's geometry, by field name, however deep."""
    for name in getattr(obj, "__dataclass_fields__", {}):
        value = getattr(obj, name)
        if isinstance(value, float | int) and not isinstance(value, bool):
            yield name, float(value)
        elif isinstance(value, list):
            for item in value:
                yield from coordinates(item)
        else:
            yield from coordinates(value)


counts = st.integers(min_value=0, max_value=10**12)


@settings(max_examples=examples(150), deadline=None)
@given(
    values=st.lists(counts, max_size=400),
    previous=st.none() | st.lists(counts, max_size=420),
    per=st.sampled_from(["hour", "day"]),
)
def test_any_series_stays_finite_and_inside_its_view_box(
    values: list[int], previous: list[int] | None, per: str
) -> None:
    points = hours(values) if per == "hour" else days(values)
    chart = stats_chart.series(points, previous, ZONE, "hour" if per == "hour" else "day", "J")
    for name, value in coordinates(chart):
        assert math.isfinite(value)
        if name in ("x", "slot_x", "width", "slot_width"):
            assert 0 <= value <= chart.width + EPSILON
        elif name in ("y", "height"):
            assert 0 <= value <= chart.height
    assert_inside_plot(chart)
    for point in chart.previous_points.split():
        x, y = map(float, point.split(","))
        assert chart.left <= x <= chart.right_edge and chart.top_edge <= y <= chart.bottom_edge


@settings(max_examples=examples(100), deadline=None)
@given(
    cells=st.dictionaries(st.tuples(st.integers(0, 6), st.integers(0, 23)), counts),
    steps=st.lists(st.tuples(st.just("s"), counts), max_size=8),
)
def test_any_heat_map_and_funnel_stay_inside_their_view_boxes(
    cells: dict[tuple[int, int], int], steps: list[tuple[str, int]]
) -> None:
    heat = stats_chart.heatmap(cells, "en")
    for row in heat.rows:
        for cell in row.cells:
            assert 0 <= cell.level <= stats_chart.HEAT_LEVELS
            assert (cell.level == 0) == (cell.value == 0)
            assert cell.x >= 0 and cell.x + cell.width <= heat.width
    shape = stats_chart.funnel(steps)
    for step in shape.steps:
        assert step.x >= 0 and step.x + step.width <= shape.width + EPSILON
        for share in (step.share_of_first, step.share_of_previous):
            assert share is None or math.isfinite(share)
    for chart in (heat, shape):
        assert all(math.isfinite(v) for _, v in coordinates(chart))


SVG = re.compile(r"<svg .*?</svg>", re.DOTALL)


def parse(svg: str) -> ET.Element:
    """The svg as XML; it is our own template's output, not untrusted input."""
    return ET.fromstring(svg)  # noqa: S314


@pytest.mark.parametrize("language", ["en", "fa"])
def test_the_macros_render_well_formed_svg(language: str) -> None:
    i18n.use_language(language)
    try:
        env = make_environment()
        page = env.from_string(
            '{% from "_stats_charts.html" import series_chart, heat_map, funnel_bars %}'
            "{{ series_chart(s) }}{{ heat_map(h) }}{{ funnel_bars(f) }}{{ series_chart(e) }}"
        ).render(
            s=stats_chart.series(days([3, 1234, 0, 7]), [1, 2, 3, 4], ZONE, "day", "Joins"),
            h=stats_chart.heatmap({(3, 21): 1234, (5, 9): 3}, language),
            f=stats_chart.funnel([("Saw <gate>", 10), ("Joined", 4)]),
            e=stats_chart.series([], None, ZONE, "day", "Joins"),
        )
        svgs = SVG.findall(page)
        assert len(svgs) == 3
        for svg in svgs:
            root = parse(svg)
            # dir alone does not reach svg text: direction keeps "end" anchors on the left
            assert root.get("dir") == root.get("direction") == "ltr"
            assert root.get("role") == "img"
            assert root.get("aria-label")
            assert root.findall(".//title")
        assert page.count('class="visually-hidden"') == 3
        assert i18n.gettext("No data in this range") in page
        if language == "fa":
            assert "۱٬۲۳۴" in page and "۱۴۰۵/۰۱/۰۲" in page and 'direction="rtl"' in page
            texts = [t.text or "" for svg in svgs for t in parse(svg).iter("text")]
            assert texts and not any(re.search("[0-9]", t) for t in texts)
        else:
            assert "1,234" in page and "2026-03-22" in page
        assert "Saw &lt;gate&gt;" in page
    finally:
        i18n.use_language("en")
