"""Compatibility matrix: models x scenarios, each cell the worst status with its reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from harness.core.types import CaseResult, RunRecord, Status
from harness.report.escape import one_line
from harness.report.formatting import (
    SEVERITY,
    params_label,
    status_css,
    status_label,
    worst_status,
)
from harness.report.sections import OPENING, Section
from harness.report.table import Cell, Column, Table, case_reason
from harness.results.preflight_record import warning_line

NOT_RUN = Cell("·", title="not planned in this run", css="not-run")


@dataclass(frozen=True)
class Matrix:
    table: Table
    models: int
    scenarios: int


def _ordered(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def matrix_cell(results: Sequence[CaseResult]) -> Cell:
    """Worst status (with its count when the cell holds several points) and why."""
    if not results:
        return NOT_RUN
    counts = Counter(r.status for r in results)
    worst = worst_status(counts)
    text = status_label(worst)
    if len(results) > 1:
        text += f" ×{counts[worst]}"
        if counts[worst] != len(results):
            text += f" (of {len(results)})"
    first = next(r for r in results if r.status is worst)
    reason = case_reason(first) if worst is not Status.PASSED else _warned(results)
    note = one_line(reason, 100)
    if note and len({params_label(r.point, r.params) for r in results}) > 1:
        note = f"{params_label(first.point, first.params)}: {note}"
    others = ", ".join(
        f"{s.value} ×{counts[s]}" for s in reversed(SEVERITY) if s in counts and s is not worst
    )
    title = "\n".join(p for p in (f"also: {others}" if others else "", reason) if p) or None
    return Cell.linked(
        text,
        first.link if worst in (Status.XFAILED, Status.XPASSED) else None,
        sort=SEVERITY.index(worst),  # worst first when sorted ascending
        note=note or None,
        title=title,
        css=status_css(worst),
    )


def _warned(results: Sequence[CaseResult]) -> str:
    """The policy's warning on a passed cell (e.g. a backend other than the files call for)."""
    return next((w for r in results if (w := warning_line(r.preflight))), "")


def build(run: RunRecord) -> Matrix | None:
    if not run.results:
        return None
    models = _ordered([r.model for r in run.results])
    scenarios = _ordered([r.scenario for r in run.results])
    by_cell: dict[tuple[str, str], list[CaseResult]] = {}
    for result in run.results:
        by_cell.setdefault((result.model, result.scenario), []).append(result)
    rows = []
    for model in models:
        cells = [matrix_cell(by_cell.get((model, s), [])) for s in scenarios]
        rows.append((Cell(model), *cells))
    columns = (Column("model"), *(Column(s) for s in scenarios))
    return Matrix(Table(columns, tuple(rows), css="matrix"), len(models), len(scenarios))


SECTION = Section("matrix", "Compatibility", build, order=OPENING + 10)
