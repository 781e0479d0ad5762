"""Soak section: per ``soak`` case, the server's memory over time (a chart: RSS, the physical
footprint where macOS gives it, swap in use), its growth per 1,000 requests with the 95%
interval against the bound, swap and memory pressure, the Metal wired limit, and the latency
percentiles of each window of requests with the drift from the first to the last; then each
check's verdict, and the cases that did not pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.types import CaseResult, RunRecord, Unit
from harness.report.cancellation import checks_table, not_passed_table
from harness.report.chart_model import Chart, Line, xy_chart
from harness.report.formatting import MIB, MISSING, Scale
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios.soak.artifacts import MemorySeries, SoakArtifacts

SCENARIO = "soak"
CHART_POINTS = 400  # readings a chart draws (its data table holds the same)
MIB_SCALE = Scale(MIB, 1, "MiB")
SERIES = (
    ("rss_bytes", "RSS"),
    ("footprint_bytes", "phys footprint"),
    ("swap_used_bytes", "swap used"),
)


@dataclass(frozen=True)
class SoakCase:
    title: str
    note: str
    summary: Table
    windows: Table
    checks: Table
    chart: Chart | None


@dataclass(frozen=True)
class Soaks:
    cases: tuple[SoakCase, ...]
    not_passed: Table


def _mib(value: Any) -> str:
    return f"{value / MIB:.1f} MiB" if isinstance(value, (int, float)) else MISSING


def memory_chart(result: CaseResult, found: SoakArtifacts, index: int) -> Chart | None:
    """The server's memory against seconds into the soak (each series only where every
    reading has it)."""
    series = found.memory
    if series is None:
        return None
    times = series.t_s
    step = max(1, len(times) // CHART_POINTS)
    lines = []
    for key, label in SERIES:
        values = series.column(key)
        if len(values) != len(times) or not values or any(v is None for v in values):
            continue
        points = tuple((times[i], float(values[i] or 0)) for i in range(0, len(times), step))
        lines.append(Line(label, points))
    if not lines:
        return None
    return xy_chart(
        f"soak-memory-{index}",
        f"Server memory over the soak: {result.model} · {result.case_id.rsplit('::', 1)[-1]}",
        "The server process's memory and the machine's swap in use, read through the soak "
        "(flat after the first requests is healthy; a steady climb is a leak).",
        lines,
        x_label="time",
        x_unit="s",
        y_label="memory",
        y_unit=Unit.BYTES,
        y_scale=MIB_SCALE,
        log_y_allowed=False,
    )


def _shown(value: object) -> str:
    return MISSING if value is None else str(value)


def _growth_text(found: SoakArtifacts) -> str:
    growth = found.growth
    if growth is None:
        return f"n/a: {found.memory_why_not or 'too few readings'}"
    per = [
        v * 1000 / MIB if v is not None else float("nan")
        for v in (growth.bytes_per_request, growth.low, growth.high)
    ]
    return (
        f"{per[0]:.1f} MiB per 1,000 requests (95% interval {per[1]:.1f} to {per[2]:.1f}; "
        f"bound {_shown(found.bound_mib_per_1000)})"
    )


def _pressure(series: MemorySeries) -> str:
    words = [w for w in series.pressure if w is not None]
    order = {"normal": 0, "warning": 1, "critical": 2}
    if words:
        return "worst " + max(words, key=lambda w: order.get(w, 3))
    stalls = [v for v in series.stall_pct if v is not None]
    if stalls:
        return f"memory stall (PSI some avg10) up to {max(stalls):.2f}%"
    return MISSING


def _ends(values: tuple[float | None, ...]) -> str:
    """``first → last`` reading, in MiB."""
    return f"{_mib(values[0]) if values else MISSING} → {_mib(values[-1]) if values else MISSING}"


def _summary(found: SoakArtifacts) -> Table:
    series = found.memory or MemorySeries()
    memory = series.column("footprint_bytes" if found.measure == "phys_footprint" else "rss_bytes")
    drift = found.drift
    drift_text = MISSING
    if drift is not None and drift.first_s is not None:
        first, last = drift.first_s, drift.last_s or 0.0
        ratio = last / first if first else float("inf")
        drift_text = f"e2e p{drift.quantile}: {first:.3f} s → {last:.3f} s ({ratio:.2f}x)"
    wired = found.wired_limit_bytes
    rows = [
        (
            "requests",
            f"{_shown(found.completed)} completed, {_shown(found.errors)} failed, "
            f"{_shown(found.cut)} cut, in {_shown(found.duration_s)} s",
        ),
        (f"server memory ({_shown(found.measure)})", _ends(memory)),
        ("growth", _growth_text(found)),
        ("swap used", _ends(series.swap_used_bytes)),
        ("memory pressure", _pressure(series)),
        (
            "Metal wired limit",
            "n/a (not macOS)"
            if wired is None
            else ("system default" if wired == 0 else _mib(wired)),
        ),
        ("latency drift", drift_text),
    ]
    return Table((Column("figure"), Column("value")), tuple((Cell(k), Cell(v)) for k, v in rows))


def _windows(found: SoakArtifacts) -> Table:
    rows = []
    for w in found.windows:
        cells = [Cell(f"{w.first}–{w.last}")]
        for kind in ("e2e", "ttft"):
            parts = [f"{v:.3f}" if v is not None else "n/a" for v in w.percentiles(kind)]
            cells.append(Cell(" / ".join(parts)))
        rows.append(tuple(cells))
    columns = (
        Column("requests"),
        Column("e2e p50/p90/p99 (s)", numeric=True),
        Column("TTFT p50/p90/p99 (s)", numeric=True),
    )
    return Table(columns, tuple(rows))


def _note(found: SoakArtifacts) -> str:
    return "; ".join(
        [
            f"engine {found.engine or MISSING}",
            f"endpoint {found.endpoint or MISSING}",
            f"slope fitted from request {_shown(found.settle_from_request)} on",
        ]
    )


def _cases(results: Sequence[CaseResult]) -> tuple[SoakCase, ...]:
    found = [(r, SoakArtifacts.of(r)) for r in results]
    return tuple(
        SoakCase(
            f"{r.model} · {r.case_id.rsplit('::', 1)[-1]}",
            _note(a),
            _summary(a),
            _windows(a),
            checks_table(r),
            memory_chart(r, a, i),
        )
        for i, (r, a) in enumerate(found)
        if a.memory is not None
    )


def build(run: RunRecord) -> Soaks | None:
    results = sorted(
        (r for r in run.results if r.scenario == SCENARIO), key=lambda r: (r.model, r.case_id)
    )
    if not results:
        return None
    return Soaks(_cases(results), not_passed_table(results))


SECTION = Section(
    "soak", "Soak", build, claims=("soak.",), order=METRICS + 70, templates=Path(__file__).parent
)
