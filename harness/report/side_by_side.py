"""Models side by side: when one run measures the same scenario and point on several models (a
4-bit build against its float32 original, two families), one table per scenario with a column
per model and each model's change against the first one.

Rows are (point, metric) pairs that at least two models measured; values are medians in one
unit per row, chosen from all of them. Up to :data:`MAX_MODELS` models, in run order.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

from harness.core.types import CaseResult, Metric, RunRecord, Unit
from harness.report.formatting import MISSING, choose_scale, finite, params_label
from harness.report.sections import Section
from harness.report.table import Cell, Column, Table, metric_label

MAX_MODELS = 4  # columns a reader compares at a glance (and GitHub's summary width holds)
Key = tuple[str, str]  # (point label, metric name)


@dataclass(frozen=True)
class SideBySide:
    models: tuple[str, ...]
    tables: tuple[tuple[str, Table], ...]  # (scenario, table)
    left_out: int  # models beyond MAX_MODELS


def _median(metric: Metric) -> float | None:
    values = finite(metric.samples)
    return statistics.median(values) if values else None


def _collect(
    results: list[CaseResult],
) -> dict[str, dict[Key, dict[str, tuple[float, Unit]]]]:
    """scenario -> (point, metric) -> model -> (median, unit)."""
    found: dict[str, dict[Key, dict[str, tuple[float, Unit]]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for result in results:
        point = params_label(result.point, result.params)
        for metric in result.metrics:
            value = _median(metric)
            if value is not None:
                key = (point, metric.name)
                found[result.scenario][key][result.model] = (value, metric.unit)
    return found


def _change(value: float, first: float) -> str:
    if first == 0 or not math.isfinite(first):
        return ""
    return f" ({(value - first) / abs(first):+.0%})"


def _table(models: tuple[str, ...], rows: dict[Key, dict[str, tuple[float, Unit]]]) -> Table:
    columns = (
        Column("params", css="nowrap"),
        Column("metric", css="nowrap"),
        *(Column(model, numeric=True) for model in models),
    )
    body = []
    for (point, name), by_model in sorted(rows.items()):
        if sum(1 for m in models if m in by_model) < 2:
            continue  # nothing to compare on this row
        unit = next(iter(by_model.values()))[1]
        scale = choose_scale(unit, [v for v, _ in by_model.values()])
        first = by_model.get(models[0], (math.nan, unit))[0]
        cells = []
        for index, model in enumerate(models):
            if model not in by_model:
                cells.append(Cell(MISSING))
                continue
            value = by_model[model][0]
            text = scale.with_unit(scale.number(value)) if scale.label else scale.number(value)
            if index:
                text += _change(value, first)
            cells.append(Cell(text, sort=value, title=f"{name}: median"))
        body.append((Cell(point), Cell(metric_label(name), title=name), *cells))
    return Table(columns, tuple(body))


def build(run: RunRecord) -> SideBySide | None:
    order = list(dict.fromkeys(r.model for r in run.results))
    if len(order) < 2:
        return None
    models = tuple(order[:MAX_MODELS])
    shown = [r for r in run.results if r.model in models]
    tables = tuple(
        (scenario, table)
        for scenario, rows in sorted(_collect(shown).items())
        if (table := _table(models, rows))
    )
    if not tables:
        return None
    return SideBySide(models, tables, len(order) - len(models))


SECTION = Section("side_by_side", "Models side by side", build)
