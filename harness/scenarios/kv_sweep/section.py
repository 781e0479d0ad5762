"""KV cache sweep section: one row per model, context depth and KV setting (the unquantized
cache first), with what the setting saves (KV bytes, share saved, peak) next to what it costs
(prefill and decode speed, first-token agreement, KL, the token where greedy output first
differs), all against the unquantized cache at the same depth."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.types import CaseResult, Metric, RunRecord, Unit
from harness.report.formatting import MISSING, Scale, choose_scale, status_css, status_label
from harness.report.quality import significant_scale
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, metric_cell, stats
from harness.scenarios import kv_sweep as kv

PREFIX = "kv_sweep."


@dataclass(frozen=True)
class _MetricColumn:
    label: str
    name: str
    description: str
    scale_for: Callable[[Unit, Sequence[float | None]], Scale] = choose_scale


COLUMNS: tuple[_MetricColumn, ...] = (
    _MetricColumn("KV cache", kv.KV_BYTES.name, kv.KV_BYTES.description),
    _MetricColumn("peak", kv.PEAK.name, kv.PEAK.description),
    _MetricColumn("prefill", kv.PREFILL.name, kv.PREFILL.description),
    _MetricColumn("decode", kv.DECODE.name, kv.DECODE.description),
    _MetricColumn("prefill vs none", kv.PREFILL_RATIO.name, kv.PREFILL_RATIO.description),
    _MetricColumn("decode vs none", kv.DECODE_RATIO.name, kv.DECODE_RATIO.description),
    _MetricColumn("first token", kv.AGREEMENT.name, kv.AGREEMENT.description, significant_scale),
    _MetricColumn("KL (nats)", kv.KL.name, kv.KL.description, significant_scale),
)


@dataclass(frozen=True)
class KVSweep:
    table: Table


def _bits(result: CaseResult) -> int | None:
    value = result.params.get("kv_bits")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _depth(result: CaseResult) -> int:
    found = kv.KVSweepArtifacts.of(result).context_tokens
    if found is not None:
        return found
    value = result.params.get("context_tokens")  # a case that measured nothing: as asked
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _order(result: CaseResult) -> tuple[str, int, int]:
    """Model, then depth, then the unquantized cache first and fewer bits after."""
    bits = _bits(result)
    return (result.model, _depth(result), -(bits if bits is not None else 1000))


def _saved(metric: Metric | None) -> Cell:
    if metric is None:
        return Cell("")
    ratio = stats(metric).median
    if not math.isfinite(ratio):
        return Cell(MISSING)
    return Cell(f"{(1 - ratio) * 100:.0f}%", sort=1 - ratio, title=f"{ratio:.3f}x the unquantized")


def _same(result: CaseResult) -> Cell:
    metric = result.metric(kv.DIVERGENCE.name)
    if metric is None:
        return Cell("")
    at = stats(metric).median
    gen = kv.KVSweepArtifacts.of(result).gen_tokens or result.params.get("gen_tokens")
    if not math.isfinite(at):
        return Cell(MISSING)
    text = f"{at:.0f}/{gen}" if isinstance(gen, int) else f"{at:.0f}"
    identical = isinstance(gen, int) and at >= gen
    return Cell(
        f"{text} ✅" if identical else text,
        sort=at,
        title="generated tokens equal to the unquantized cache's before the first difference",
        css=None if identical else "st-failed",
    )


def _scale(column: _MetricColumn, results: Sequence[CaseResult]) -> Scale:
    """One unit per column, chosen from its values."""
    found = [m for m in (r.metric(column.name) for r in results) if m is not None]
    unit = found[0].unit if found else Unit.SCORE
    return column.scale_for(unit, [stats(m).median for m in found])


def build(run: RunRecord) -> KVSweep | None:
    rows = sorted((r for r in run.results if r.scenario == kv.SCENARIO.name), key=_order)
    measured = [r for r in rows if r.metrics]
    if not rows:
        return None
    scales = {c: _scale(c, measured) for c in COLUMNS}
    header = [
        Column("model", css="nowrap"),
        Column("depth", numeric=True, title="context tokens prefilled"),
        Column("KV", title="kv_bits: none is the unquantized cache"),
        Column("status"),
    ]
    for column in COLUMNS:
        label = scales[column].label
        header.append(
            Column(
                f"{column.label} ({label})" if label else column.label,
                numeric=True,
                title=column.description,
            )
        )
    header.insert(5, Column("saved", numeric=True, title=kv.KV_RATIO.description))
    header.append(Column("same tokens", numeric=True, title=kv.DIVERGENCE.description))
    body = []
    for result in rows:
        bits = _bits(result)
        cells = [
            Cell(result.model),
            Cell(str(_depth(result)), sort=_depth(result)),
            Cell("none" if bits is None else f"{bits}-bit", sort=bits or 99),
            Cell(status_label(result.status), css=status_css(result.status)),
        ]
        cells += [metric_cell(result.metric(c.name), scales[c]) for c in COLUMNS]
        cells.insert(5, _saved(result.metric(kv.KV_RATIO.name)))
        cells.append(_same(result))
        body.append(tuple(cells))
    return KVSweep(Table(tuple(header), tuple(body)))


SECTION = Section(
    "kv_sweep",
    "KV cache sweep",
    build,
    claims=(PREFIX,),
    order=METRICS + 130,
    templates=Path(__file__).parent,
)
