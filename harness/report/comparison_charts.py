"""Strip plots of a comparison: each moved or undecided metric's raw samples, baseline (grey)
above current (blue), medians as bars, with the samples in a table one click away."""

from __future__ import annotations

import math
from functools import partial

from harness.report.chart_model import Chart, LegendItem
from harness.report.chart_svg import BASELINE_GREY, PALETTE, strip_svg
from harness.report.formatting import choose_scale
from harness.report.table import Cell, Column, Table
from harness.results.compare import MetricDelta

MAX_STRIPS = 24  # the worst first; the metric table holds every one
LEGEND = (LegendItem(BASELINE_GREY, "baseline"), LegendItem(PALETTE[0], "current"))


def _samples_table(delta: MetricDelta, divisor: float, unit: str) -> Table:
    label = f"value ({unit})" if unit else "value"
    columns = (Column("run"), Column("#", numeric=True), Column(label, numeric=True))
    rows = tuple(
        (Cell(run), Cell(str(i), sort=i), Cell(f"{v / divisor:.4g}", sort=v))
        for run, values in (
            ("baseline", delta.baseline_samples),
            ("current", delta.current_samples),
        )
        for i, v in enumerate(values, start=1)
        if math.isfinite(v)
    )
    return Table(columns, rows)


def strip_chart(index: int, title: str, delta: MetricDelta) -> Chart:
    """``title`` names the case (untrusted: the template escapes it); the SVG holds numbers."""
    scale = choose_scale(delta.unit, [*delta.baseline_samples, *delta.current_samples])
    svg = partial(
        strip_svg,
        [v / scale.divisor for v in delta.baseline_samples],
        [v / scale.divisor for v in delta.current_samples],
        scale.label or "value",  # the unit only: a metric's name may be untrusted text
        salt=f"strip-{index}",
    )
    caption = f"{delta.verdict.value}" + (f": {delta.note}" if delta.note else "")
    return Chart(
        f"strip-{index}",
        title,
        caption,
        svg,
        LEGEND,
        _samples_table(delta, scale.divisor, scale.label),
    )
