"""llama-bench style performance table: one row per (model, scenario, point), median ± stddev."""

from __future__ import annotations

from dataclasses import dataclass

from harness.report.sections import Section
from harness.report.table import MetricColumn, Table, case_metric_table, metric_label
from harness.scenarios import throughput
from harness.types import RunRecord

PREFIX = "throughput."

COLUMNS: tuple[MetricColumn, ...] = (
    MetricColumn("prefill", (throughput.PREFILL.name,), "prompt tokens per second"),
    MetricColumn("decode", (throughput.DECODE.name,), "generated tokens per second"),
    MetricColumn("TTFT", (throughput.TTFT.name,), "time to first token"),
    MetricColumn("ITL p50", (throughput.ITL_P50.name,), "inter-token latency, median"),
    MetricColumn("ITL p90", (throughput.ITL_P90.name,), "inter-token latency, 90th percentile"),
    MetricColumn("ITL p99", (throughput.ITL_P99.name,), "inter-token latency, 99th percentile"),
    MetricColumn("e2e", (throughput.E2E.name,), "end-to-end time of one request"),
)


@dataclass(frozen=True)
class Performance:
    table: Table


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


def build(run: RunRecord) -> Performance | None:
    table = case_metric_table(run.results, columns_for(run))
    return Performance(table) if table else None


SECTION = Section("performance", "Performance", build, claims=(PREFIX,))
