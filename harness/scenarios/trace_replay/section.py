"""Trace replay section: one row per ``trace_replay`` case: the trace (file, shape, requests
replayed of all, sessions), the speed-up, what finished, throughput, TTFT / TPOT / e2e and how
faithful the replay was (dispatch lag, session waits)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.types import CaseResult, RunRecord, Status, Unit
from harness.report.formatting import MISSING, choose_scale, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, metric_cell
from harness.scenarios import trace_replay as scenario
from harness.scenarios.trace_replay.artifacts import TraceReplayArtifacts

FIGURES: tuple[tuple[str, str, Unit], ...] = (
    ("request_rps", "requests/s", Unit.REQUESTS_PER_SECOND),
    ("output_tps", "output", Unit.TOKENS_PER_SECOND),
    ("ttft_p50_s", "TTFT p50", Unit.SECONDS),
    ("ttft_p90_s", "TTFT p90", Unit.SECONDS),
    ("tpot_p90_s", "TPOT p90", Unit.SECONDS),
    ("e2e_p90_s", "e2e p90", Unit.SECONDS),
    ("dispatch_lag_p90_s", "lag p90", Unit.SECONDS),
    ("dispatch_lag_max_s", "lag max", Unit.SECONDS),
    ("session_wait_max_s", "session wait max", Unit.SECONDS),
)


@dataclass(frozen=True)
class TraceReplaySection:
    table: Table


def _name(suffix: str) -> str:
    return f"{scenario.PREFIX}.{suffix}"


def _count(result: CaseResult, suffix: str) -> str:
    metric = result.metric(_name(suffix))
    return f"{metric.summary.median:.0f}" if metric is not None and metric.samples else MISSING


def _trace_cell(found: TraceReplayArtifacts) -> Cell:
    trace = found.trace
    if trace is None:
        return Cell(MISSING)
    return Cell(trace.file or MISSING, note=trace.line())


def _row(result: CaseResult, scales: Mapping[str, Any]) -> tuple[Cell, ...]:
    status = "" if result.status is Status.PASSED else f" · {status_label(result.status)}"
    found = TraceReplayArtifacts.of(result)
    finished = f"{_count(result, 'completed')} / {_count(result, 'errors')}"
    cut = found.replay.cut if found.replay is not None else None
    if cut is not None and cut > 0:
        finished += f" / {cut} cut"
    return (
        Cell(result.model, note=result.case_id.rsplit("::", 1)[-1] + status),
        _trace_cell(found),
        Cell(f"{found.speedup:g}x" if found.speedup is not None else MISSING),
        Cell(finished, title="completed / failed / cut at max_seconds (still in flight)"),
        *(
            metric_cell(result.metric(_name(suffix)), scales[suffix], spread=False)
            for suffix, _, _ in FIGURES
        ),
    )


def build(run: RunRecord) -> TraceReplaySection | None:
    results = sorted(
        (r for r in run.results if r.scenario == scenario.SCENARIO.name),
        key=lambda r: (r.model, r.case_id),
    )
    if not results:
        return None

    def values(suffix: str) -> list[float | None]:
        found = (r.metric(_name(suffix)) for r in results)
        return [m.summary.median for m in found if m is not None and m.samples]

    scales = {suffix: choose_scale(unit, values(suffix)) for suffix, _, unit in FIGURES}
    columns = (
        Column("model"),
        Column("trace"),
        Column("speed-up", title="the trace's times divided by this"),
        Column("done / failed"),
        *(
            Column(f"{label} ({scales[suffix].label})", numeric=True)
            for suffix, label, _ in FIGURES
        ),
    )
    return TraceReplaySection(Table(columns, tuple(_row(r, scales) for r in results)))


SECTION = Section(
    "trace_replay",
    "Trace replay",
    build,
    claims=(f"{scenario.PREFIX}.",),
    order=METRICS + 30,
    templates=Path(__file__).parent,
)
