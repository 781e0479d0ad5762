"""Stalls section: per ``stall`` case (an engine, a prefill step size) the running streams'
baseline ITL, and while the long prompt prefilled the max and p99 ITL, the stall, the tokens
lost, the long prompt's TTFT and the one line naming the stall; and a chart per case of each
stream's ITL over time around the arrival (the stall timeline).

Figures come from the case's metrics (``stall.*``, what compare compares), the timeline and
the line from its artifacts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.types import CaseResult, RunRecord, Unit
from harness.report.chart_model import Chart, Line, xy_chart
from harness.report.chart_svg import Guide
from harness.report.formatting import MISSING, choose_scale, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios import stall as sc
from harness.scenarios.stall.artifacts import StallArtifacts

SCENARIO = "stall"
FIGURES = (
    ("baseline ITL", sc.BASELINE),
    ("max ITL", sc.MAX_ITL),
    ("p99 ITL", sc.P99_ITL),
    ("stall", sc.STALL),
    ("long TTFT", sc.LONG_TTFT),
)
MAX_CHARTS = 8


@dataclass(frozen=True)
class Stalls:
    summary: Table
    charts: tuple[Chart, ...]


def _value(result: CaseResult, name: str) -> float | None:
    found = result.metric(name)
    return found.samples[0] if found is not None and found.samples else None


def _summary(results: Sequence[CaseResult]) -> Table:
    scale = choose_scale(
        Unit.SECONDS,
        [v for r in results for _, spec in FIGURES if (v := _value(r, spec.name)) is not None],
    )
    columns = (
        Column("model", css="nowrap"),
        Column("case"),
        Column("status"),
        Column("engine"),
        Column("streams", numeric=True),
        Column("long prompt", numeric=True, title="tokens"),
        *(
            Column(f"{label} ({scale.label})", numeric=True, title=spec.description)
            for label, spec in FIGURES
        ),
        Column("tokens lost", numeric=True, title=sc.LOST.description),
        Column("finding"),
    )
    rows = []
    for r in results:
        found = StallArtifacts.of(r)
        cells = []
        for _, spec in FIGURES:
            v = _value(r, spec.name)
            cells.append(Cell(MISSING) if v is None else Cell(scale.number(v), sort=v))
        lost = _value(r, sc.LOST.name)
        rows.append(
            (
                Cell(r.model),
                Cell(r.case_id.rsplit("::", 1)[-1]),
                Cell(status_label(r.status), css=status_css(r.status)),
                Cell(found.engine or MISSING),
                Cell(MISSING if found.streams is None else str(found.streams)),
                Cell(
                    MISSING if found.long_prompt_tokens is None else str(found.long_prompt_tokens)
                ),
                *cells,
                Cell(MISSING) if lost is None else Cell(f"{lost:.0f}", sort=lost),
                Cell(found.finding or r.reason or MISSING),
            )
        )
    return Table(columns, tuple(rows))


def _chart(result: CaseResult, index: int) -> Chart | None:
    found = StallArtifacts.of(result)
    lines = []
    for i, points in enumerate(found.timeline):
        if points:
            lines.append(Line(f"stream {i + 1}", tuple(sorted(points))))
    if not lines:
        return None
    top = max(y for line in lines for _, y in line.points)
    window = found.window_s
    guides = [Guide((0.0, 0.0), (0.0, top))]
    if window is not None and window > 0:
        guides.append(Guide((window, window), (0.0, top)))
    return xy_chart(
        f"stall-{index}",
        f"ITL around the long prompt's arrival: {result.model} · "
        f"{result.case_id.rsplit('::', 1)[-1]}",
        "Each running stream's inter-token latency against the time since the long prompt "
        "was sent; the dotted lines are its sending (0) and its first token (the prefill).",
        lines,
        x_label="time since arrival",
        x_unit="s",
        y_label="ITL",
        y_unit=Unit.SECONDS,
        dots=True,
        guides=guides,
    )


def build(run: RunRecord) -> Stalls | None:
    results = sorted(
        (r for r in run.results if r.scenario == SCENARIO), key=lambda r: (r.case_id, r.model)
    )
    if not results:
        return None
    charts = [c for i, r in enumerate(results[:MAX_CHARTS]) if (c := _chart(r, i))]
    return Stalls(_summary(results), tuple(c for c in charts if c.shows_something))


SECTION = Section(
    "stall",
    "Stalls",
    build,
    claims=(f"{sc.PREFIX}.",),
    order=METRICS + 50,
    templates=Path(__file__).parent,
)
