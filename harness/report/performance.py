"""llama-bench style performance table: one row per (model, scenario, point), median ± stddev,
with the roofline: bytes read per decoded token, the hardware's bandwidth-bound ceiling and the
share of it reached ("ceiling invalid" where a run passed it: a share above 100% says the
ceiling was wrong), kernel efficiency against MLX's own gemv, and one line per machine saying
what the ceilings were, how and when they were measured (:mod:`harness.report.ceilings`); and
the noise: the coefficient of variation of decode and prefill (of every metric in the tooltip)
with, under ``repeats: auto``, the runs taken and why they stopped."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from harness.core.types import CaseResult, Metric, RunRecord, Unit
from harness.report.ceilings import INVALID, ceiling_lines, invalid_shares
from harness.report.formatting import MIB, Scale, choose_scale
from harness.report.sections import Section
from harness.report.table import (
    Cell,
    Column,
    MetricColumn,
    Table,
    case_metric_table,
    find_metric,
    metric_label,
)
from harness.results.stats import coefficient_of_variation
from harness.runner.repeat_loop import ARTIFACT as REPEATS
from harness.scenarios import throughput

PREFIX = "throughput."

COLUMNS: tuple[MetricColumn, ...] = (
    MetricColumn("prefill", (throughput.PREFILL.name,), "prompt tokens per second"),
    MetricColumn("decode", (throughput.DECODE.name,), "generated tokens per second"),
    MetricColumn("TTFT", (throughput.TTFT.name,), "time to first token"),
    MetricColumn("ITL p50", (throughput.ITL_P50.name,), "inter-token latency, median"),
    MetricColumn("ITL p90", (throughput.ITL_P90.name,), "inter-token latency, 90th percentile"),
    MetricColumn("ITL p99", (throughput.ITL_P99.name,), "inter-token latency, 99th percentile"),
    MetricColumn("e2e", (throughput.E2E.name,), "end-to-end time of one request"),
    MetricColumn(
        "bytes/token", (throughput.BYTES_PER_TOKEN.name,), throughput.BYTES_PER_TOKEN.description
    ),
    MetricColumn("ceiling", (throughput.CEILING.name,), throughput.CEILING.description),
    MetricColumn("share", (throughput.SHARE.name,), throughput.SHARE.description),
    MetricColumn(
        "kernel efficiency",
        (throughput.KERNEL_EFFICIENCY.name,),
        throughput.KERNEL_EFFICIENCY.description,
    ),
    MetricColumn(
        "prefill ceiling",
        (throughput.PREFILL_CEILING.name,),
        throughput.PREFILL_CEILING.description,
    ),
    MetricColumn(
        "prefill share", (throughput.PREFILL_SHARE.name,), throughput.PREFILL_SHARE.description
    ),
)
MIB_SCALE = Scale(MIB, 1, "MiB")


def scale(unit: Unit, values: list[float]) -> Scale:
    """Bytes per token in MiB (0.1 GiB says little); the rest as every table shows them."""
    if unit is Unit.BYTES:
        return MIB_SCALE
    return choose_scale(unit, values)


@dataclass(frozen=True)
class Performance:
    table: Table
    bandwidth: tuple[str, ...] = ()  # one line per machine and measurement of the ceilings


def bandwidth_lines(run: RunRecord) -> tuple[str, ...]:
    """What the cases' ceilings were: :func:`harness.report.ceilings.ceiling_lines`."""
    return ceiling_lines(run)


def columns_for(run: RunRecord) -> tuple[MetricColumn, ...]:
    """The known columns, then one per other ``throughput.*`` metric in the run."""
    known = {name for column in COLUMNS for name in column.names}
    extra = sorted(
        {
            m.name
            for r in run.results
            for m in r.metrics
            if m.name.startswith(PREFIX)
            and m.name not in known
            and m.name not in throughput.RENAMED  # shown under today's name
        }
    )
    return COLUMNS + tuple(MetricColumn(metric_label(name), (name,), name) for name in extra)


# the metrics whose coefficient of variation the CV column shows (every metric's is in its tip)
NOISE: tuple[tuple[str, str], ...] = (
    ("decode", throughput.DECODE.name),
    ("prefill", throughput.PREFILL.name),
)
CV_COLUMN = Column(
    "CV",
    numeric=True,
    title="coefficient of variation (stddev / mean) of decode and prefill; every metric's in "
    "the tooltip; under it, how many runs repeats: auto took and why it stopped",
)


def _cv_text(cv: float | None) -> str:
    return "—" if cv is None else f"{cv:.1%}"


def noise_cell(result: CaseResult) -> Cell:
    """``decode 3.1% · prefill 1.2%``, every metric's CV in the tooltip, and (repeats: auto)
    the runs taken and the stop reason as the cell's note."""
    shown = []
    worst: float | None = None
    for label, name in NOISE:
        metric = result.metric(name)
        if metric is None:
            continue
        cv = coefficient_of_variation(metric.samples)
        shown.append(f"{label} {_cv_text(cv)}")
        if cv is not None:
            worst = cv if worst is None else max(worst, cv)
    tip = "; ".join(
        f"{m.name} {_cv_text(coefficient_of_variation(m.samples))}"
        for m in result.metrics
        if len(m.samples) > 1
    )
    stop = result.artifacts.get(REPEATS)
    note = None
    if isinstance(stop, dict) and stop.get("mode") == "auto":
        note = f"auto: {stop.get('taken')} runs, {stop.get('reason', '')}"
    return Cell(" · ".join(shown) or "—", sort=worst, note=note, title=tip or None)


def with_noise(table: Table, results: list[CaseResult]) -> Table:
    """``table`` with a CV column; ``results`` are its rows' cases, in order."""
    rows = tuple((*row, noise_cell(r)) for row, r in zip(table.rows, results, strict=True))
    return Table((*table.columns, CV_COLUMN), rows, table.css)


def _current_names(result: CaseResult) -> CaseResult:
    """``result`` with a record from before the hardware ceiling read under today's names
    (its header line says what that ceiling was: MLX's own kernel)."""
    if not any(m.name in throughput.RENAMED for m in result.metrics):
        return result
    metrics = tuple(
        dataclasses.replace(m, name=throughput.RENAMED.get(m.name, m.name)) for m in result.metrics
    )
    return dataclasses.replace(result, metrics=metrics)


def _holding_invalid(result: CaseResult) -> CaseResult:
    """``result`` with a stand-in for each invalid share it left out (as the throughput scenario
    does), so that the share column is there to say "ceiling invalid"; the cell is replaced."""
    missing = [name for name in invalid_shares(result) if result.metric(name) is None]
    if not missing:
        return result
    decode = result.metric(throughput.DECODE.name)
    runs = len(decode.samples) if decode is not None else 1
    stand_ins = tuple(Metric(name, Unit.RATIO, (0.0,) * runs) for name in missing)
    return dataclasses.replace(result, metrics=(*result.metrics, *stand_ins))


def _cells_marked(table: Table, results: list[CaseResult]) -> Table:
    """``table`` with "ceiling invalid" in place of each share whose ceiling is invalid (a share
    above 100% says the ceiling was wrong, never that a run beat the hardware)."""
    by_title = {column.description: column.names[0] for column in COLUMNS if column.description}
    names = [by_title.get(column.title or "") for column in table.columns]
    rows = []
    for row, result in zip(table.rows, results, strict=True):
        invalid = invalid_shares(result)
        rows.append(
            tuple(
                Cell(INVALID, title=invalid[name]) if name in invalid else cell
                for cell, name in zip(row, names, strict=True)
            )
        )
    return Table(table.columns, tuple(rows), table.css)


def build(run: RunRecord) -> Performance | None:
    columns = columns_for(run)
    shown = [_holding_invalid(_current_names(r)) for r in run.results]
    table = case_metric_table(shown, columns, scale_for=scale)
    if not table:
        return None
    kept = [
        (s, r)
        for s, r in zip(shown, run.results, strict=True)
        if any(find_metric(s, c.names) for c in columns)
    ]
    table = _cells_marked(table, [r for _, r in kept])
    return Performance(with_noise(table, [r for _, r in kept]), bandwidth_lines(run))


SECTION = Section("performance", "Performance", build, claims=(PREFIX,))
