"""What a chart in the report is: its SVG, an HTML legend naming each colour, and its data.

Builders group points into :class:`Line` values (a name, then x/y numbers) and call
:func:`xy_chart`, which scales y to one unit, draws at most :data:`MAX_SERIES` coloured
series and keeps every point in the chart's data table (the ``<details>`` under it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial

from markupsafe import Markup

from harness.core.types import Metric, Unit
from harness.report import chart_cache
from harness.report.chart_svg import MAX_SERIES, PALETTE, Axes, Guide, Series, xy_svg
from harness.report.formatting import Scale, choose_scale, finite
from harness.report.table import Cell, Column, Table


@dataclass(frozen=True)
class LegendItem:
    color: str
    label: str  # untrusted (a model name): escaped by the template, never in the SVG


@dataclass(frozen=True)
class Chart:
    """A chart, drawn when the HTML asks for :attr:`svg` (Markdown never draws it)."""

    key: str
    title: str
    caption: str
    draw: Callable[[], Markup]
    legend: tuple[LegendItem, ...]
    table: Table  # every point drawn (and those of series beyond the palette)
    left_out: int = 0  # series only in the table
    distinct_x: int = 0  # how many x positions its points take
    guided: bool = False  # it draws a reference (a ceiling, y = x, an ideal curve)

    @property
    def shows_something(self) -> bool:
        """One point is a table row, not a chart (a dot on an axis stretched around it, 122-134
        for a single value); a curve needs two x positions, points beside a reference line
        need two points."""
        points = len(self.table.rows)
        return points >= 2 and (self.distinct_x >= 2 or self.guided)

    @cached_property
    def svg(self) -> Markup:
        return chart_cache.drawn(self.draw)  # read back when an earlier render drew the same chart


@dataclass(frozen=True)
class Line:
    label: str
    points: tuple[tuple[float, float], ...]  # (x, y) in base units, sorted by x
    dashed: bool = False


def median(metric: Metric | None) -> float | None:
    values = finite(metric.samples) if metric is not None else []
    return statistics.median(values) if values else None


def lines_from(groups: dict[str, list[tuple[float, float]]]) -> list[Line]:
    return [Line(label, tuple(sorted(points))) for label, points in groups.items() if points]


def xy_chart(
    key: str,
    title: str,
    caption: str,
    lines: Sequence[Line],
    *,
    x_label: str,
    x_unit: str,
    y_label: str,
    y_unit: Unit,
    y_scale: Scale | None = None,
    log_x: bool = False,
    ticks_at_data: bool = False,
    log_y_allowed: bool = True,
    dots: bool = False,
    guides: Sequence[Guide] = (),
) -> Chart:
    """A line (or dot) chart of ``lines``, y shown in one unit chosen from its values."""
    scale = y_scale or choose_scale(y_unit, [y for line in lines for _, y in line.points])
    drawn = list(lines[:MAX_SERIES])
    series = [
        Series(
            PALETTE[i],
            tuple(x for x, _ in line.points),
            tuple(y / scale.divisor for _, y in line.points),
            line=not dots,
            dashed=line.dashed,
        )
        for i, line in enumerate(drawn)
    ]
    unit = f" ({scale.label})" if scale.label else ""
    scaled_guides = [Guide(g.xs, tuple(y / scale.divisor for y in g.ys)) for g in guides]
    axes = Axes(
        f"{x_label} ({x_unit})" if x_unit else x_label,
        f"{y_label}{unit}",
        log_x=log_x,
        ticks_at_data=ticks_at_data,
        wide_y_log=30.0 if log_y_allowed else math.inf,
    )
    svg = partial(xy_svg, series, axes, salt=key, guides=scaled_guides)
    legend = tuple(LegendItem(PALETTE[i], line.label) for i, line in enumerate(drawn))
    columns = (
        Column("series"),
        Column(f"{x_label} ({x_unit})" if x_unit else x_label, numeric=True),
        Column(f"{y_label}{unit}", numeric=True),
    )
    rows = tuple(
        (Cell(line.label), Cell(_number(x), sort=x), Cell(scale.number(y), sort=y))
        for line in lines
        for x, y in line.points
    )
    xs = {x for line in lines for x, _ in line.points}
    return Chart(
        key,
        title,
        caption,
        svg,
        legend,
        Table(columns, rows),
        max(0, len(lines) - MAX_SERIES),
        len(xs),
        bool(guides),
    )


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"
