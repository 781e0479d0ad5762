"""The hand-drawn history chart: any series (empty, one run, all flagged, flat, no levels) is
an SVG that passes the chart allowlist, with numbers as its only text."""

from __future__ import annotations

import math
import re

import pytest

from harness.report.chart_svg import check_svg
from harness.report.history_chart import ChartPoint, history_svg

NAN = math.nan
CASES = [
    ("empty", [], [], []),
    ("one run", [ChartPoint(10.0, 9.0, 11.0, False)], [10.0], []),
    ("all flagged", [ChartPoint(10.0, 9.0, 11.0, True)] * 3, [NAN] * 3, []),
    ("flat", [ChartPoint(5.0, 5.0, 5.0, False)] * 4, [5.0] * 4, []),
    (
        "no interval",
        [ChartPoint(5.0, NAN, NAN, False), ChartPoint(6.0, NAN, NAN, False)],
        [5.5] * 2,
        [],
    ),
    (
        "a step and a flagged outlier",
        [ChartPoint(10.0, 9.5, 10.5, False)] * 3
        + [ChartPoint(1.0, 0.1, 50.0, True)]
        + [ChartPoint(8.0, 7.5, 8.5, False)] * 3,
        [10.0] * 4 + [8.0] * 3,
        [4],
    ),
]


@pytest.mark.parametrize(
    ("points", "levels", "steps"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_any_series_draws_a_checked_svg(
    points: list[ChartPoint], levels: list[float], steps: list[int]
) -> None:
    svg = str(history_svg(points, levels, steps))
    check_svg(svg)
    texts = re.findall(r">([^<]+)</text>", svg)
    assert texts and all(re.fullmatch(r"(run )?[-+0-9.e]+", t) for t in texts), texts
    absolute = re.findall(r"[MVHL](-?[\d.]+)(?: (-?[\d.]+))?", svg)
    coordinates = [float(v) for pair in absolute for v in pair if v]
    assert coordinates or not points
    assert all(0 <= c <= 720 for c in coordinates)  # inside the drawing, outliers clamped
