"""Failures: every case that did not pass, with its reason and its gates (expected vs measured).

Problems (failed, errored, crashed, timed out, unexpectedly passed) come first, one entry
each; expected outcomes (skipped, xfailed) follow as one compact table.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.types import CaseResult, GateResult, RunRecord, Status, Unit
from harness.report.formatting import (
    MISSING,
    SEVERITY,
    format_value,
    params_label,
    status_css,
    status_label,
)
from harness.report.sections import CLOSING, Section
from harness.report.table import Cell, Column, Table, case_reason

EXPECTED: tuple[Status, ...] = (Status.SKIPPED, Status.XFAILED)


@dataclass(frozen=True)
class FailureRow:
    status: str
    css: str
    model: str
    scenario: str
    params: str
    case_id: str
    reason: str
    duration: str
    link: Cell | None
    gates: Table | None


@dataclass(frozen=True)
class Failures:
    problems: tuple[FailureRow, ...]
    expected: Table  # skipped and xfailed cases
    total: int
    gates: Table | None = None  # every gate: failed, then not evaluated, then passed


def _gate_unit(result: CaseResult, gate: GateResult) -> Unit | None:
    metric = result.metric(gate.gate.metric)
    return metric.unit if metric is not None else None


def gate_row(result: CaseResult, gate: GateResult) -> tuple[Cell, ...]:
    unit = _gate_unit(result, gate)
    spec = gate.gate
    if spec.relative:
        expected = f"{spec.op} {spec.threshold:+.1%} vs baseline"
    elif unit is not None:
        expected = f"{spec.op} {format_value(spec.threshold, unit)}"
    else:
        expected = f"{spec.op} {spec.threshold:g}"
    if gate.measured is None:
        measured = MISSING
    elif unit is not None:
        measured = format_value(gate.measured, unit)
    else:
        measured = f"{gate.measured:g}"
    if gate.passed is None:
        verdict = Cell("not evaluated", css="st-skipped")
    elif gate.passed:
        verdict = Cell(status_label(Status.PASSED), css=status_css(Status.PASSED))
    else:
        verdict = Cell(status_label(Status.FAILED), css=status_css(Status.FAILED))
    return (
        Cell(spec.expression or spec.metric, title=spec.metric),
        Cell(expected),
        Cell(measured, sort=gate.measured),
        verdict,
        Cell(gate.message),
    )


GATE_COLUMNS = (
    Column("gate"),
    Column("expected"),
    Column("measured", numeric=True),
    Column("result"),
    Column("message"),
)


def _params(result: CaseResult) -> str:
    label = params_label(result.point, result.params)
    return "" if label == MISSING else label


def failure(result: CaseResult) -> FailureRow:
    gates = tuple(gate_row(result, g) for g in result.gates)
    link = Cell.linked("link", result.link) if result.link else None
    return FailureRow(
        status=status_label(result.status),
        css=status_css(result.status),
        model=result.model,
        scenario=result.scenario,
        params=_params(result),
        case_id=result.case_id,
        reason=case_reason(result) or "(no reason recorded)",
        duration=format_value(result.duration_s, Unit.SECONDS) if result.duration_s else MISSING,
        link=link if link is not None and link.link else None,
        gates=Table(GATE_COLUMNS, gates) if gates else None,
    )


def _expected_table(results: list[CaseResult]) -> Table:
    rows = tuple(
        (
            Cell(status_label(r.status), css=status_css(r.status)),
            Cell(r.model),
            Cell(r.scenario),
            Cell(params_label(r.point, r.params), title=r.case_id),
            Cell.linked(case_reason(r) or MISSING, r.link),
        )
        for r in results
    )
    columns = (
        Column("status"),
        Column("model"),
        Column("scenario"),
        Column("params"),
        Column("reason"),
    )
    return Table(columns, rows)


GATE_ORDER = {False: 0, None: 1, True: 2}  # failed, not evaluated, passed


def _gates_table(results: tuple[CaseResult, ...]) -> Table | None:
    """Every gate of every case, failed first, then not evaluated, then passed: what was
    checked, with what it measured."""
    gates = sorted(
        ((r, g) for r in results for g in r.gates), key=lambda pair: GATE_ORDER[pair[1].passed]
    )
    rows = tuple(
        (
            Cell(r.model),
            Cell(r.scenario),
            Cell(_params(r) or MISSING, title=r.case_id),
            *gate_row(r, g),
        )
        for r, g in gates
    )
    if not rows:
        return None
    return Table((Column("model"), Column("scenario"), Column("params"), *GATE_COLUMNS), rows)


def build(run: RunRecord) -> Failures:
    problems = [
        r for r in run.results if r.status is not Status.PASSED and r.status not in EXPECTED
    ]
    problems.sort(key=lambda r: SEVERITY.index(r.status))
    expected = [r for r in run.results if r.status in EXPECTED]
    expected.sort(key=lambda r: SEVERITY.index(r.status))
    return Failures(
        problems=tuple(failure(r) for r in problems),
        expected=_expected_table(expected),
        total=len(run.results),
        gates=_gates_table(run.results),
    )


SECTION = Section("failures", "Failures and skips", build, order=CLOSING + 10)
