"""llama-bench style performance table: one row per (model, scenario, point), median ± stddev,
with the roofline: bytes read per decoded token, the bandwidth-bound ceiling and the share of
it reached, and the read bandwidth each figure was judged against; and the noise: the
coefficient of variation of decode and prefill (of every metric in the tooltip) with, under
``repeats: auto``, the runs taken and why they stopped."""

from __future__ import annotations

from dataclasses import dataclass

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
from harness.types import CaseResult, RunRecord, Unit

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


GB = 1e9


@dataclass(frozen=True)
class Performance:
    table: Table
    bandwidth: tuple[str, ...] = ()  # one line per machine fingerprint the cases measured


def _rate(value: object) -> str:
    return f"{float(value) / GB:.2f} GB/s" if isinstance(value, int | float) else "?"


def bandwidth_lines(run: RunRecord) -> tuple[str, ...]:
    """``read bandwidth 13.15 GB/s (gemv; sum 2.90 GB/s), 256 MiB buffer, median of 7,
    measured, machine 0123abcd``: one per fingerprint, from the cases' artifacts."""
    seen: dict[str, str] = {}
    for result in run.results:
        found = result.artifacts.get("bandwidth")
        if not isinstance(found, dict) or str(found.get("fingerprint")) in seen:
            continue
        kernels = found.get("kernels_bytes_per_s")
        others = (
            "; ".join(f"{k} {_rate(v)}" for k, v in kernels.items() if k != found.get("kernel"))
            if isinstance(kernels, dict)
            else ""
        )
        buffer = found.get("buffer_bytes")
        size = f"{int(buffer) // 2**20} MiB buffer, " if isinstance(buffer, int) else ""
        flops = found.get("flops_per_s")
        compute = (
            f"; float32 matmul {float(flops) / 1e9:.1f} GFLOP/s"
            if isinstance(flops, int | float) and flops > 0
            else ""
        )
        seen[str(found.get("fingerprint"))] = (
            f"read bandwidth {_rate(found.get('bytes_per_s'))} ({found.get('kernel')}"
            f"{'; ' + others if others else ''}), {size}median of {found.get('repeats')}"
            f"{compute}, {found.get('source')}, machine {found.get('fingerprint')}"
        )
    return tuple(seen.values())


def columns_for(run: RunRecord) -> tuple[MetricColumn, ...]:
    """The known columns, then one per other ``throughput.*`` metric in the run."""
    known = {name for column in COLUMNS for name in column.names}
    extra = sorted(
        {
            m.name
            for r in run.results
            for m in r.metrics
            if m.name.startswith(PREFIX) and m.name not in known
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


def build(run: RunRecord) -> Performance | None:
    columns = columns_for(run)
    table = case_metric_table(run.results, columns, scale_for=scale)
    if not table:
        return None
    rows = [r for r in run.results if any(find_metric(r, c.names) for c in columns)]
    return Performance(with_noise(table, rows), bandwidth_lines(run))


SECTION = Section("performance", "Performance", build, claims=(PREFIX,))
