"""The comparison section: verdicts against a baseline run, status changes first.

Built from a :class:`harness.results.compare.Comparison`; charts are inline SVG strip plots of
the raw samples (baseline grey, current coloured) made only from numbers, so no text reaches them.
Inconclusive metrics (samples that cannot decide) are listed with the sample count they need.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from markupsafe import Markup

from harness.report.contents import default_sections
from harness.report.formatting import format_value, status_label
from harness.report.sections import Section
from harness.report.table import Cell, Column, Table
from harness.results.compare import CaseDelta, Comparison, MetricDelta
from harness.types import RunRecord, Status, Verdict

VERDICT_ORDER = (
    Verdict.NEWLY_FAILING,
    Verdict.REGRESSED,
    Verdict.NOT_COMPARABLE,
    Verdict.FIXED,
    Verdict.IMPROVED,
    Verdict.INCONCLUSIVE,
    Verdict.NEW,
    Verdict.REMOVED,
    Verdict.UNCHANGED,
)
VERDICT_LABEL = {
    Verdict.NEWLY_FAILING: "🔴 newly failing",
    Verdict.REGRESSED: "🔻 regressed",
    Verdict.NOT_COMPARABLE: "≠ not comparable",
    Verdict.FIXED: "🟢 fixed",
    Verdict.IMPROVED: "🔺 improved",
    Verdict.INCONCLUSIVE: "❔ inconclusive",
    Verdict.NEW: "✳ new",
    Verdict.REMOVED: "− removed",
    Verdict.UNCHANGED: "= unchanged",
}
VERDICT_CSS = {
    Verdict.NEWLY_FAILING: "st-crashed",
    Verdict.REGRESSED: "st-failed",
    Verdict.NOT_COMPARABLE: "st-skipped",
    Verdict.FIXED: "st-passed",
    Verdict.IMPROVED: "st-passed",
    Verdict.INCONCLUSIVE: "st-xfailed",
}


@dataclass(frozen=True)
class Chart:
    title: str
    svg: Markup


@dataclass(frozen=True)
class ComparisonView:
    baseline: str
    current: str
    git: tuple[str, str]
    counts: tuple[tuple[str, int], ...]  # cases per verdict
    metric_counts: tuple[tuple[str, int], ...]  # metric comparisons per verdict
    inconclusive: tuple[str, ...]  # why cases are inconclusive, one line per reason
    machine_changes: tuple[str, ...]
    package_changes: tuple[str, ...]
    statuses: Table
    metrics: Table
    charts: tuple[Chart, ...]
    unchanged_metrics: int


def _status(status: Status | None) -> str:
    return status_label(status) if status is not None else "—"


def _point(case: CaseDelta) -> str:
    return " ".join(f"{k}={v}" for k, v in case.point.items()) or "—"


def _status_table(cases: list[CaseDelta]) -> Table:
    moved = [
        c
        for c in cases
        if c.baseline_status != c.current_status or c.verdict in (Verdict.NEW, Verdict.REMOVED)
    ]
    moved.sort(key=lambda c: VERDICT_ORDER.index(c.verdict))
    columns = (
        Column("verdict"),
        Column("model"),
        Column("scenario"),
        Column("point"),
        Column("before"),
        Column("after"),
        Column("why"),
    )
    rows = tuple(
        (
            Cell(
                VERDICT_LABEL[c.verdict],
                sort=VERDICT_ORDER.index(c.verdict),
                css=VERDICT_CSS.get(c.verdict),
            ),
            Cell(c.model),
            Cell(c.scenario),
            Cell(_point(c)),
            Cell(_status(c.baseline_status)),
            Cell(_status(c.current_status)),
            Cell("; ".join(c.reasons) or "—"),
        )
        for c in moved
    )
    return Table(columns, rows)


def _change(delta: MetricDelta) -> str:
    return "—" if math.isnan(delta.change) else f"{delta.change:+.1%}"


def _metric_rows(cases: list[CaseDelta]) -> tuple[list[tuple[CaseDelta, MetricDelta]], int]:
    shown: list[tuple[CaseDelta, MetricDelta]] = []
    unchanged = 0
    for case in cases:
        for delta in case.metrics:
            if delta.verdict is Verdict.UNCHANGED:
                unchanged += 1
            else:
                shown.append((case, delta))
    shown.sort(key=lambda pair: (VERDICT_ORDER.index(pair[1].verdict), pair[1].change))
    return shown, unchanged


def _metrics_table(pairs: list[tuple[CaseDelta, MetricDelta]]) -> Table:
    columns = (
        Column("verdict"),
        Column("model"),
        Column("scenario"),
        Column("point"),
        Column("metric"),
        Column("baseline", numeric=True),
        Column("current", numeric=True),
        Column("change", numeric=True),
        Column("n", title="samples: baseline vs current"),
        Column("p", numeric=True, title="Mann-Whitney U, two-sided"),
        Column("note"),
    )
    rows = tuple(
        (
            Cell(
                VERDICT_LABEL[d.verdict],
                sort=VERDICT_ORDER.index(d.verdict),
                css=VERDICT_CSS.get(d.verdict),
            ),
            Cell(c.model),
            Cell(c.scenario),
            Cell(_point(c)),
            Cell(d.metric),
            Cell(format_value(d.baseline_median, d.unit), sort=d.baseline_median),
            Cell(format_value(d.current_median, d.unit), sort=d.current_median),
            Cell(_change(d), sort=None if math.isnan(d.change) else d.change),
            Cell(f"{len(d.baseline_samples)} vs {len(d.current_samples)}"),
            Cell("—" if d.p_value is None else f"{d.p_value:.3g}", sort=d.p_value),
            Cell(d.note),
        )
        for c, d in pairs
    )
    return Table(columns, rows)


def strip_plot(baseline: tuple[float, ...], current: tuple[float, ...]) -> Markup:
    """A 260x44 SVG: baseline samples on the top row (grey), current below (blue)."""
    values = [v for v in (*baseline, *current) if math.isfinite(v)]
    if not values:
        return Markup("")
    low, high = min(values), max(values)
    span = (high - low) or abs(high) or 1.0
    width, pad = 260, 8

    def x(v: float) -> float:
        return pad + (v - low) / span * (width - 2 * pad)

    dots = [
        f'<circle cx="{x(v):.1f}" cy="14" r="3.5" fill="#999"/>'
        for v in baseline
        if math.isfinite(v)
    ]
    dots += [
        f'<circle cx="{x(v):.1f}" cy="32" r="3.5" fill="#2563eb"/>'
        for v in current
        if math.isfinite(v)
    ]
    body = "".join(dots)
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="44" '
        f'role="img"><line x1="{pad}" x2="{width - pad}" y1="23" y2="23" stroke="#ddd"/>'
        f"{body}</svg>"
    )


def _ordered(counts: Counter[Verdict]) -> tuple[tuple[str, int], ...]:
    return tuple((VERDICT_LABEL[v], counts[v]) for v in VERDICT_ORDER if counts[v])


def inconclusive_reasons(comparison: Comparison) -> tuple[str, ...]:
    """One line per reason the inconclusive cases give: too few samples (with the count a side
    they need) or changes the test did not find significant."""
    cases = comparison.inconclusive
    deltas = [d for c in cases for d in c.metrics if d.verdict is Verdict.INCONCLUSIVE]
    needed = sorted({d.needed_n for d in deltas if d.needed_n is not None})
    few = [d for d in deltas if d.needed_n is not None]
    rest = len(deltas) - len(few)
    lines = []
    if few:
        lines.append(
            f"{len(few)} metric comparison(s) had too few samples to decide: "
            f"needs n >= {needed[-1]} a side (raise the suite's repeats)"
        )
    if rest:
        lines.append(
            f"{rest} metric comparison(s) changed by at least the minimum effect "
            "without being significant (noisy samples: more repeats, a quieter machine)"
        )
    return tuple(lines)


def build_view(comparison: Comparison) -> ComparisonView:
    cases = list(comparison.cases)
    pairs, unchanged = _metric_rows(cases)
    charts = tuple(
        Chart(
            f"{c.model} · {c.scenario} · {_point(c)} · {d.metric} ({_change(d)})",
            strip_plot(d.baseline_samples, d.current_samples),
        )
        for c, d in pairs[:24]
    )
    return ComparisonView(
        baseline=comparison.baseline_run,
        current=comparison.current_run,
        git=(comparison.git[0] or "—", comparison.git[1] or "—"),
        counts=_ordered(comparison.counts()),
        metric_counts=_ordered(comparison.metric_counts()),
        inconclusive=inconclusive_reasons(comparison),
        machine_changes=comparison.machine_changes,
        package_changes=comparison.package_changes,
        statuses=_status_table(cases),
        metrics=_metrics_table(pairs),
        charts=charts,
        unchanged_metrics=unchanged,
    )


def section(comparison: Comparison) -> Section:
    view = build_view(comparison)

    def build(_run: RunRecord) -> ComparisonView:
        return view

    return Section("comparison", "Comparison with baseline", build)


def with_comparison(
    comparison: Comparison, sections: tuple[Section, ...] | None = None
) -> tuple[Section, ...]:
    """``sections`` (the default ones when None) with the comparison right after the summary."""
    first, *rest = sections or default_sections()
    return (first, section(comparison), *rest)
