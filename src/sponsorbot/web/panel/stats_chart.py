"""The statistics pages' charts, drawn on the server as SVG geometry (no script, no CDN).

Three shapes, each a plain dataclass that `templates/_stats_charts.html` turns into an <svg>:
a series of bars per hour or day with the previous period as a dashed line, the week's heat
map (weekday × hour) and a funnel. Like chart.py, time runs left to right in both languages
and only the digits, dates and names follow the language; the funnel is centred, so it reads
the same way from either side. Every coordinate is rounded to 2 decimals and finite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo

from sponsorbot.web.panel import i18n
from sponsorbot.web.panel.i18n import N_

WIDTH = 720  # every chart's viewBox is this wide; the page scales it
CHAR_WIDTH = 6.6  # a generous average advance of an 11px digit, Latin or Persian
LABEL_GAP = 10  # the least room between two time labels

# The series: margins hold the scale on the left and the time labels below.
SERIES_HEIGHT = 240
SERIES_LEFT = 56
SERIES_RIGHT = 8
SERIES_TOP = 12
SERIES_BOTTOM = 28
TICKS = 4  # at most this many steps of the scale above zero
MAX_LABELS = 8
BAR_SHARE = 0.7  # of its slot; the rest is the gap between bars

# The heat map: weekday names on the left, hours below.
HEAT_LEFT = 72  # room for the longest Persian weekday name
HEAT_RIGHT = 8
HEAT_TOP = 8
HEAT_ROW = 24
HEAT_GAP = 2
HEAT_LEVELS = 4  # intensity classes above "none"
HOUR_EVERY = 3

# The funnel: a line of text over each bar.
FUNNEL_ROW = 48
FUNNEL_BAR = 20
FUNNEL_SIDE = 8

DAY_NAMES = (
    N_("Monday"),
    N_("Tuesday"),
    N_("Wednesday"),
    N_("Thursday"),
    N_("Friday"),
    N_("Saturday"),
    N_("Sunday"),
)
DAY_SHORT = (N_("Mon"), N_("Tue"), N_("Wed"), N_("Thu"), N_("Fri"), N_("Sat"), N_("Sun"))
WEEK_START = {"fa": 5}  # the Iranian week starts on Saturday; others here on Monday


@dataclass(frozen=True, slots=True)
class Label:
    """A text the template places at (x, y); `anchor` is the SVG text-anchor."""

    x: float
    y: float
    text: str
    anchor: str = "middle"


@dataclass(frozen=True, slots=True)
class Tick:
    """One step of the scale: its grid line's height, its number and where that is written."""

    y: float
    value: int
    label: Label


@dataclass(frozen=True, slots=True)
class SeriesBar:
    """One hour or day: its slot (the hover area), its bar and what a hover says."""

    slot_x: float
    slot_width: float
    x: float
    y: float
    width: float
    height: float
    value: int
    previous: int | None
    when: str
    title: str


@dataclass
class SeriesChart:
    """Everything the series template draws; `empty` when the range holds nothing to show."""

    label: str
    caption: str
    per: Literal["hour", "day"]
    total: int
    previous_total: int | None
    bars: list[SeriesBar] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    previous_points: str = ""  # the dashed line's polyline points, "x,y x,y …"
    width: int = WIDTH
    height: int = SERIES_HEIGHT
    left: int = SERIES_LEFT
    right_edge: int = WIDTH - SERIES_RIGHT
    top_edge: int = SERIES_TOP
    bottom_edge: int = SERIES_HEIGHT - SERIES_BOTTOM

    @property
    def empty(self) -> bool:
        """True when there is no bar to draw: no points, or only zeros in both periods."""
        return not self.bars


@dataclass(frozen=True, slots=True)
class Cell:
    """One hour of one weekday: its square, its intensity class (0 = none) and its hover."""

    x: float
    y: float
    width: float
    height: float
    level: int
    value: int
    title: str


@dataclass(frozen=True, slots=True)
class HeatRow:
    """One weekday: its full name (hovers, the table), its short label and its 24 cells."""

    name: str
    label: Label
    cells: list[Cell]


@dataclass(frozen=True, slots=True)
class LegendItem:
    """One intensity class and the counts it stands for, e.g. "1–25"."""

    level: int
    text: str


@dataclass
class HeatMap:
    """Everything the heat map template draws; `empty` when every hour counts zero."""

    top: int
    total: int
    rows: list[HeatRow] = field(default_factory=list)
    columns: list[Label] = field(default_factory=list)
    hours: list[str] = field(default_factory=list)
    legend: list[LegendItem] = field(default_factory=list)
    width: int = WIDTH
    height: int = HEAT_TOP + 7 * HEAT_ROW + 24

    @property
    def empty(self) -> bool:
        """True when no hour of the week counts anything."""
        return self.top == 0


@dataclass(frozen=True, slots=True)
class FunnelStep:
    """One step: its centred bar, its line of text and its shares (percent, None if undefined)."""

    name: str
    count: int
    x: float
    y: float
    width: float
    height: float
    text: Label
    share_of_first: float | None
    share_of_previous: float | None
    of_first: str
    of_previous: str
    caption: str


@dataclass
class Funnel:
    """Everything the funnel template draws; `direction` is the language's, for its text."""

    direction: str
    steps: list[FunnelStep] = field(default_factory=list)
    width: int = WIDTH
    height: int = 0

    @property
    def empty(self) -> bool:
        """True when the funnel has no step."""
        return not self.steps


def _r(value: float) -> float:
    return round(value, 2)


def _scale(top: int) -> list[int]:
    """Round steps of 1, 2 or 5 × 10^k from zero up past `top`, at most TICKS of them."""
    magnitude = 1
    while True:
        for multiple in (1, 2, 5):
            step = multiple * magnitude
            if step * TICKS >= top:
                return [step * k for k in range(-(-top // step) + 1)]
        magnitude *= 10


def _time_label(moment: datetime, zone: str, per: str) -> str:
    if per == "hour":
        return i18n.localize_digits(moment.astimezone(ZoneInfo(zone)).strftime("%H:00"))
    return i18n.format_datetime(moment, zone, with_time=False)


def series(
    points: list[tuple[datetime, int]],
    previous: list[int] | None,
    zone: str,
    per: Literal["hour", "day"],
    label: str,
) -> SeriesChart:
    """The bars of `points` (one per hour or day, oldest first) in the zone `zone`.

    `previous` holds the previous period's values, aligned by position with `points`: its
    first value is drawn over the first bar, and values past the last bar are dropped.
    `label` names what is counted ("Joins"); it titles the chart and its legend.
    """
    values = [v for _, v in points]
    before = previous[: len(points)] if previous is not None else None
    caption = (
        i18n.gettext("%(label)s per hour", label=label)
        if per == "hour"
        else i18n.gettext("%(label)s per day", label=label)
    )
    chart = SeriesChart(
        label=label,
        caption=caption,
        per=per,
        total=sum(values),
        previous_total=sum(before) if before is not None else None,
    )
    # Counts are never negative; one that were would be drawn as zero, not below the axis.
    top = max([0, *values, *(before or [])])
    if top == 0:
        return chart
    scale = _scale(top)
    ceiling = scale[-1]
    plot_height = chart.bottom_edge - chart.top_edge
    step = (chart.right_edge - chart.left) / len(points)
    bar_width = step * BAR_SHARE

    def height(value: int) -> float:
        return plot_height * max(value, 0) / ceiling

    for value in scale:
        y = _r(chart.bottom_edge - height(value))
        number = Label(chart.left - 6, _r(y + 4), i18n.localize_digits(value), "end")
        chart.ticks.append(Tick(y=y, value=value, label=number))
    line: list[str] = []
    for i, (moment, value) in enumerate(points):
        slot = chart.left + i * step
        when = i18n.format_datetime(moment, zone, with_time=per == "hour")
        old = before[i] if before is not None and i < len(before) else None
        title = (
            f"{when}: {i18n.localize_digits(value)}"
            if old is None
            else i18n.gettext(
                "%(when)s: %(value)s (previous period: %(previous)s)",
                when=when,
                value=value,
                previous=old,
            )
        )
        chart.bars.append(
            SeriesBar(
                slot_x=_r(slot),
                slot_width=_r(step),
                x=_r(slot + (step - bar_width) / 2),
                y=_r(chart.bottom_edge - height(value)),
                width=_r(bar_width),
                height=_r(height(value)),
                value=value,
                previous=old,
                when=when,
                title=title,
            )
        )
        if old is not None:
            line.append(f"{_r(slot + step / 2)},{_r(chart.bottom_edge - height(old))}")
    chart.previous_points = " ".join(line)
    chart.labels = _time_labels(points, zone, per, step)
    return chart


def _time_labels(
    points: list[tuple[datetime, int]], zone: str, per: str, step: float
) -> list[Label]:
    """Every n-th slot's time, n chosen so that no two labels touch and at most MAX_LABELS."""
    texts = [_time_label(moment, zone, per) for moment, _ in points]
    room = max(len(t) for t in texts) * CHAR_WIDTH + LABEL_GAP
    fits = max(1, min(MAX_LABELS, int(len(points) * step // room)))
    every = -(-len(points) // fits)
    labels: list[Label] = []
    for i in range(0, len(points), every):
        x = SERIES_LEFT + i * step + step / 2
        half = len(texts[i]) * CHAR_WIDTH / 2
        # Only the last label can reach past the right edge; it is left out rather than cut.
        if half <= x <= WIDTH - half:
            labels.append(Label(_r(x), SERIES_HEIGHT - 8, texts[i]))
    return labels


def level(value: int, top: int) -> int:
    """The intensity class of `value`: 0 for none, else 1..HEAT_LEVELS linearly up to `top`."""
    if value <= 0 or top <= 0:
        return 0
    return min(HEAT_LEVELS, -(-HEAT_LEVELS * value // top))


def _legend(top: int) -> list[LegendItem]:
    """The counts each class stands for; a class no whole count falls in is left out."""
    items = [LegendItem(0, i18n.localize_digits(0))]
    for k in range(1, HEAT_LEVELS + 1):
        low, high = top * (k - 1) // HEAT_LEVELS + 1, top * k // HEAT_LEVELS
        if low == high:
            items.append(LegendItem(k, i18n.localize_digits(low)))
        elif low < high:
            text = f"{i18n.localize_digits(low)}–{i18n.localize_digits(high)}"
            items.append(LegendItem(k, text))
    return items


def heatmap(cells: dict[tuple[int, int], int], language: str) -> HeatMap:
    """The week's heat map of `cells`, keyed (weekday 0=Monday..6=Sunday, hour 0..23).

    The keys are in the workspace's zone already. `language` picks the week's first row
    (Saturday in Persian, Monday otherwise); names and digits follow the current language,
    so pass the language the page is rendered in.
    """
    values = {(d, h): max(cells.get((d, h), 0), 0) for d in range(7) for h in range(24)}
    top = max(values.values())
    chart = HeatMap(top=top, total=sum(values.values()))
    if top == 0:
        return chart
    column = (WIDTH - HEAT_LEFT - HEAT_RIGHT) / 24
    grid_bottom = HEAT_TOP + 7 * HEAT_ROW
    chart.hours = [i18n.localize_digits(f"{h:02d}:00") for h in range(24)]
    start = WEEK_START.get(language, 0)
    for row, day in enumerate((start + k) % 7 for k in range(7)):
        y = HEAT_TOP + row * HEAT_ROW
        name = i18n.gettext(DAY_NAMES[day])
        row_cells = [
            Cell(
                x=_r(HEAT_LEFT + hour * column + HEAT_GAP / 2),
                y=_r(y + HEAT_GAP / 2),
                width=_r(column - HEAT_GAP),
                height=HEAT_ROW - HEAT_GAP,
                level=level(values[day, hour], top),
                value=values[day, hour],
                title=f"{name} {chart.hours[hour]} — {i18n.localize_digits(values[day, hour])}",
            )
            for hour in range(24)
        ]
        short = Label(HEAT_LEFT - 8, _r(y + HEAT_ROW / 2 + 4), i18n.gettext(DAY_SHORT[day]), "end")
        chart.rows.append(HeatRow(name=name, label=short, cells=row_cells))
    chart.columns = [
        Label(_r(HEAT_LEFT + hour * column + column / 2), grid_bottom + 16, chart.hours[hour])
        for hour in range(0, 24, HOUR_EVERY)
    ]
    chart.legend = _legend(top)
    return chart


def _share(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole > 0 else None


def funnel(steps: list[tuple[str, int]]) -> Funnel:
    """The funnel of `steps` ([(name, count)], in order), each bar as wide as its share of the
    first step (capped at full width), with its shares of the first and the previous step.

    A step larger than the one before is shown as such (over 100%); when the first step is
    zero every bar is empty and the undefined shares read "—".
    """
    direction = "rtl" if i18n.current_language() in i18n.RTL else "ltr"
    chart = Funnel(direction=direction, height=len(steps) * FUNNEL_ROW)
    if not steps:
        return chart
    first = steps[0][1]
    full = WIDTH - 2 * FUNNEL_SIDE
    middle = WIDTH / 2
    for i, (name, count) in enumerate(steps):
        top = i * FUNNEL_ROW
        of_first = _share(count, first)
        of_previous = _share(count, steps[i - 1][1]) if i else None
        width = full * min(max(count, 0) / first, 1) if first > 0 else 0.0
        if i == 0:
            caption = f"{name}: {i18n.localize_digits(count)}"
        else:
            caption = i18n.gettext(
                "%(step)s: %(count)s · %(first)s of the first step · "
                "%(previous)s of the previous step",
                step=name,
                count=count,
                first=i18n.format_percent(of_first),
                previous=i18n.format_percent(of_previous),
            )
        chart.steps.append(
            FunnelStep(
                name=name,
                count=count,
                x=_r(middle - width / 2),
                y=top + FUNNEL_ROW - FUNNEL_BAR - 6,
                width=_r(width),
                height=FUNNEL_BAR,
                text=Label(middle, top + 16, caption),
                share_of_first=of_first,
                share_of_previous=of_previous,
                of_first=i18n.format_percent(of_first),
                of_previous=i18n.format_percent(of_previous) if i else "",
                caption=caption,
            )
        )
    return chart
