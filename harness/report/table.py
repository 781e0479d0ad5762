"""Plain table values shared by the sections, and the case x metric table builder.

A section builds :class:`Table` values (strings already formatted, raw values kept for
sorting); the ``table.md.j2`` and ``table.html.j2`` partials lay any of them out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from harness.core.summary import Summary
from harness.core.types import CaseResult, Metric, Unit
from harness.report.escape import safe_link
from harness.report.formatting import (
    MISSING,
    Scale,
    choose_scale,
    format_stat,
    params_label,
    status_css,
    status_label,
)


@dataclass(frozen=True)
class Cell:
    text: str
    sort: float | str | None = None  # raw value the HTML table sorts by (text when None)
    note: str | None = None  # a second, smaller line
    title: str | None = None  # tooltip in HTML
    css: str | None = None
    link: str | None = None  # an http(s) link, already checked by safe_link

    @staticmethod
    def linked(
        text: str,
        link: str | None,
        *,
        sort: float | str | None = None,
        note: str | None = None,
        title: str | None = None,
        css: str | None = None,
    ) -> Cell:
        """A cell whose link is kept only when it is a plain http(s) URL."""
        return Cell(text, sort=sort, note=note, title=title, css=css, link=safe_link(link))


@dataclass(frozen=True)
class Column:
    label: str
    numeric: bool = False
    title: str | None = None
    css: str = ""  # class for the column's cells in HTML, e.g. "nowrap"


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    css: str = ""

    def __bool__(self) -> bool:
        return bool(self.rows)


@dataclass(frozen=True)
class MetricColumn:
    """A table column filled by the first metric of ``names`` that a case has."""

    label: str
    names: tuple[str, ...]
    description: str = ""
    unit: Unit | None = None  # the metrics' unit: a column of stand-ins alone still has a scale


@dataclass(frozen=True)
class StandIn:
    """What a case shows in a metric column instead of its metric (a share whose ceiling is
    invalid reads "ceiling invalid"); ``samples``: what the row's n counts for it when the case
    has no such metric."""

    cell: Cell
    samples: int


StandInFor = Callable[[CaseResult, MetricColumn], StandIn | None]


Stats = Summary  # what a cell shows: the one summary gates and compare decide on


def stats(metric: Metric) -> Summary:
    """Median and spread over the finite samples only (a NaN sample does not poison them):
    :attr:`harness.core.types.Metric.summary`, the summary gates and compare use."""
    return metric.summary


def find_metric(result: CaseResult, names: Iterable[str]) -> Metric | None:
    for name in names:
        metric = result.metric(name)
        if metric is not None:
            return metric
    return None


def metric_cell(metric: Metric | None, scale: Scale, *, spread: bool = True) -> Cell:
    if metric is None:
        return Cell("", sort=None)
    st = stats(metric)
    if st.n == 0:
        return Cell(MISSING, title=f"{metric.name}: no finite samples")
    text = format_stat(st.median, st.stddev if spread else math.nan, st.n, scale)
    tip = f"{metric.name}: {st.counted()}"  # median of 4, 1 sample dropped
    if st.n > 1:
        tip += f"; stddev {scale.with_unit(scale.number(st.stddev))}"
    if metric.view:
        tip += f"; view: {metric.view}"
    return Cell(text, sort=st.median, title=tip)


def case_cells(result: CaseResult) -> tuple[Cell, ...]:
    """The leading cells every per-case table shares: model, scenario, params, status."""
    return (
        Cell(result.model),
        Cell(result.scenario),
        Cell(params_label(result.point, result.params), title=result.case_id),
        Cell(status_label(result.status), css=status_css(result.status)),
    )


CASE_COLUMNS: tuple[Column, ...] = (
    Column("model", css="nowrap"),
    Column("scenario", css="nowrap"),
    Column("params", title="ppN = N prompt tokens, tgN = N generated tokens", css="nowrap"),
    Column("status"),
)


def _sample_counts(metrics: Sequence[Metric | None], stand_ins: Sequence[int] = ()) -> Cell:
    counts = sorted({stats(m).n for m in metrics if m is not None} | set(stand_ins))
    if not counts:
        return Cell("")
    text = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return Cell(text, sort=counts[-1], title="samples per metric (warm-ups not counted)")


def case_metric_table(
    results: Sequence[CaseResult],
    columns: Sequence[MetricColumn],
    *,
    spread: bool = True,
    sample_count: bool = True,
    scale_for: Callable[[Unit, list[float]], Scale] = choose_scale,
    stand_in: StandInFor | None = None,
) -> Table:
    """One row per case that has any of ``columns``' metrics (or a stand-in for one); empty
    columns are left out.

    Each metric column shares one unit (ms or s, MiB or GiB) chosen from its values, and
    names it in the header. ``stand_in`` gives the cell a case shows in a column instead of
    its metric, if any.
    """
    standing = {c: [stand_in(r, c) if stand_in else None for r in results] for c in columns}
    keep = [
        any(find_metric(r, c.names) or standing[c][i] for c in columns)
        for i, r in enumerate(results)
    ]
    rows = [r for r, kept in zip(results, keep, strict=True) if kept]
    found = {c: [find_metric(r, c.names) for r in rows] for c in columns}
    instead = {c: [s for s, kept in zip(standing[c], keep, strict=True) if kept] for c in columns}
    used = [c for c in columns if any(m is not None for m in (*found[c], *instead[c]))]
    header = list(CASE_COLUMNS)
    scales: dict[MetricColumn, Scale] = {}
    for column in used:
        present = [m for m in found[column] if m is not None]
        unit = present[0].unit if present else column.unit or Unit.COUNT
        scale = scale_for(unit, [stats(m).median for m in present])
        scales[column] = scale
        label = f"{column.label} ({scale.label})" if scale.label else column.label
        header.append(Column(label, numeric=True, title=column.description or None))
    if sample_count:
        header.append(Column("n", numeric=True, title="samples per metric"))
    body: list[tuple[Cell, ...]] = []
    for index, result in enumerate(rows):
        row = [found[c][index] for c in used]
        cells = [*case_cells(result)]
        for column, metric in zip(used, row, strict=True):
            other = instead[column][index]
            cells.append(
                other.cell if other else metric_cell(metric, scales[column], spread=spread)
            )
        if sample_count:
            extra = [
                s.samples
                for c, m in zip(used, row, strict=True)
                if m is None and (s := instead[c][index]) is not None
            ]
            cells.append(_sample_counts(row, extra))
        body.append(tuple(cells))
    return Table(tuple(header), tuple(body))


def metric_label(name: str) -> str:
    """A column label for a metric nobody named: ``prompt_cache.hit_ratio`` -> ``hit ratio``."""
    short = name.split(".", 1)[-1]
    for suffix in ("_bytes", "_tps", "_s"):
        if short.endswith(suffix):
            short = short[: -len(suffix)]
            break
    return short.replace("_", " ")


def claimed(name: str, claims: Iterable[str]) -> bool:
    """Whether ``name`` is one of ``claims`` (exact names, or prefixes ending in a dot)."""
    return any(name == c or (c.endswith(".") and name.startswith(c)) for c in claims)


def case_reason(result: CaseResult) -> str:
    """Why a case is not plain passed: its reason, else the messages of its failed gates."""
    if result.reason:
        return result.reason
    failed = [g.message for g in result.gates if g.passed is False and g.message]
    return "\n".join(failed)


def without_empty_columns(table: Table) -> Table:
    """``table`` less the columns whose every cell is empty (no text, no note)."""
    keep = [
        i
        for i in range(len(table.columns))
        if any(row[i].text or row[i].note for row in table.rows)
    ]
    if len(keep) == len(table.columns) or not table.rows:
        return table
    rows = tuple(tuple(row[i] for i in keep) for row in table.rows)
    return Table(tuple(table.columns[i] for i in keep), rows, table.css)
