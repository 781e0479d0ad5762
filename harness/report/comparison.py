"""The comparison section: verdicts against a baseline run, status changes first.

Built from a :class:`harness.results.compare.Comparison`: every metric comparison with baseline,
current, change, its 95% interval, samples, p and method where compare gives them, for those that
moved (regressed, improved); then each named check whose verdict changed
(:mod:`harness.results.check_changes`), whatever its case's status did. Inconclusive and
unchanged metrics are counted, not listed (a nightly holds thousands), with why the inconclusive
ones could not decide and the file that lists every comparison (``changes.csv``, written by
``compare --out``: :mod:`harness.report.change_list`). Strip plots of the
raw samples come from :mod:`harness.report.comparison_charts` (numbers only: no text reaches
the SVG).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from harness.core.check_types import CheckStatus
from harness.core.types import RunRecord, Status, Verdict
from harness.report.chart_model import Chart
from harness.report.comparison_charts import MAX_STRIPS, strip_chart
from harness.report.contents import default_sections
from harness.report.formatting import Scale, choose_scale, status_label
from harness.report.sections import Section
from harness.report.table import Cell, Column, Table, without_empty_columns
from harness.results.compare import CaseDelta, Comparison, MetricDelta

VERDICT_ORDER = (
    Verdict.NEWLY_FAILING,
    Verdict.REGRESSED,
    Verdict.NOT_COMPARABLE,
    Verdict.FIXED,
    Verdict.IMPROVED,
    Verdict.INCONCLUSIVE,
    Verdict.NEW,
    Verdict.REMOVED,
    Verdict.NOT_SELECTED,
    Verdict.UNCHANGED,
)
VERDICT_LABEL = {
    Verdict.NEWLY_FAILING: "🔴 newly failing",
    Verdict.REGRESSED: "🟥 regressed",
    Verdict.NOT_COMPARABLE: "≠ not comparable",
    Verdict.FIXED: "🟢 fixed",
    Verdict.IMPROVED: "🟩 improved",
    Verdict.INCONCLUSIVE: "❔ inconclusive",
    Verdict.NEW: "✳ new",
    Verdict.REMOVED: "− removed",
    Verdict.NOT_SELECTED: "◌ not selected",
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
    unchanged_metrics: int  # metric comparisons that did not move: counted, not listed
    model_changes: tuple[str, ...] = ()  # models whose files changed, compared or not
    check_counts: tuple[tuple[str, int], ...] = ()  # changed named checks per verdict
    checks: Table | None = None  # a row per named check whose verdict changed
    inconclusive_metrics: int = 0  # metric comparisons that could not decide: counted
    # where every comparison is listed: "changes.csv" beside compare.md, or how to get one
    full_list: str = "mlx-harness compare BASELINE CURRENT --out DIR writes DIR/changes.csv"


def _status(status: Status | None) -> str:
    return status_label(status) if status is not None else "—"


def _point(case: CaseDelta) -> str:
    return " ".join(f"{k}={v}" for k, v in case.point.items()) or "—"


def _output(case: CaseDelta) -> list[str]:
    return [f"output changed: {case.output_change}"] if case.output_change else []


def _status_table(cases: list[CaseDelta]) -> Table:
    moved = [
        c
        for c in cases
        if c.baseline_status != c.current_status
        or c.verdict in (Verdict.NEW, Verdict.REMOVED, Verdict.NOT_COMPARABLE)  # with its why
        or c.output_change is not None
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
            Cell("; ".join([*c.reasons, *_output(c)]) or "—"),
        )
        for c in moved
    )
    return Table(columns, rows)


def _check_table(comparison: Comparison) -> Table:
    """A row per named check whose verdict changed, worst first, with its case's statuses
    (a check can fail anew in a case that failed both times)."""
    pairs = sorted(
        comparison.changed_checks(), key=lambda pair: VERDICT_ORDER.index(pair[1].verdict)
    )
    columns = (
        Column("verdict"),
        Column("model"),
        Column("scenario"),
        Column("point"),
        Column("check"),
        Column("before"),
        Column("after"),
        Column("case", title="the case's status: baseline → current"),
        Column("why"),
    )
    rows = tuple(
        (
            Cell(
                VERDICT_LABEL[change.verdict],
                sort=VERDICT_ORDER.index(change.verdict),
                css=VERDICT_CSS.get(change.verdict),
            ),
            Cell(case.model),
            Cell(case.scenario),
            Cell(_point(case)),
            Cell(change.check),
            Cell(check_label(change.before)),
            Cell(check_label(change.after)),
            Cell(f"{_status(case.baseline_status)} → {_status(case.current_status)}"),
            Cell(change.reason or "—"),
        )
        for case, change in pairs
    )
    return Table(columns, rows)


def check_label(status: CheckStatus | None) -> str:
    """``pass``, ``FAIL``, ``n.a.``; ``not run`` for a check the run did not have."""
    return status.label if status is not None else "not run"


def _change(delta: MetricDelta) -> str:
    return "—" if math.isnan(delta.change) else f"{delta.change:+.1%}"


def _ci(delta: MetricDelta) -> Cell:
    """The bootstrap 95% interval of current / baseline median, as a change: ``-55% … -51%``."""
    ci = delta.ratio_ci
    if ci is None or not all(math.isfinite(v) for v in ci):
        return Cell("")
    low, high = ci[0] - 1, ci[1] - 1
    return Cell(f"{low:+.1%} … {high:+.1%}", sort=low, title="95% bootstrap interval of the change")


def _method(delta: MetricDelta) -> Cell:
    """How the pair was tested (when compare says), with the paired items it matched."""
    method = getattr(delta, "method", None)
    paired = getattr(delta, "paired", None)
    text = str(getattr(method, "value", method or ""))
    note = getattr(paired, "text", None)
    return Cell(text, note=note if isinstance(note, str) else None)


def _samples(delta: MetricDelta) -> Cell:
    n_base, n_cur = len(delta.baseline_samples), len(delta.current_samples)
    return Cell(
        f"{n_base} vs {n_cur}", sort=min(n_base, n_cur), title="samples: baseline vs current"
    )


def _needs(delta: MetricDelta) -> Cell:
    if delta.needed_n is None:
        return Cell("")
    return Cell(f"n ≥ {delta.needed_n}", sort=delta.needed_n, title="samples a side to decide")


MOVED = (Verdict.REGRESSED, Verdict.IMPROVED)  # metric verdicts listed; the rest are counted


def _metric_rows(cases: list[CaseDelta]) -> list[tuple[CaseDelta, MetricDelta]]:
    """The metric comparisons that moved, regressed first, the largest change first."""
    shown = [(c, d) for c in cases for d in c.metrics if d.verdict in MOVED]
    shown.sort(key=lambda pair: (VERDICT_ORDER.index(pair[1].verdict), -abs(pair[1].change)))
    return shown


def _metrics_table(pairs: list[tuple[CaseDelta, MetricDelta]]) -> Table:
    columns = (
        Column("verdict"),
        Column("model"),
        Column("scenario"),
        Column("point"),
        Column("metric", css="nowrap"),
        Column("baseline", numeric=True),
        Column("current", numeric=True),
        Column("change", numeric=True),
        Column("95% CI", numeric=True, title="bootstrap interval of the change in the median"),
        Column("n", title="samples: baseline vs current"),
        Column("needs", numeric=True, title="samples a side that would let the test decide"),
        Column("p", numeric=True, title="two-sided p-value of the method's test"),
        Column("method"),
        Column("note"),
    )
    rows = []
    for c, d in pairs:
        scale = choose_scale(d.unit, [d.baseline_median, d.current_median])
        rows.append(
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
                _value(d.baseline_median, scale),
                _value(d.current_median, scale),
                Cell(_change(d), sort=None if math.isnan(d.change) else d.change),
                _ci(d),
                _samples(d),
                _needs(d),
                Cell("" if d.p_value is None else f"{d.p_value:.3g}", sort=d.p_value),
                _method(d),
                Cell(d.note),
            )
        )
    return without_empty_columns(Table(columns, tuple(rows)))


def _value(value: float, scale: Scale) -> Cell:
    """Baseline and current in one unit, chosen from both (``9.5 ms`` beside ``12.1 ms``)."""
    if not math.isfinite(value):
        return Cell("—")
    text = scale.number(value)
    return Cell(scale.with_unit(text) if scale.label else text, sort=value)


def _ordered(counts: Counter[Verdict]) -> tuple[tuple[str, int], ...]:
    return tuple((VERDICT_LABEL[v], counts[v]) for v in VERDICT_ORDER if counts[v])


def more_samples(scenarios: Iterable[str], needed: int) -> str:
    """What gives cases of ``scenarios`` ``needed`` samples a side: ``repeats: 4 or more``,
    ``reloads: 3 or more`` (load: the first load and each reload), or more of their items."""
    from harness.scenarios import SCENARIOS

    hints = []
    for name in sorted(set(scenarios)):
        source = SCENARIOS.get(name).samples_from if name in SCENARIOS.names() else "repeats"
        if source == "repeats":
            hints.append(f"repeats: {needed} or more")
        elif source == "reloads":
            hints.append(f"{name}'s reloads: {needed - 1} or more (its first load and each reload)")
        else:
            hints.append(f"{name}: more {source} ({needed} a side; repeats do not add samples)")
    return "; ".join(dict.fromkeys(hints))


def inconclusive_reasons(comparison: Comparison) -> tuple[str, ...]:
    """One line per reason the inconclusive cases give: too few samples (with the count a side
    they need) or changes the test did not find significant."""
    cases = comparison.inconclusive
    deltas = [d for c in cases for d in c.metrics if d.verdict is Verdict.INCONCLUSIVE]
    needed = sorted({d.needed_n for d in deltas if d.needed_n is not None})
    few = [d for d in deltas if d.needed_n is not None]
    short = [c.scenario for c in cases for d in c.metrics if d.needed_n is not None]
    rest = len(deltas) - len(few)
    lines = []
    if few:
        lines.append(
            f"{len(few)} metric comparison(s) had too few samples to decide: "
            f"needs n >= {needed[-1]} a side ({more_samples(short, needed[-1])})"
        )
    if rest:
        lines.append(
            f"{rest} metric comparison(s) changed by at least the minimum effect "
            "without being significant (noisy samples: more repeats, a quieter machine)"
        )
    return tuple(lines)


def build_view(comparison: Comparison, full_list: str | None = None) -> ComparisonView:
    """The section's view; ``full_list`` names the file that lists every comparison."""
    cases = list(comparison.cases)
    pairs = _metric_rows(cases)
    metric_counts = comparison.metric_counts()
    charts = tuple(
        strip_chart(i, f"{c.model} · {c.scenario} · {_point(c)} · {d.metric} ({_change(d)})", d)
        for i, (c, d) in enumerate(pairs[:MAX_STRIPS])
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
        model_changes=comparison.model_changes,
        statuses=_status_table(cases),
        metrics=_metrics_table(pairs),
        charts=charts,
        unchanged_metrics=metric_counts[Verdict.UNCHANGED],
        inconclusive_metrics=metric_counts[Verdict.INCONCLUSIVE],
        check_counts=_ordered(comparison.check_counts()),
        checks=_check_table(comparison),
        **({"full_list": full_list} if full_list else {}),
    )


def section(comparison: Comparison, full_list: str | None = None) -> Section:
    """The comparison section; ``full_list``: the file listing every comparison, if written."""
    view = build_view(comparison, full_list)

    def build(_run: RunRecord) -> ComparisonView:
        return view

    return Section("comparison", "Comparison with baseline", build)


def with_comparison(
    comparison: Comparison,
    sections: tuple[Section, ...] | None = None,
    scenarios: Collection[str] | None = None,
) -> tuple[Section, ...]:
    """``sections`` (the default ones for ``scenarios`` when None: those of the run shown, see
    :func:`~harness.report.contents.default_sections`) with the comparison right after the
    summary."""
    first, *rest = sections or default_sections(scenarios)
    return (first, section(comparison), *rest)
