"""Load and memory tables: per case, load time, weights size and each memory view labelled
(MLX peak, MLX active, process peak RSS), one table per scenario so each shows only the columns
its cases measured (a load row has no MLX peak, a throughput row no load time); then the probe's
predicted MLX peak beside the measured one, with the prediction error."""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.metrics import MLX_ACTIVE, MLX_PEAK, PROCESS_PEAK_RSS
from harness.core.types import RunRecord, Unit
from harness.report.formatting import GIB, MIB, Scale, choose_scale, finite
from harness.report.memory_prediction import prediction_table
from harness.report.sections import METRICS, Section
from harness.report.table import MetricColumn, Table, case_metric_table, metric_label
from harness.scenarios import load

PREFIXES = ("memory.", "load.")

COLUMNS: tuple[MetricColumn, ...] = (
    MetricColumn("load", (load.LOAD_S.name,), "time to load the model"),
    MetricColumn("weights", (load.WEIGHTS.name,), "size of the weights on disk"),
    MetricColumn("MLX after load", (load.ACTIVE.name,), "MLX allocator active after load"),
    MetricColumn("MLX load peak", (load.LOAD_PEAK.name,), "MLX allocator peak during the load"),
    MetricColumn("MLX peak", (MLX_PEAK.name,), "MLX allocator peak during the case (reset before)"),
    MetricColumn("MLX active", (MLX_ACTIVE.name,), "MLX allocator active at the end of the case"),
    MetricColumn("peak RSS", (PROCESS_PEAK_RSS.name,), "worker process peak resident set size"),
)


@dataclass(frozen=True)
class Memory:
    table: Table  # every case in one table
    prediction: Table  # predicted vs measured MLX peak (empty in runs without estimates)
    by_scenario: tuple[tuple[str, Table], ...] = ()  # ``table`` split: only each one's columns


def columns_for(run: RunRecord) -> tuple[MetricColumn, ...]:
    """The known columns, then one per other ``memory.*``/``load.*`` metric (by its view)."""
    known = {name for column in COLUMNS for name in column.names}
    extra: dict[str, str | None] = {}
    for result in run.results:
        for metric in result.metrics:
            if metric.name.startswith(PREFIXES) and metric.name not in known:
                extra.setdefault(metric.name, metric.view)
    return COLUMNS + tuple(
        MetricColumn((view or metric_label(name)).replace("_", " "), (name,), name)
        for name, view in sorted(extra.items())
    )


def memory_scale(unit: Unit, values: list[float]) -> Scale:
    """Bytes in MiB, so a column reads at a glance; GiB only once values reach 10 GiB."""
    if unit is not Unit.BYTES:
        return choose_scale(unit, values)
    if max((abs(v) for v in finite(values)), default=0.0) >= 10 * GIB:
        return Scale(GIB, 2, "GiB")
    return Scale(MIB, 1, "MiB")


def build(run: RunRecord) -> Memory | None:
    columns = columns_for(run)
    table = case_metric_table(run.results, columns, sample_count=False, scale_for=memory_scale)
    prediction = prediction_table(run.results)
    scenarios = sorted({r.scenario for r in run.results})
    split = tuple(
        (name, part)
        for name in scenarios
        if (
            part := case_metric_table(
                [r for r in run.results if r.scenario == name],
                columns,
                sample_count=False,
                scale_for=memory_scale,
            )
        )
    )
    return Memory(table, prediction, split) if table or prediction else None


SECTION = Section("memory", "Load and memory", build, claims=PREFIXES, order=METRICS + 220)
