"""Saturation section: per ``saturation`` case the knee (the highest load meeting the SLO) with
its bootstrap interval and why the search stopped, then each case's points (offered load,
what completed, the p90s with their intervals, the share of resamples meeting the SLO, and
why a point over-saturated the server), and a chart per search entry: TTFT p90 against the
offered load, one line per model, the SLO's threshold dotted (the knee curve).

Figures come from the case's artifacts (what the points measured) and its knee metrics (what
compare compares). Reasons are ours; model names are escaped by the templates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.types import CaseResult, RunRecord, Unit
from harness.report.chart_model import Chart, Line, xy_chart
from harness.report.chart_svg import Guide
from harness.report.formatting import MISSING, choose_scale, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios.saturation import PREFIX

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


def _points(result: CaseResult) -> list[Mapping[str, Any]]:
    points = result.artifacts.get("points")
    if not isinstance(points, list):
        return []
    return [p for p in points if isinstance(p, Mapping) and isinstance(p.get("value"), int | float)]


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _unit(result: CaseResult) -> str:
    return "req/s" if result.artifacts.get("loop", "rate") == "rate" else "concurrent"


def _knee_cell(result: CaseResult) -> Cell:
    found = result.artifacts.get("knee")
    if not isinstance(found, Mapping):
        return Cell(MISSING)
    value, low, high = _num(found.get("value")), _num(found.get("low")), _num(found.get("high"))
    if value is None:
        return Cell("none", title="no point met the SLO")
    note = f"{low:g}–{high:g}" if low is not None and high is not None else "no interval"
    if found.get("at_ceiling"):
        note += "; at the ceiling"
    return Cell(f"≥ {value:g}" if found.get("at_ceiling") else f"{value:g}", sort=value, note=note)


def _slo(result: CaseResult) -> str:
    slo = result.artifacts.get("slo")
    if not isinstance(slo, Mapping):
        return MISSING
    return ", ".join(
        f"{k.removesuffix('_s')} ≤ {v:g} s" for k, v in slo.items() if isinstance(v, int | float)
    )


def _summary(results: Sequence[CaseResult]) -> Table:
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
            Cell(str(r.artifacts.get("engine", MISSING))),
            _knee_cell(r),
            Cell(_unit(r)),
            Cell(_slo(r)),
            Cell(str(len(_points(r))), sort=len(_points(r))),
            Cell(str(r.artifacts.get("stop_reason") or r.reason or MISSING)),
        )
        for r in results
    )
    return Table(columns, rows)


def _p90(point: Mapping[str, Any], kind: str) -> Cell:
    spread = point.get(f"{kind}_s")
    value = _num(spread.get("p90")) if isinstance(spread, Mapping) else None
    if value is None:
        return Cell("n/a", title="fewer than 10 completed requests")
    scale = choose_scale(Unit.SECONDS, [value])
    intervals = point.get("p90_interval_s")
    interval = intervals.get(kind) if isinstance(intervals, Mapping) else None
    note = None
    if isinstance(interval, list) and len(interval) == 2:
        note = f"{scale.number(interval[0])}–{scale.number(interval[1])} {scale.label}"
    return Cell(f"{scale.number(value)} {scale.label}", sort=value, note=note)


def _verdict(point: Mapping[str, Any]) -> Cell:
    verdict = str(point.get("slo_verdict", MISSING))
    share = _num(point.get("met_share"))
    note = f"{share:.0%} of resamples met it" if share is not None else None
    css = "st-passed" if point.get("good") else "st-failed"
    return Cell(verdict, note=note, css=css)


def _points_table(result: CaseResult) -> Table:
    unit = _unit(result)
    columns = (
        Column(f"load ({unit})", numeric=True),
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
    for p in _points(result):
        rows.append(
            (
                Cell(f"{p['value']:g}", sort=p["value"]),
                Cell(str(p.get("order", MISSING)), sort=_num(p.get("order"))),
                Cell(str(p.get("sent", MISSING))),
                Cell(str(p.get("completed", MISSING))),
                Cell(str(p.get("errors", MISSING))),
                Cell(str(p.get("cut", MISSING))),
                _p90(p, "ttft"),
                _p90(p, "tpot"),
                _p90(p, "e2e"),
                _verdict(p),
                Cell(str(p.get("oversaturated") or "no")),
            )
        )
    return Table(columns, tuple(rows))


def _note(result: CaseResult) -> str:
    a = result.artifacts
    parts = [f"engine {a.get('engine', MISSING)}", f"endpoint {a.get('endpoint', MISSING)}"]
    if isinstance(a.get("prompt_tokens_counted"), int):
        parts.append(f"prompt {a['prompt_tokens_counted']} tokens")
    parts.append(f"SLO {_slo(result)}")
    if isinstance(a.get("finding"), str):
        parts.append(a["finding"])
    return "; ".join(parts)


def _threshold(results: Sequence[CaseResult]) -> tuple[str, float | None]:
    """Which p90 the chart draws (TTFT when the SLO sets it, else e2e) and its threshold."""
    for r in results:
        slo = r.artifacts.get("slo")
        if isinstance(slo, Mapping) and _num(slo.get("ttft_p90_s")) is not None:
            return "ttft", _num(slo.get("ttft_p90_s"))
    for r in results:
        slo = r.artifacts.get("slo")
        if isinstance(slo, Mapping) and _num(slo.get("e2e_p90_s")) is not None:
            return "e2e", _num(slo.get("e2e_p90_s"))
    return "ttft", None


def _charts(results: Sequence[CaseResult]) -> tuple[Chart, ...]:
    entries: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        entries[r.case_id.rsplit("::", 1)[-1]].append(r)
    charts = []
    for index, (entry, group) in enumerate(sorted(entries.items())):
        kind, limit = _threshold(group)
        lines = []
        xs: list[float] = []
        for r in group:
            points = []
            for p in _points(r):
                spread = p.get(f"{kind}_s")
                y = _num(spread.get("p90")) if isinstance(spread, Mapping) else None
                if y is not None:
                    points.append((float(p["value"]), y))
            if points:
                lines.append(Line(r.model, tuple(sorted(points))))
                xs.extend(x for x, _ in points)
        if not lines:
            continue
        guides = (Guide((min(xs), max(xs)), (limit, limit)),) if limit is not None else ()
        label = "TTFT" if kind == "ttft" else "e2e"
        unit = _unit(group[0])
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
    results = sorted(
        (r for r in run.results if r.scenario == SCENARIO), key=lambda r: (r.case_id, r.model)
    )
    if not results:
        return None
    cases = tuple(
        KneeCase(f"{r.model} · {r.case_id.rsplit('::', 1)[-1]}", _note(r), _points_table(r))
        for r in results
        if _points(r)
    )
    return Knees(_summary(results), cases, _charts([r for r in results if _points(r)]))


SECTION = Section(
    "saturation", "Saturation knee", build, claims=(f"{PREFIX}.",), order=METRICS + 40
)
