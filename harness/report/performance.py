"""llama-bench style performance tables, one row per (model, scenario, point), median ± stddev,
split so that each fits a CI job summary (about 120 characters a line): speed (prefill, decode,
TTFT, end to end, with the noise), inter-token latency, memory (bytes read per decoded token, the
case's MLX peak and peak RSS) and the roofline: the hardware's bandwidth-bound ceiling and the
share of it reached ("ceiling invalid" where a run passed it: a share above 100% says the
ceiling was wrong), kernel efficiency against MLX's own gemv, and one line per machine saying
what the ceilings were, how and when they were measured (:mod:`harness.report.ceilings`); and
the noise: the coefficient of variation of decode and prefill (of every metric in the tooltip)
with, under ``repeats: auto``, the runs taken and why they stopped."""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.metrics import MLX_PEAK, PROCESS_PEAK_RSS, MetricSpec
from harness.core.types import CaseResult, RunRecord, Unit
from harness.report.ceilings import INVALID, ceiling_lines, invalid_shares
from harness.report.formatting import MIB, Scale, choose_scale
from harness.report.sections import METRICS, Section
from harness.report.table import (
    Cell,
    Column,
    MetricColumn,
    StandIn,
    Table,
    case_metric_table,
    find_metric,
    metric_label,
)
from harness.results.stats import coefficient_of_variation
from harness.runner.case_artifacts import CaseArtifacts
from harness.scenarios import throughput

PREFIX = "throughput."

SPEED: tuple[MetricColumn, ...] = (
    MetricColumn("prefill", (throughput.PREFILL.name,), "prompt tokens per second"),
    MetricColumn("decode", (throughput.DECODE.name,), "generated tokens per second"),
    MetricColumn("TTFT", (throughput.TTFT.name,), "time to first token"),
    MetricColumn("e2e", (throughput.E2E.name,), "end-to-end time of one request"),
)
LATENCY: tuple[MetricColumn, ...] = (
    MetricColumn("ITL p50", (throughput.ITL_P50.name,), "inter-token latency, median"),
    MetricColumn("ITL p90", (throughput.ITL_P90.name,), "inter-token latency, 90th percentile"),
    MetricColumn("ITL p99", (throughput.ITL_P99.name,), "inter-token latency, 99th percentile"),
)
BYTES_PER_TOKEN = MetricColumn(
    "bytes/token", (throughput.BYTES_PER_TOKEN.name,), throughput.BYTES_PER_TOKEN.description
)
MEMORY: tuple[MetricColumn, ...] = (
    BYTES_PER_TOKEN,
    MetricColumn("MLX peak", (MLX_PEAK.name,), "MLX allocator peak during the case (reset before)"),
    MetricColumn("peak RSS", (PROCESS_PEAK_RSS.name,), "worker process peak resident set size"),
)


def _spec_column(label: str, spec: MetricSpec, older: MetricSpec | None = None) -> MetricColumn:
    """The column of one metric, described and in the unit its spec gives; ``older``: what an
    older record measured in its place (MLX's kernel speed, which the bandwidth line names)."""
    names = (spec.name,) if older is None else (spec.name, older.name)
    return MetricColumn(label, names, spec.description, spec.unit)


ROOFLINE: tuple[MetricColumn, ...] = (
    _spec_column("ceiling", throughput.CEILING, throughput.KERNEL_CEILING),
    _spec_column("share", throughput.SHARE, throughput.KERNEL_SHARE),
    _spec_column("kernel efficiency", throughput.KERNEL_EFFICIENCY),
    _spec_column("prefill ceiling", throughput.PREFILL_CEILING, throughput.PREFILL_KERNEL_CEILING),
    _spec_column("prefill share", throughput.PREFILL_SHARE, throughput.PREFILL_KERNEL_SHARE),
)
COLUMNS: tuple[MetricColumn, ...] = (*SPEED, *LATENCY, BYTES_PER_TOKEN, *ROOFLINE)
MIB_SCALE = Scale(MIB, 1, "MiB")


def scale(unit: Unit, values: list[float]) -> Scale:
    """Bytes per token in MiB (0.1 GiB says little); the rest as every table shows them."""
    if unit is Unit.BYTES:
        return MIB_SCALE
    return choose_scale(unit, values)


@dataclass(frozen=True)
class Part:
    """One of the performance tables: ``speed``, ``latency``, ``memory``, ``roofline``, ``more``."""

    key: str
    title: str
    table: Table


@dataclass(frozen=True)
class Performance:
    parts: tuple[Part, ...]
    bandwidth: tuple[str, ...] = ()  # one line per machine and measurement of the ceilings

    def part(self, key: str) -> Table | None:
        return next((p.table for p in self.parts if p.key == key), None)


def bandwidth_lines(run: RunRecord) -> tuple[str, ...]:
    """What the cases' ceilings were: :func:`harness.report.ceilings.ceiling_lines`."""
    return ceiling_lines(run)


def extra_columns(run: RunRecord) -> tuple[MetricColumn, ...]:
    """A column per ``throughput.*`` metric in the run that no known column shows."""
    known = {name for column in COLUMNS for name in column.names}
    extra = sorted(
        {
            m.name
            for r in run.results
            for m in r.metrics
            if m.name.startswith(PREFIX) and m.name not in known
        }
    )
    return tuple(MetricColumn(metric_label(name), (name,), name) for name in extra)


def columns_for(run: RunRecord) -> tuple[MetricColumn, ...]:
    """The known columns, then one per other ``throughput.*`` metric in the run."""
    return COLUMNS + extra_columns(run)


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
    stop = CaseArtifacts.of(result).repeats
    note = None
    if stop is not None and stop.mode == "auto":
        note = f"auto: {stop.taken} runs, {stop.reason or ''}"
    return Cell(" · ".join(shown) or "—", sort=worst, note=note, title=tip or None)


def with_noise(table: Table, results: list[CaseResult]) -> Table:
    """``table`` with a CV column; ``results`` are its rows' cases, in order."""
    rows = tuple((*row, noise_cell(r)) for row, r in zip(table.rows, results, strict=True))
    return Table((*table.columns, CV_COLUMN), rows, table.css)


def ceiling_invalid(result: CaseResult, column: MetricColumn) -> StandIn | None:
    """ "ceiling invalid" in place of a share whose ceiling is invalid (a share above 100% says
    the ceiling was wrong, never that a run beat the hardware), also where the throughput
    scenario left the share out; counted as the case's runs in n."""
    invalid = invalid_shares(result)
    name = next((n for n in column.names if n in invalid), None)
    if name is None:
        return None
    decode = result.metric(throughput.DECODE.name)
    runs = len(decode.samples) if decode is not None else 1
    return StandIn(Cell(INVALID, title=invalid[name]), runs)


def _shows(result: CaseResult, columns: tuple[MetricColumn, ...]) -> bool:
    """Whether ``result`` fills any of ``columns`` (a metric, or "ceiling invalid")."""
    return any(find_metric(result, c.names) or ceiling_invalid(result, c) for c in columns)


SCENARIO_COLUMN = 1  # model, scenario, params, status, then the metrics


def _one_scenario(table: Table) -> tuple[Table, str | None]:
    """``table`` without its scenario column when every row is of one scenario (named in the
    title instead: a narrower table), and that scenario."""
    names = {row[SCENARIO_COLUMN].text for row in table.rows}
    if len(names) != 1 or table.columns[SCENARIO_COLUMN].label != "scenario":
        return table, None

    keep = [i for i in range(len(table.columns)) if i != SCENARIO_COLUMN]
    columns = tuple(table.columns[i] for i in keep)
    rows = tuple(tuple(row[i] for i in keep) for row in table.rows)
    return Table(columns, rows, table.css), names.pop()


def _part(
    shown: list[CaseResult], columns: tuple[MetricColumn, ...], n: bool
) -> tuple[Table, list[CaseResult]]:
    """The table of ``columns`` over ``shown``, and its rows' cases."""
    table = case_metric_table(
        shown, columns, scale_for=scale, sample_count=n, stand_in=ceiling_invalid
    )
    return table, [r for r in shown if _shows(r, columns)]


def build(run: RunRecord) -> Performance | None:
    columns = columns_for(run)
    # the throughput cases: those with a throughput metric (a load case's memory stays out)
    shown = [r for r in run.results if _shows(r, columns)]
    built: dict[str, tuple[str, Table, list[CaseResult]]] = {}
    for key, title, part_columns in (
        ("speed", "Speed", SPEED),
        ("latency", "Latency", LATENCY),
        ("memory", "Memory", MEMORY),
        ("roofline", "Roofline", ROOFLINE),
        ("more", "Other throughput metrics", extra_columns(run)),
    ):
        table, kept = _part(shown, part_columns, n=key != "memory")
        if table:
            built[key] = (title, table, kept)
    # the noise of decode and prefill: beside the latencies (the speed table stays narrow)
    noisy = next((k for k in ("latency", "speed") if k in built), None)
    if noisy is not None:
        title, table, kept = built[noisy]
        built[noisy] = (f"{title} and noise", with_noise(table, kept), kept)
    parts = []
    for key, (title, table, _) in built.items():
        table, scenario = _one_scenario(table)
        parts.append(Part(key, f"{title} · {scenario}" if scenario else title, table))
    if not parts:
        return None
    return Performance(tuple(parts), bandwidth_lines(run))


SECTION = Section("performance", "Performance", build, claims=(PREFIX,), order=METRICS)
