"""Weight quantisation section: every mode on every model, one row per model and mode (the model
as loaded first), with what the mode saves (weight bytes, share saved) beside what it costs and
gives (prefill and decode speed, each against the model as loaded, the hardware share), its
quality against the model as loaded (first-token agreement, KL, the token where greedy output
first differs) and the matmul check against its own weights dequantised."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.metrics import MetricSpec
from harness.core.types import CaseResult, Metric, RunRecord, Unit
from harness.report.formatting import MISSING, Scale, choose_scale, status_css, status_label
from harness.report.quality import significant_scale
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, metric_cell, stats
from harness.scenarios.quant_sweep import metrics as qm
from harness.scenarios.quant_sweep.artifacts import QuantSweepArtifacts
from harness.scenarios.quant_sweep.params import MODES
from harness.scenarios.quant_sweep.scenario import SCENARIO

# the model as loaded first, then affine from the most bits, then the float modes likewise
ORDER = (
    "none",
    *sorted(MODES, key=lambda name: (MODES[name][0] != "affine", -MODES[name][1], name)),
)


def percent_scale(_unit: Unit, _values: Sequence[float | None]) -> Scale:
    return Scale(0.01, 1, "%", suffix_space=False)


@dataclass(frozen=True)
class _MetricColumn:
    label: str
    spec: MetricSpec
    scale_for: Callable[[Unit, Sequence[float | None]], Scale] = choose_scale


COLUMNS: tuple[_MetricColumn, ...] = (
    _MetricColumn("weights", qm.WEIGHT_BYTES),
    _MetricColumn("prefill", qm.PREFILL),
    _MetricColumn("decode", qm.DECODE),
    _MetricColumn("prefill vs none", qm.PREFILL_RATIO),
    _MetricColumn("decode vs none", qm.DECODE_RATIO),
    _MetricColumn("decode hw share", qm.DECODE_SHARE, percent_scale),
    _MetricColumn("prefill hw share", qm.PREFILL_SHARE, percent_scale),
    _MetricColumn("first token", qm.AGREEMENT, significant_scale),
    _MetricColumn("KL (nats)", qm.KL, significant_scale),
)
MATMUL = _MetricColumn("matmul KL (nats)", qm.MATMUL_KL, significant_scale)


@dataclass(frozen=True)
class QuantSweep:
    table: Table


def _quant(result: CaseResult) -> str:
    value = result.params.get("quant", "affine4")
    return value if isinstance(value, str) else "?"


def _order(result: CaseResult) -> tuple[str, int]:
    quant = _quant(result)
    return (result.model, ORDER.index(quant) if quant in ORDER else len(ORDER))


def _label(result: CaseResult) -> Cell:
    quant = _quant(result)
    text = QuantSweepArtifacts.of(result).quant or quant
    return Cell(text, sort=ORDER.index(quant) if quant in ORDER else len(ORDER))


def _saved(metric: Metric | None) -> Cell:
    if metric is None:
        return Cell("")
    ratio = stats(metric).median
    if not math.isfinite(ratio):
        return Cell(MISSING)
    return Cell(f"{(1 - ratio) * 100:.0f}%", sort=1 - ratio, title=f"{ratio:.3f}x as loaded")


def _gen(result: CaseResult) -> object:
    return QuantSweepArtifacts.of(result).gen_tokens or result.params.get("gen_tokens")


def _same(result: CaseResult, spec: MetricSpec, against: str) -> Cell:
    metric = result.metric(spec.name)
    if metric is None:
        return Cell("")
    at = stats(metric).median
    gen = _gen(result)
    if not math.isfinite(at):
        return Cell(MISSING)
    text = f"{at:.0f}/{gen}" if isinstance(gen, int) else f"{at:.0f}"
    identical = isinstance(gen, int) and at >= gen
    return Cell(
        f"{text} ✅" if identical else text,
        sort=at,
        title=f"generated tokens equal to {against} before the first difference",
        css=None if identical else "st-failed",
    )


def _scale(column: _MetricColumn, results: Sequence[CaseResult]) -> Scale:
    found = [m for m in (r.metric(column.spec.name) for r in results) if m is not None]
    unit = found[0].unit if found else Unit.SCORE
    return column.scale_for(unit, [stats(m).median for m in found])


def _header(column: _MetricColumn, scale: Scale) -> Column:
    label = f"{column.label} ({scale.label})" if scale.label else column.label
    return Column(label, numeric=True, title=column.spec.description)


def build(run: RunRecord) -> QuantSweep | None:
    rows = sorted((r for r in run.results if r.scenario == SCENARIO.name), key=_order)
    if not rows:
        return None
    measured = [r for r in rows if r.metrics]
    scales = {c: _scale(c, measured) for c in (*COLUMNS, MATMUL)}
    header = [
        Column("model", css="nowrap"),
        Column("mode", title="quant: none is the model as loaded"),
        Column("status"),
        _header(COLUMNS[0], scales[COLUMNS[0]]),
        Column("saved", numeric=True, title=qm.WEIGHT_RATIO.description),
        *(_header(c, scales[c]) for c in COLUMNS[1:]),
        Column("same tokens", numeric=True, title=qm.DIVERGENCE.description),
        _header(MATMUL, scales[MATMUL]),
        Column("same as twin", numeric=True, title=qm.MATMUL_DIVERGENCE.description),
    ]
    body = []
    for result in rows:
        cells = [
            Cell(result.model),
            _label(result),
            Cell(status_label(result.status), css=status_css(result.status)),
            metric_cell(result.metric(COLUMNS[0].spec.name), scales[COLUMNS[0]]),
            _saved(result.metric(qm.WEIGHT_RATIO.name)),
            *(metric_cell(result.metric(c.spec.name), scales[c]) for c in COLUMNS[1:]),
            _same(result, qm.DIVERGENCE, "the model as loaded"),
            metric_cell(result.metric(MATMUL.spec.name), scales[MATMUL]),
            _same(result, qm.MATMUL_DIVERGENCE, "the dequantised twin"),
        ]
        body.append(tuple(cells))
    return QuantSweep(Table(tuple(header), tuple(body)))


SECTION = Section(
    "quant_sweep",
    "Weight quantisation",
    build,
    claims=(qm.PREFIX,),
    order=METRICS + 140,
    templates=Path(__file__).parent,
)
