"""Reasoning section: per ``reasoning`` case (a model, a surface, thinking on or off) the time
to the first token of any kind and to the first answer token, the reasoning and answer tokens
and each part's decode rate (medians over the answers), how the reasoning was told apart (the
server's field and its name, think markup split here, the think tokens in process), and the
case's finding: the check's failure line, or why the case is not applicable (a model that does
not think).

Figures come from the case's metrics (``reasoning.*``, what compare compares), the split from
its artifacts.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.types import CaseResult, RunRecord, Unit
from harness.report.formatting import MISSING, choose_scale, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios import reasoning as sc
from harness.scenarios.reasoning.artifacts import ReasoningArtifacts

SCENARIO = "reasoning"
TIMES = (("first token", sc.FIRST_ANY), ("first answer token", sc.FIRST_ANSWER))
COUNTS = (("reasoning tokens", sc.REASONING_TOKENS), ("answer tokens", sc.ANSWER_TOKENS))
RATES = (("reasoning tok/s", sc.REASONING_TPS), ("answer tok/s", sc.ANSWER_TPS))


@dataclass(frozen=True)
class Reasoning:
    summary: Table


def _median(result: CaseResult, name: str) -> float | None:
    found = result.metric(name)
    return statistics.median(found.samples) if found is not None and found.samples else None


def _summary(results: Sequence[CaseResult]) -> Table:
    scale = choose_scale(
        Unit.SECONDS,
        [_median(r, spec.name) for r in results for _, spec in TIMES],
    )
    columns = (
        Column("model", css="nowrap"),
        Column("case"),
        Column("status"),
        Column("surface"),
        Column("split", title="how reasoning was told apart from the answer"),
        *(
            Column(f"{label} ({scale.label})", numeric=True, title=spec.description)
            for label, spec in TIMES
        ),
        *(Column(label, numeric=True, title=spec.description) for label, spec in COUNTS),
        *(Column(label, numeric=True, title=spec.description) for label, spec in RATES),
        Column("finding"),
    )
    rows = []
    for r in results:
        found = ReasoningArtifacts.of(r)
        cells = []
        for _, spec in TIMES:
            v = _median(r, spec.name)
            cells.append(Cell(MISSING) if v is None else Cell(scale.number(v), sort=v))
        for digits, specs in ((0, COUNTS), (1, RATES)):
            for _, spec in specs:
                v = _median(r, spec.name)
                cells.append(Cell(MISSING) if v is None else Cell(f"{v:.{digits}f}", sort=v))
        rows.append(
            (
                Cell(r.model),
                Cell(r.case_id.rsplit("::", 1)[-1]),
                Cell(status_label(r.status), css=status_css(r.status)),
                Cell(found.surface or MISSING),
                Cell(found.split_line() or MISSING),
                *cells,
                Cell(r.reason or found.thinks_because or MISSING),
            )
        )
    return Table(columns, tuple(rows))


def build(run: RunRecord) -> Reasoning | None:
    results = sorted(
        (r for r in run.results if r.scenario == SCENARIO), key=lambda r: (r.case_id, r.model)
    )
    if not results:
        return None
    return Reasoning(_summary(results))


SECTION = Section(
    "reasoning",
    "Reasoning",
    build,
    claims=(f"{sc.PREFIX}.",),
    order=METRICS + 165,
    templates=Path(__file__).parent,
)
