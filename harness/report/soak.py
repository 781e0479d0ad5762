"""Soak section: per ``soak`` case, the server's memory over time (a chart: RSS, the physical
footprint where macOS gives it, swap in use), its growth per 1,000 requests with the 95%
interval against the bound, swap and memory pressure, the Metal wired limit, and the latency
percentiles of each window of requests with the drift from the first to the last; then each
check's verdict, and the cases that did not pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.types import CaseResult, RunRecord, Unit
from harness.report.cancellation import checks_table, not_passed_table
from harness.report.chart_model import Chart, Line, xy_chart
from harness.report.formatting import MIB, MISSING, Scale
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios.serving.stats import QUANTILES

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


def _column(series: Mapping[str, Any], key: str) -> list[Any]:
    values = series.get(key)
    return values if isinstance(values, list) else []


def memory_chart(result: CaseResult, index: int) -> Chart | None:
    """The server's memory against seconds into the soak (each series only where every
    reading has it)."""
    series = result.artifacts.get("memory")
    if not isinstance(series, Mapping):
        return None
    times = _column(series, "t_s")
    step = max(1, len(times) // CHART_POINTS)
    lines = []
    for key, label in SERIES:
        values = _column(series, key)
        if (
            len(values) != len(times)
            or not values
            or any(not isinstance(v, (int, float)) for v in values)
        ):
            continue
        points = tuple((float(times[i]), float(values[i])) for i in range(0, len(times), step))
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


def _growth_text(a: Mapping[str, Any]) -> str:
    growth = a.get("growth")
    if not isinstance(growth, Mapping):
        return f"n/a: {a.get('memory_why_not') or 'too few readings'}"
    per = [
        growth[k] * 1000 / MIB if isinstance(growth.get(k), (int, float)) else float("nan")
        for k in ("bytes_per_request", "low", "high")
    ]
    return (
        f"{per[0]:.1f} MiB per 1,000 requests (95% interval {per[1]:.1f} to {per[2]:.1f}; "
        f"bound {a.get('bound_mib_per_1000', MISSING)})"
    )


def _pressure(series: Mapping[str, Any]) -> str:
    words = [w for w in _column(series, "pressure") if isinstance(w, str)]
    order = {"normal": 0, "warning": 1, "critical": 2}
    if words:
        return "worst " + max(words, key=lambda w: order.get(w, 3))
    stalls = [v for v in _column(series, "stall_pct") if isinstance(v, (int, float))]
    if stalls:
        return f"memory stall (PSI some avg10) up to {max(stalls):.2f}%"
    return MISSING


def _summary(result: CaseResult) -> Table:
    a = result.artifacts
    found = a.get("memory")
    series: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    memory = _column(
        series, "footprint_bytes" if a.get("measure") == "phys_footprint" else "rss_bytes"
    )
    swap = _column(series, "swap_used_bytes")
    drift = a.get("drift")
    drift_text = MISSING
    if isinstance(drift, Mapping) and isinstance(drift.get("first_s"), (int, float)):
        first, last = drift["first_s"], drift.get("last_s", 0.0)
        ratio = last / first if first else float("inf")
        drift_text = f"e2e p{drift.get('quantile')}: {first:.3f} s → {last:.3f} s ({ratio:.2f}x)"
    wired = a.get("wired_limit_bytes")
    rows = [
        (
            "requests",
            f"{a.get('completed', MISSING)} completed, {a.get('errors', MISSING)} failed, "
            f"{a.get('cut', MISSING)} cut, in {a.get('duration_s', MISSING)} s",
        ),
        (
            f"server memory ({a.get('measure', MISSING)})",
            f"{_mib(memory[0]) if memory else MISSING} → {_mib(memory[-1]) if memory else MISSING}",
        ),
        ("growth", _growth_text(a)),
        (
            "swap used",
            f"{_mib(swap[0]) if swap else MISSING} → {_mib(swap[-1]) if swap else MISSING}",
        ),
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


def _windows(result: CaseResult) -> Table:
    rows = []
    found = result.artifacts.get("windows")
    for w in found if isinstance(found, list) else []:
        if not isinstance(w, Mapping):
            continue
        cells = [Cell(f"{w.get('first')}–{w.get('last')}")]
        for kind in ("e2e", "ttft"):
            parts = []
            for q in QUANTILES:
                v = w.get(f"{kind}_p{q}_s")
                parts.append(f"{v:.3f}" if isinstance(v, (int, float)) else "n/a")
            cells.append(Cell(" / ".join(parts)))
        rows.append(tuple(cells))
    columns = (
        Column("requests"),
        Column("e2e p50/p90/p99 (s)", numeric=True),
        Column("TTFT p50/p90/p99 (s)", numeric=True),
    )
    return Table(columns, tuple(rows))


def _note(result: CaseResult) -> str:
    a = result.artifacts
    return "; ".join(
        [
            f"engine {a.get('engine', MISSING)}",
            f"endpoint {a.get('endpoint', MISSING)}",
            f"slope fitted from request {a.get('settle_from_request', MISSING)} on",
        ]
    )


def _cases(results: Sequence[CaseResult]) -> tuple[SoakCase, ...]:
    return tuple(
        SoakCase(
            f"{r.model} · {r.case_id.rsplit('::', 1)[-1]}",
            _note(r),
            _summary(r),
            _windows(r),
            checks_table(r),
            memory_chart(r, i),
        )
        for i, r in enumerate(results)
        if isinstance(r.artifacts.get("memory"), Mapping)
    )


def build(run: RunRecord) -> Soaks | None:
    results = sorted(
        (r for r in run.results if r.scenario == SCENARIO), key=lambda r: (r.model, r.case_id)
    )
    if not results:
        return None
    return Soaks(_cases(results), not_passed_table(results))


SECTION = Section("soak", "Soak", build, claims=("soak.",), order=METRICS + 70)
