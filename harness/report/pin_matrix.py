"""The pin-set comparison report: ``matrix.md`` and a self-contained ``matrix.html``.

Three tables from a :class:`harness.results.pin_matrix.PinMatrix`: the pin sets (what each
resolved, its denominator, how long its environment and run took), the transitions between
adjacent pin sets (package changes and verdict counts), and the matrix itself (a row per case,
a status-and-metrics cell per pin set, the change between adjacent cells), and under it the
named checks whose verdict differs between pin sets (a row per case and check, with the change
between adjacent pin sets: seen even where the case failed under both). Values reach the
templates as plain strings: autoescaped in HTML, escaped by ``finalize`` in Markdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.types import Status, Verdict
from harness.report.escape import one_line
from harness.report.formatting import MISSING, format_value, params_label, status_css, status_label
from harness.report.render import template_environment
from harness.report.table import Cell, Column, Table, metric_label
from harness.results.check_changes import CheckChange
from harness.results.pin_matrix import PinCell, PinColumn, PinMatrix, PinStep, PinTransition
from harness.results.report_dir import make_dir, write_text_atomic

MD_FILE = "matrix.md"
HTML_FILE = "matrix.html"
# how a change between adjacent pin sets reads, worst first
STEP_ORDER = (
    Verdict.NEWLY_FAILING,
    Verdict.REGRESSED,
    Verdict.NOT_COMPARABLE,
    Verdict.INCONCLUSIVE,
    Verdict.FIXED,
    Verdict.IMPROVED,
    Verdict.UNCHANGED,
)
STEP_LABEL = {
    Verdict.NEWLY_FAILING: "🔴 newly failing",
    Verdict.REGRESSED: "🟥 regressed",
    Verdict.NOT_COMPARABLE: "≠ not comparable",
    Verdict.INCONCLUSIVE: "❔ inconclusive",
    Verdict.FIXED: "🟢 fixed",
    Verdict.IMPROVED: "🟩 improved",
    Verdict.UNCHANGED: "= unchanged",
}
STEP_CSS = {
    Verdict.NEWLY_FAILING: "st-crashed",
    Verdict.REGRESSED: "st-failed",
    Verdict.NOT_COMPARABLE: "st-skipped",
    Verdict.INCONCLUSIVE: "st-xfailed",
    Verdict.FIXED: "st-passed",
    Verdict.IMPROVED: "st-passed",
}
FAILING_STATUSES = tuple(s for s in Status if s.is_failing)
CHECK_CSS = {
    CheckStatus.PASS: "st-passed",
    CheckStatus.WARN: "st-xfailed",
    CheckStatus.FAIL: "st-failed",
    CheckStatus.NOT_APPLICABLE: "st-skipped",
    CheckStatus.UNJUDGED: "st-skipped",
}
CHECK_ORDER = (  # worst first, for sorting a column of check verdicts
    CheckStatus.FAIL,
    CheckStatus.UNJUDGED,
    CheckStatus.WARN,
    CheckStatus.NOT_APPLICABLE,
    CheckStatus.PASS,
)


@dataclass(frozen=True)
class PinMatrixView:
    title: str
    columns: Table
    transitions: Table
    matrix: Table
    summary: tuple[str, ...]  # one line per transition: "a → b: 2 regressed, 1 fixed of 12"
    timing_note: str = ""  # what a timing verdict can rest on (side by side, or drift)
    checks: Table | None = None  # a row per named check whose verdict differs between pin sets


@dataclass(frozen=True)
class PinMatrixPaths:
    md: Path
    html: Path


def _seconds(value: float | None) -> str:
    return MISSING if value is None else f"{value:.1f} s"


def _environment(column: PinColumn) -> str:
    if column.environment_s is None:
        return MISSING
    how = {True: "built", False: "cached", None: ""}[column.environment_cold]
    by = f" by {column.installer}" if column.environment_cold and column.installer else ""
    return f"{column.environment_s:.1f} s {how}{by}".strip()


TRACKS = {"lock": "uv.lock", "latest": "newest releases"}


def _pins(column: PinColumn) -> str:
    """Its pins, after what it tracks: ``uv.lock``, ``newest releases mlx-lm==0.32.2``."""
    followed = [TRACKS.get(column.track, column.track)] if column.track else []
    return " ".join([*followed, *column.pins]) or MISSING


def _columns_table(columns: Sequence[PinColumn]) -> Table:
    rows = []
    for c in columns:
        failing = sum(n for s, n in c.statuses.items() if s.is_failing)
        rows.append(
            (
                Cell(c.label, note=c.run_id if c.run_id != c.label else None),
                Cell(_pins(c), note=c.lock),
                Cell(", ".join(f"{p} {v}" for p, v in c.stack) or MISSING),
                Cell(str(c.models), sort=c.models),
                Cell(str(c.cases), sort=c.cases),
                Cell(str(c.passed), sort=c.passed),
                Cell(str(failing), sort=failing, css="st-failed" if failing else None),
                Cell(_environment(c), sort=c.environment_s),
                Cell(_seconds(c.run_s), sort=c.run_s),
                Cell(one_line(c.machine, 80)),
            )
        )
    header = (
        Column("pin set"),
        Column("pins"),
        Column("resolved stack"),
        Column("models", numeric=True),
        Column("cases", numeric=True, title="the denominator of this column"),
        Column("passed", numeric=True, title="passed and xpassed"),
        Column("failing", numeric=True, title="failed, errored, crashed, timed out"),
        Column("environment", numeric=True, title="time to make its environment ready"),
        Column("run", numeric=True, title="wall time of the run"),
        Column("machine"),
    )
    return Table(header, tuple(rows))


SIDE_BY_SIDE = "side by side (took turns)"
ONE_AFTER_ANOTHER = "one after another (timing exposed to drift)"


def timing_note(transitions: Sequence[PinTransition]) -> str:
    """What a timing verdict between the pin sets can rest on."""
    if transitions and all(t.side_by_side for t in transitions):
        return (
            "The pin sets' runs took turns, a round of each timing case at a time, so a timing "
            "verdict compares samples taken side by side: drift of the machine's speed falls on "
            "both alike."
        )
    return (
        "Where a transition says one after another, a timing verdict compares blocks of "
        "samples taken minutes apart, so on a machine whose speed drifts it can be drift "
        "rather than the packages (run them with --pin-set-order interleaved, the default); "
        "status changes (newly failing, fixed) are not affected."
    )


def _counts(transition: PinTransition) -> str:
    parts = [
        f"{n} {v.value.replace('_', ' ')}"
        for v in STEP_ORDER
        if (n := transition.verdicts.get(v, 0))
    ]
    return ", ".join(parts) or "nothing compared"


def _check_counts(transition: PinTransition) -> str:
    """``1 newly failing, 1 fixed``: the named checks that changed ('' when none did)."""
    order = [*STEP_ORDER, Verdict.NEW, Verdict.REMOVED]
    return ", ".join(
        f"{n} {v.value.replace('_', ' ')}"
        for v in order
        if (n := transition.check_verdicts.get(v, 0))
    )


def _transitions_table(transitions: Sequence[PinTransition]) -> Table:
    rows = []
    for t in transitions:
        changes = list(t.package_changes)
        rows.append(
            (
                Cell(f"{t.before} → {t.after}"),
                Cell(
                    "; ".join(changes[:4])
                    + (f"; +{len(changes) - 4} more" if len(changes) > 4 else "")
                    or "no package changed",
                    title="\n".join(changes) or None,
                ),
                Cell(
                    "; ".join(t.machine_changes) or "same machine",
                    css="st-skipped" if t.machine_changes else None,
                ),
                Cell(
                    SIDE_BY_SIDE if t.side_by_side else ONE_AFTER_ANOTHER,
                    css=None if t.side_by_side else "st-skipped",
                ),
                Cell(str(t.compared), sort=t.compared),
                Cell(_counts(t)),
                Cell(_check_counts(t) or MISSING),
            )
        )
    header = (
        Column("transition"),
        Column("packages changed"),
        Column("machine"),
        Column("measured", title="how the two runs' timings were taken"),
        Column("cases compared", numeric=True),
        Column("verdicts"),
        Column("checks changed", title="named checks whose verdict changed, in any case"),
    )
    return Table(header, tuple(rows))


def _cell(cell: PinCell | None) -> Cell:
    if cell is None:
        return Cell("·", title="not in this run", css="not-run")
    values = [f"{metric_label(m.name)} {format_value(m.median, m.unit)}" for m in cell.metrics]
    note = one_line(cell.reason, 100) if cell.status is not Status.PASSED else None
    return Cell(
        status_label(cell.status),
        sort=FAILING_STATUSES.index(cell.status) if cell.status.is_failing else -1,
        note=" · ".join(filter(None, [*values, note])) or None,
        title="\n".join(f"{m.name}: median of n={m.n}" for m in cell.metrics) or None,
        css=status_css(cell.status),
    )


def _change(verdict: Any, note: str, missing: str | None) -> Cell:
    """A step between two pin sets: the change's label, its order, its note (one line)."""
    if verdict is None:
        return Cell(MISSING, title=missing)
    return Cell(
        STEP_LABEL.get(verdict, verdict.value),
        sort=STEP_ORDER.index(verdict) if verdict in STEP_ORDER else len(STEP_ORDER),
        note=one_line(note, 100) or None,
        css=STEP_CSS.get(verdict),
    )


def _step(step: PinStep | None) -> Cell:
    if step is None:
        return _change(None, "", "not in both runs")
    return _change(step.verdict, step.note, None)


def _matrix_table(matrix: PinMatrix) -> Table:
    header: list[Column] = [Column("model"), Column("scenario"), Column("point")]
    for i, column in enumerate(matrix.columns):
        if i:
            header.append(Column(f"→ {column.label}", title="change from the pin set before"))
        header.append(Column(column.label))
    rows = []
    for row in matrix.rows:
        cells = [Cell(row.model), Cell(row.scenario), Cell(params_label(row.point, {}) or MISSING)]
        for i, cell in enumerate(row.cells):
            if i:
                cells.append(_step(row.steps[i - 1]))
            cells.append(_cell(cell))
        rows.append(tuple(cells))
    return Table(tuple(header), tuple(rows), css="wide")


def _check_cell(check: CheckVerdict | None) -> Cell:
    if check is None:
        return Cell("·", title="not recorded in this run", css="not-run")
    return Cell(
        check.status.label,
        sort=CHECK_ORDER.index(check.status),
        note=one_line(check.reason, 100) if check.status is not CheckStatus.PASS else None,
        css=CHECK_CSS[check.status],
    )


def _check_step(change: CheckChange | None) -> Cell:
    if change is None:
        return _change(None, "", "the same verdict, or not recorded in both runs")
    return _change(change.verdict, change.reason, None)


def _checks_table(matrix: PinMatrix) -> Table:
    """A row per case and named check whose verdict is not the same under every pin set."""
    header: list[Column] = [Column("model"), Column("scenario"), Column("point"), Column("check")]
    for i, column in enumerate(matrix.columns):
        if i:
            header.append(Column(f"→ {column.label}", title="change from the pin set before"))
        header.append(Column(column.label))
    rows = []
    for row in matrix.rows:
        for check in row.checks:
            cells = [
                Cell(row.model),
                Cell(row.scenario),
                Cell(params_label(row.point, {}) or MISSING),
                Cell(check.check),
            ]
            for i, cell in enumerate(check.cells):
                if i:
                    cells.append(_check_step(check.steps[i - 1]))
                cells.append(_check_cell(cell))
            rows.append(tuple(cells))
    return Table(tuple(header), tuple(rows), css="wide")


def _summary_line(t: PinTransition) -> str:
    """``a → b: 1 newly failing (of 12 cases); checks: 1 newly failing``."""
    checks = _check_counts(t)
    return (
        f"{t.before} → {t.after}: {_counts(t)} (of {t.compared} cases)"
        + (f"; checks: {checks}" if checks else "")
        + ("" if t.side_by_side else "; measured one after another")
    )


def build_view(matrix: PinMatrix) -> PinMatrixView:
    labels = " → ".join(c.label for c in matrix.columns)
    return PinMatrixView(
        title=f"pin-set comparison: {labels}",
        columns=_columns_table(matrix.columns),
        transitions=_transitions_table(matrix.transitions),
        matrix=_matrix_table(matrix),
        summary=tuple(_summary_line(t) for t in matrix.transitions),
        timing_note=timing_note(matrix.transitions),
        checks=_checks_table(matrix),
    )


def render_pin_matrix(matrix: PinMatrix, out_dir: Path) -> PinMatrixPaths:
    """Write ``out_dir/matrix.md`` and ``out_dir/matrix.html`` (each whole or not at all)."""
    view = build_view(matrix)
    texts = {
        kind: template_environment(kind).get_template(f"pin_matrix.{kind}.j2").render(view=view)
        for kind in ("md", "html")
    }
    make_dir(out_dir)
    paths = PinMatrixPaths(md=out_dir / MD_FILE, html=out_dir / HTML_FILE)
    write_text_atomic(paths.md, texts["md"])
    write_text_atomic(paths.html, texts["html"])
    return paths
