"""Models side by side: when one run measures the same scenario and point on variants of one
model (a 4-bit build against its float32 original), one table per model and scenario with a
column per variant and each one's change against the first.

Only models that make sense together are set side by side:

- variants of one model: models whose probe (recorded in the run) names the same architecture
  (``model_type``) and a parameter count within :data:`SAME_SIZE` of each other; quantisation
  does not change the count. A model with no such variant in the run, or with no probe to
  tell, is named as not compared: a real model against a random tiny one says nothing;
- or a named reference: a suite's ``side_by_side: {reference: NAME}`` (recorded with the run,
  :attr:`harness.core.types.SuiteInfo.reference`) sets every other model of that suite against
  NAME, whatever their architecture (the suite's author said they belong together), in tables
  of up to :data:`MAX_MODELS` columns, the reference first in each. A reference that measured
  nothing in this run (left out by ``-k``, skipped) is said so, and its suite's models fall back
  to variants.

Rows are (point, metric) pairs that at least two variants measured, one row per metric (two
metrics of one short label are shown by their full names); values are medians in one unit per
row, chosen from all of them. Up to :data:`MAX_MODELS` variants a table, in run order.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from harness.core.types import CaseResult, Metric, RunRecord, Unit
from harness.report.formatting import MISSING, choose_scale, params_label
from harness.report.sections import OPENING, Section
from harness.report.table import Cell, Column, Table, metric_label

MAX_MODELS = 4  # columns a reader compares at a glance (and GitHub's summary width holds)
SAME_SIZE = 0.1  # parameter counts this close (relative) are one model's variants
Key = tuple[str, str]  # (point label, metric name)


@dataclass(frozen=True)
class Variants:
    """Models of one architecture and size, in run order: the first is the one compared with."""

    label: str  # "llama, 135M parameters"
    models: tuple[str, ...]
    left_out: int = 0  # variants beyond MAX_MODELS


@dataclass(frozen=True)
class SideBySide:
    tables: tuple[tuple[str, Table], ...]  # (title: scenario, model and first variant; table)
    groups: tuple[Variants, ...]
    apart: tuple[str, ...] = ()  # models with no variant in the run (or no probe): not compared
    # "the reference 'f32' of suite 'smoke' measured nothing in this run": a line each
    notes: tuple[str, ...] = ()

    @property
    def left_out(self) -> int:
        return sum(g.left_out for g in self.groups)


def _size(parameters: int) -> str:
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if parameters >= limit:
            return f"{parameters / limit:.3g}{suffix}"
    return str(parameters)


def _kind(probe: Mapping[str, object]) -> tuple[str, int] | None:
    """(architecture, parameter count) from a recorded probe; None when it does not say."""
    model_type, parameters = probe.get("model_type"), probe.get("parameters")
    if not isinstance(model_type, str) or not model_type:
        return None
    if not isinstance(parameters, int) or isinstance(parameters, bool) or parameters <= 0:
        return None
    return model_type, parameters


def reference_groups(
    run: RunRecord,
) -> tuple[tuple[Variants, ...], frozenset[str], tuple[str, ...]]:
    """The groups each suite's named reference makes (the reference and up to
    ``MAX_MODELS - 1`` of the suite's other models a group, every model in one), the models they
    hold, and a note for each reference that measured nothing in the run."""
    groups: list[Variants] = []
    held: set[str] = set()
    notes: list[str] = []
    for suite in run.suites:
        if suite.reference is None:
            continue
        models = list(dict.fromkeys(r.model for r in run.results if r.suite == suite.name))
        reference = suite.reference
        if reference not in models:
            notes.append(
                f"the reference '{reference}' of suite '{suite.name}' measured nothing in this "
                "run: its models are compared as variants only"
            )
            continue
        others = [m for m in models if m != reference]
        step = MAX_MODELS - 1
        for start in range(0, len(others), step):
            label = f"{suite.name}'s reference"
            groups.append(Variants(label, (reference, *others[start : start + step])))
        held.update(models)
    return tuple(groups), frozenset(held), tuple(notes)


def variant_groups(
    run: RunRecord, held: frozenset[str] = frozenset()
) -> tuple[tuple[Variants, ...], tuple[str, ...]]:
    """The groups of two or more variants, and the models left alone (``held``: models a
    named reference compares already, left out of both)."""
    found: list[tuple[str, int, list[str]]] = []
    alone: list[str] = []
    for model in dict.fromkeys(r.model for r in run.results if r.model not in held):
        kind = _kind(run.probes.get(model, {}))
        if kind is None:
            alone.append(model)
            continue
        for model_type, parameters, members in found:
            if model_type == kind[0] and abs(kind[1] - parameters) <= SAME_SIZE * parameters:
                members.append(model)
                break
        else:
            found.append((kind[0], kind[1], [model]))
    groups = []
    for model_type, parameters, members in found:
        if len(members) < 2:
            alone.extend(members)
            continue
        label = f"{model_type}, {_size(parameters)} parameters"
        shown = tuple(members[:MAX_MODELS])
        groups.append(Variants(label, shown, len(members) - len(shown)))
    order = list(dict.fromkeys(r.model for r in run.results))
    return tuple(groups), tuple(sorted(alone, key=order.index))


def _median(metric: Metric) -> float | None:
    """The one summary's median (finite samples only); None when nothing was measured. Counts
    (checks passed, errors) are the suite's choice, not a property of a variant: left out."""
    if metric.unit is Unit.COUNT or metric.summary.n == 0:
        return None
    return metric.summary.median


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
    labels = Counter(metric_label(name) for name in {name for _, name in rows})
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
        label = metric_label(name) if labels[metric_label(name)] == 1 else name
        body.append((Cell(point), Cell(label, title=name), *cells))
    return Table(columns, tuple(body))


def build(run: RunRecord) -> SideBySide | None:
    named, held, notes = reference_groups(run)
    variants, apart = variant_groups(run, held)
    groups = (*named, *variants)
    tables = []
    for group in groups:
        shown = [r for r in run.results if r.model in group.models]
        for scenario, rows in sorted(_collect(shown).items()):
            if table := _table(group.models, rows):
                title = f"{scenario} · {group.label} · against {group.models[0]}"
                tables.append((title, table))
    if not tables and not notes:
        return None
    return SideBySide(tuple(tables), groups, apart, notes)


SECTION = Section("side_by_side", "Models side by side", build, order=OPENING + 30)
