"""Context limits section: one row per case, what the engine did with a request just inside its
context window, one past it, and one whose answer runs past it: refused (the only safe answer
past the window), stopped at the window, or silently truncated, shifted or computed past a
window nothing enforces. The numbers behind each outcome are one hover away."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.types import CaseResult, RunRecord
from harness.report.formatting import MISSING, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, stats
from harness.scenarios import context_limit as cl
from harness.scenarios.context_limit.outcome import Outcome, Probe

PREFIX = f"{cl.SCENARIO.name}."
SAFE = {Outcome.OK.value, Outcome.ERROR.value, Outcome.STOPPED.value}
LOST = {Outcome.TRUNCATED.value, Outcome.SHIFTED.value, Outcome.NO_ANSWER.value}


@dataclass(frozen=True)
class ContextLimits:
    table: Table
    findings: tuple[str, ...]  # the cases' findings and reasons, one line each (untrusted)


def _outcome(found: cl.ContextLimitArtifacts, probe: Probe) -> Cell:
    value, detail = found.outcome(probe.value)
    if value is None:
        return Cell(MISSING)
    css = "st-failed" if value in LOST else None if value in SAFE else "st-skipped"
    return Cell(value, title=detail or None, css=css)


def _window(result: CaseResult) -> Cell:
    metric = result.metric(cl.WINDOW.name)
    if metric is None:
        return Cell(MISSING)
    tokens = stats(metric).median
    return Cell(f"{tokens:.0f}", sort=tokens)


def build(run: RunRecord) -> ContextLimits | None:
    results = [r for r in run.results if r.scenario == cl.SCENARIO.name]
    if not results:
        return None
    columns = (
        Column("model", css="nowrap"),
        Column("engine"),
        Column("window (tokens)", numeric=True, title=cl.WINDOW.description),
        Column("status"),
        Column("just inside", title="a prompt just inside the window"),
        Column("past the window", title="a prompt past the window: it must be refused"),
        Column("answer past it", title="a prompt inside whose answer runs past the window"),
    )
    found = {r.case_id: cl.ContextLimitArtifacts.of(r) for r in results}
    rows = tuple(
        (
            Cell(r.model),
            Cell(found[r.case_id].engine or MISSING),
            _window(r),
            Cell(status_label(r.status), css=status_css(r.status)),
            _outcome(found[r.case_id], Probe.INSIDE),
            _outcome(found[r.case_id], Probe.PAST),
            _outcome(found[r.case_id], Probe.GENERATION),
        )
        for r in sorted(results, key=lambda r: r.model)
    )
    findings = []
    for r in results:
        for line in (found[r.case_id].finding, r.reason):
            if line:
                findings.append(f"{r.model}: {line}")
    return ContextLimits(Table(columns, rows), tuple(dict.fromkeys(findings)))


SECTION = Section(
    "context_limit",
    "Context limits",
    build,
    claims=(PREFIX,),
    order=METRICS + 170,
    templates=Path(__file__).parent,
)
