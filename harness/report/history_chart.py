"""One history series as a small inline SVG, drawn by hand from numbers only (no matplotlib:
a site holds hundreds of charts and each draws in a millisecond).

Per run: the median as a dot and the samples' min..max as a bar; a run measured on a dirty
machine is an open orange dot with a dashed bar; the fitted level is a grey line and each step
a red dashed rule. No text from a record reaches the SVG: its only labels are the axis's numbers
and run numbers; the page around it names everything. The SVG is checked against the same
allowlist as every chart (:func:`harness.report.chart_svg.check_svg`) before it is marked safe.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from harness.report.chart_svg import check_svg

WIDTH_PX = 720
HEIGHT_PX = 180
_LEFT, _RIGHT, _TOP, _BOTTOM = 56.0, 8.0, 8.0, 20.0
CLEAN = "#2563eb"
FLAGGED = "#d97706"
LEVEL = "#6b7280"
STEP = "#dc2626"


@dataclass(frozen=True)
class ChartPoint:
    median: float
    low: float  # NaN: no interval
    high: float
    flagged: bool


def _number(value: float) -> str:
    return f"{value:.4g}"


def history_svg(
    points: Sequence[ChartPoint], levels: Sequence[float], step_indices: Sequence[int]
) -> Markup:
    """The chart of one series (``levels``: the fitted level of each point, NaN where none)."""
    n = len(points)
    clean = [p for p in points if not p.flagged]
    values = [v for p in clean for v in (p.median, p.low, p.high) if math.isfinite(v)]
    values += [p.median for p in points if p.flagged and math.isfinite(p.median)]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if hi <= lo:
        lo, hi = lo - abs(lo) * 0.05 - 1e-9, hi + abs(hi) * 0.05 + 1e-9
    plot_w = WIDTH_PX - _LEFT - _RIGHT
    plot_h = HEIGHT_PX - _TOP - _BOTTOM

    def x(i: float) -> float:
        return _LEFT + (plot_w * (i + 0.5) / n if n else 0.0)

    def y(v: float) -> float:  # a flagged run's bar beyond the clean range stops at the edge
        return _TOP + plot_h * (1 - (min(max(v, lo), hi) - lo) / (hi - lo))

    bars: dict[bool, list[str]] = {False: [], True: []}
    dots: dict[bool, list[str]] = {False: [], True: []}
    dot = max(1.5, min(3.0, plot_w / max(n, 1) / 2))
    for i, p in enumerate(points):
        if math.isfinite(p.low) and math.isfinite(p.high):
            bars[p.flagged].append(f"M{x(i):.1f} {y(p.high):.1f}V{y(p.low):.1f}")
        cx, cy = x(i), y(p.median)
        dots[p.flagged].append(
            f"M{cx - dot:.1f} {cy - dot:.1f}h{2 * dot:.1f}v{2 * dot:.1f}h{-2 * dot:.1f}z"
        )
    level_path: list[str] = []
    for i, level in enumerate(levels):
        if math.isfinite(level):
            verb = "L" if level_path else "M"
            level_path.append(f"{verb}{x(i - 0.5):.1f} {y(level):.1f}H{x(i + 0.5):.1f}")
    rules = "".join(f"M{x(i - 0.5):.1f} {_TOP:.1f}V{_TOP + plot_h:.1f}" for i in step_indices)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH_PX}" height="{HEIGHT_PX}" '
        f'viewBox="0 0 {WIDTH_PX} {HEIGHT_PX}" class="history-chart">',
        f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w:.1f}" height="{plot_h:.1f}" '
        'fill="none" stroke="#e5e7eb"/>',
        f'<text x="{_LEFT - 4}" y="{_TOP + 8}" text-anchor="end">{_number(hi)}</text>',
        f'<text x="{_LEFT - 4}" y="{_TOP + plot_h}" text-anchor="end">{_number(lo)}</text>',
        f'<text x="{_LEFT}" y="{HEIGHT_PX - 4}">run 1</text>',
        f'<text x="{WIDTH_PX - _RIGHT}" y="{HEIGHT_PX - 4}" text-anchor="end">run {n}</text>',
    ]
    if bars[False]:
        parts.append(f'<path d="{"".join(bars[False])}" stroke="{CLEAN}" stroke-opacity="0.4"/>')
    if bars[True]:
        parts.append(f'<path d="{"".join(bars[True])}" stroke="{FLAGGED}" stroke-dasharray="2 2"/>')
    if level_path:
        parts.append(f'<path d="{"".join(level_path)}" fill="none" stroke="{LEVEL}"/>')
    if rules:
        parts.append(f'<path d="{rules}" stroke="{STEP}" stroke-dasharray="4 3"/>')
    if dots[False]:
        parts.append(f'<path d="{"".join(dots[False])}" fill="{CLEAN}"/>')
    if dots[True]:
        parts.append(f'<path d="{"".join(dots[True])}" fill="white" stroke="{FLAGGED}"/>')
    parts.append("</svg>")
    text = "".join(parts)
    check_svg(text)
    return Markup(text)  # numbers only, checked against the allowlist just above
