"""Metrics no other section shows, one row per (case, metric), so that nothing measured is
hidden while a new scenario has no section of its own yet."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from harness.core.types import Metric, RunRecord
from harness.report.formatting import choose_scale
from harness.report.sections import CLOSING, Section
from harness.report.table import (
    CASE_COLUMNS,
    Cell,
    Column,
    Table,
    case_cells,
    claimed,
    metric_cell,
    stats,
)


@dataclass(frozen=True)
class OtherMetrics:
    table: Table


def build(run: RunRecord, claims: tuple[str, ...] = ()) -> OtherMetrics | None:
    pairs = [
        (result, metric)
        for result in run.results
        for metric in result.metrics
        if not claimed(metric.name, claims)
    ]
    if not pairs:
        return None
    by_name: dict[str, list[Metric]] = {}
    for _, metric in pairs:
        by_name.setdefault(metric.name, []).append(metric)
    scales = {
        name: choose_scale(ms[0].unit, [stats(m).median for m in ms])
        for name, ms in by_name.items()
    }
    rows = []
    for result, metric in pairs:
        scale = scales[metric.name]
        value = metric_cell(metric, scale)
        if scale.label and value.sort is not None:
            value = Cell(f"{value.text} {scale.label}", sort=value.sort, title=value.title)
        n = stats(metric).n
        rows.append((*case_cells(result), Cell(metric.name), value, Cell(str(n), sort=n)))
    columns = (
        *CASE_COLUMNS,
        Column("metric", css="nowrap"),
        Column("median ± stddev", numeric=True),
        Column("n", numeric=True),
    )
    return OtherMetrics(Table(columns, tuple(rows)))


def section(claims: tuple[str, ...]) -> Section:
    """The section, told which metrics the other sections already show."""
    return Section("other", "Other metrics", partial(build, claims=claims), order=CLOSING)
