"""Saturation section: per ``saturation`` case the knee (the highest load meeting the SLO) with
its bootstrap interval and why the search stopped, then each case's points (offered load,
what completed, the p90s with their intervals, the share of resamples meeting the SLO, and
why a point over-saturated the server), and a chart per search entry: TTFT p90 against the
offered load, one line per model, the SLO's threshold dotted (the knee curve).

Figures come from the case's typed artifacts (:class:`SaturationArtifacts`: what the points
measured) and its knee metrics (what compare compares). Reasons are ours; model names are
escaped by the templates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.types import CaseResult, RunRecord, Unit
from harness.report.chart_model import Chart, Line, xy_chart
from harness.report.chart_svg import Guide
from harness.report.formatting import MISSING, choose_scale, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios.saturation import PREFIX
from harness.scenarios.saturation.artifacts import Point, SaturationArtifacts

SCENARIO = "saturation"


@dataclass(frozen=True)
class KneeCase:
    title: str
    note: str
    points: Table


@dataclass(frozen=True)
class Knees:
    summary: Table
    cases: tuple[KneeCase, ...]
    charts: tuple[Chart, ...]


def _knee_cell(found: SaturationArtifacts) -> Cell:
    knee = found.knee
    if knee is None:
        return Cell(MISSING)
    if knee.value is None:
        return Cell("none", title="no point met the SLO")
    has_interval = knee.low is not None and knee.high is not None
    note = f"{knee.low:g}–{knee.high:g}" if has_interval else "no interval"
    if knee.at_ceiling:
        note += "; at the ceiling"
    shown = f"≥ {knee.value:g}" if knee.at_ceiling else f"{knee.value:g}"
    return Cell(shown, sort=knee.value, note=note)


def _summary(results: Sequence[tuple[CaseResult, SaturationArtifacts]]) -> Table:
    columns = (
        Column("model", css="nowrap"),
        Column("case"),
        Column("status"),
        Column("engine"),
        Column(
            "knee",
            numeric=True,
            title="the highest load meeting the SLO; under it the bootstrap interval",
        ),
        Column("load"),
        Column("SLO (p90)"),
        Column("points", numeric=True),
        Column("search stopped"),
    )
    rows = tuple(
        (
            Cell(r.model),
            Cell(r.case_id.rsplit("::", 1)[-1]),
            Cell(status_label(r.status), css=status_css(r.status)),
            Cell(found.engine or MISSING),
            _knee_cell(found),
            Cell(found.load_unit),
            Cell(found.slo_line() or MISSING),
            Cell(str(len(found.points)), sort=len(found.points)),
            Cell(found.stop_reason or r.reason or MISSING),
        )
        for r, found in results
    )
    return Table(columns, rows)


def _p90(point: Point, kind: str) -> Cell:
    value = point.p90(kind)
    if value is None:
        return Cell("n/a", title="fewer than 10 completed requests")
    scale = choose_scale(Unit.SECONDS, [value])
    interval = point.interval(kind)
    note = None
    if interval is not None:
        note = f"{scale.number(interval[0])}–{scale.number(interval[1])} {scale.label}"
    return Cell(f"{scale.number(value)} {scale.label}", sort=value, note=note)


def _verdict(point: Point) -> Cell:
    share = point.met_share
    note = f"{share:.0%} of resamples met it" if share is not None else None
    css = "st-passed" if point.good else "st-failed"
    return Cell(point.slo_verdict or MISSING, note=note, css=css)


def _shown(value: int | None) -> str:
    return MISSING if value is None else str(value)


def _points_table(found: SaturationArtifacts) -> Table:
    columns = (
        Column(f"load ({found.load_unit})", numeric=True),
        Column("order", numeric=True, title="when the search measured it (0: first)"),
        Column("sent", numeric=True),
        Column("done", numeric=True),
        Column("errors", numeric=True),
        Column("cut", numeric=True, title="in flight at the point's bound"),
        Column("TTFT p90", numeric=True, title="under it the bootstrap interval"),
        Column("TPOT p90", numeric=True),
        Column("e2e p90", numeric=True),
        Column("SLO"),
        Column("over-saturated"),
    )
    rows = []
    for p in found.points:
        rows.append(
            (
                Cell(f"{p.value:g}", sort=p.value),
                Cell(_shown(p.order), sort=p.order),
                Cell(_shown(p.sent)),
                Cell(_shown(p.completed)),
                Cell(_shown(p.errors)),
                Cell(_shown(p.cut)),
                _p90(p, "ttft"),
                _p90(p, "tpot"),
                _p90(p, "e2e"),
                _verdict(p),
                Cell(p.oversaturated or "no"),
            )
        )
    return Table(columns, tuple(rows))


def _note(found: SaturationArtifacts) -> str:
    parts = [f"engine {found.engine or MISSING}", f"endpoint {found.endpoint or MISSING}"]
    if found.prompt_tokens_counted is not None:
        parts.append(f"prompt {found.prompt_tokens_counted} tokens")
    parts.append(f"SLO {found.slo_line() or MISSING}")
    if found.finding is not None:
        parts.append(found.finding)
    return "; ".join(parts)


def _threshold(results: Sequence[SaturationArtifacts]) -> tuple[str, float | None]:
    """Which p90 the chart draws (TTFT when the SLO sets it, else e2e) and its threshold."""
    for kind in ("ttft", "e2e"):
        for found in results:
            limit = found.threshold(f"{kind}_p90_s")
            if limit is not None:
                return kind, limit
    return "ttft", None


def _charts(results: Sequence[tuple[CaseResult, SaturationArtifacts]]) -> tuple[Chart, ...]:
    entries: dict[str, list[tuple[CaseResult, SaturationArtifacts]]] = defaultdict(list)
    for r, found in results:
        entries[r.case_id.rsplit("::", 1)[-1]].append((r, found))
    charts = []
    for index, (entry, group) in enumerate(sorted(entries.items())):
        kind, limit = _threshold([found for _, found in group])
        lines = []
        xs: list[float] = []
        for r, found in group:
            points = []
            for p in found.points:
                y = p.p90(kind)
                if y is not None:
                    points.append((p.value, y))
            if points:
                lines.append(Line(r.model, tuple(sorted(points))))
                xs.extend(x for x, _ in points)
        if not lines:
            continue
        guides = (Guide((min(xs), max(xs)), (limit, limit)),) if limit is not None else ()
        label = "TTFT" if kind == "ttft" else "e2e"
        unit = group[0][1].load_unit
        charts.append(
            xy_chart(
                f"knee-{index}",
                f"The knee: {label} p90 against load ({entry})",
                f"{label} p90 at each load point the search measured, per model (lower is "
                "better); the dotted line is the SLO's threshold: the knee is the highest load "
                "below it before the first point above it.",
                lines,
                x_label="offered load" if unit == "req/s" else "concurrency",
                x_unit=unit,
                y_label=f"{label} p90",
                y_unit=Unit.SECONDS,
                log_x=max(xs) / max(min(xs), 1e-9) >= 8,
                dots=len(set(xs)) < 2,
                guides=guides,
            )
        )
    return tuple(c for c in charts if c.shows_something)


def build(run: RunRecord) -> Knees | None:
    results = [
        (r, SaturationArtifacts.of(r))
        for r in sorted(
            (r for r in run.results if r.scenario == SCENARIO), key=lambda r: (r.case_id, r.model)
        )
    ]
    if not results:
        return None
    measured = [(r, found) for r, found in results if found.points]
    cases = tuple(
        KneeCase(f"{r.model} · {r.case_id.rsplit('::', 1)[-1]}", _note(found), _points_table(found))
        for r, found in measured
    )
    return Knees(_summary(results), cases, _charts(measured))


SECTION = Section(
    "saturation",
    "Saturation knee",
    build,
    claims=(f"{PREFIX}.",),
    order=METRICS + 40,
    templates=Path(__file__).parent,
)
