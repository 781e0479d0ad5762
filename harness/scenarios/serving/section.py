"""Serving section: per ``serving`` case (a model under load), one row per point (concurrency or
request rate) with its requests, throughput, latency percentiles and goodput; then the failed
requests' reasons and the cases that did not pass.

Figures come from the case's metrics (``serving.<point>.<figure>``, what compare compares);
the points, their request counts and why a figure is missing come from its artifacts. A
percentile with too few values, and goodput from too few requests, say so instead of a number.
Reasons are the server's words: they stay raw here and the templates escape them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.types import CaseResult, RunRecord, Status, Unit
from harness.report.formatting import MISSING, Scale, choose_scale, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios.serving.record import PointRecord, ServingArtifacts
from harness.scenarios.streams.metrics import LATENCIES, PREFIX
from harness.scenarios.streams.stats import MIN_FINISHED, QUANTILES, needed_n

SCENARIO = "serving"
LABELS = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2e": "e2e"}


@dataclass(frozen=True)
class LoadCase:
    title: str  # "model · case"
    note: str  # engine, endpoint, how tokens were counted, the SLO
    points: Table
    errors: Table  # the commonest failure reasons per point


@dataclass(frozen=True)
class Load:
    cases: tuple[LoadCase, ...]
    not_passed: Table


def _points(result: CaseResult) -> tuple[PointRecord, ...]:
    return ServingArtifacts.of(result).points


def _value(result: CaseResult, key: str, suffix: str) -> float | None:
    found = result.metric(f"{PREFIX}.{key}.{suffix}")
    if found is None or not found.samples or not math.isfinite(found.samples[0]):
        return None
    return found.samples[0]


def _count(value: int | None) -> Cell:
    return Cell(MISSING) if value is None else Cell(str(value), sort=value)


def _point_cell(point: PointRecord) -> Cell:
    finished = point.finished
    note = None
    if finished < MIN_FINISHED:
        note = f"inconclusive: {finished} finished requests (needs {MIN_FINISHED})"
    elif point.hit_deadline:
        note = "stopped at max_seconds_per_point"
    return Cell(point.shown, sort=point.value, note=note)


def _latency_n(point: PointRecord, kind: str) -> int:
    spread = point.spread(kind)
    return spread.n or 0 if spread is not None else 0


def _latency_cell(result: CaseResult, point: PointRecord, kind: str, scale: Scale) -> Cell:
    """``p50 / p90 / p99`` in the column's unit; ``n/a`` where too few values."""
    n = _latency_n(point, kind)
    parts, missing = [], []
    for q in QUANTILES:
        value = _value(result, point.key, f"{kind}_p{q}_s")
        if value is None:
            parts.append("n/a")
            missing.append(f"p{q} needs n ≥ {needed_n(q)}")
        else:
            parts.append(scale.number(value))
    title = f"n={n}" + (f"; {', '.join(missing)}" if missing else "")
    p50 = _value(result, point.key, f"{kind}_p50_s")
    return Cell(" / ".join(parts), sort=p50, title=title)


def _rate_cell(value: float | None, unit: Unit) -> Cell:
    if value is None:
        return Cell(MISSING)
    scale = choose_scale(unit, [value])
    return Cell(scale.number(value), sort=value)


def _goodput_cell(result: CaseResult, point: PointRecord, slo: bool) -> Cell:
    if not slo:
        return Cell("no SLO", title="set slo: in the scenario's params for goodput")
    goodput = _value(result, point.key, "goodput_rps")
    share = _value(result, point.key, "slo_share")
    verdict = point.slo_verdict or ""
    if goodput is None:
        finished = point.finished
        return Cell(
            "inconclusive",
            title=f"{finished} finished requests; goodput needs {MIN_FINISHED}",
        )
    note = f"{share:.0%} within" if share is not None else None
    if verdict in ("met", "missed"):
        note = f"{note}; p90 SLO {verdict}" if note else f"p90 SLO {verdict}"
    return Cell(f"{goodput:.2f}", sort=goodput, note=note)


def _scales(result: CaseResult, points: Sequence[PointRecord]) -> dict[str, Scale]:
    """Each latency column's unit, chosen from its medians (a slow p99 does not turn 12 ms
    medians into 0.01 s)."""
    return {
        kind: choose_scale(Unit.SECONDS, [_value(result, p.key, f"{kind}_p50_s") for p in points])
        for kind, _ in LATENCIES
    }


def _points_table(result: CaseResult) -> Table:
    points = _points(result)
    slo = ServingArtifacts.of(result).slo is not None
    scales = _scales(result, points)
    columns = (
        Column("point", css="nowrap"),
        Column("sent", numeric=True),
        Column("done", numeric=True, title="requests completed"),
        Column("errors", numeric=True),
        Column("cut", numeric=True, title="in flight at the deadline: cancelled, not judged"),
        Column("req/s", numeric=True, title="completed requests / the point's duration"),
        Column("out tok/s", numeric=True, title="output tokens (tokenizer) / duration"),
        *(
            Column(
                f"{LABELS[kind]} p50/p90/p99 ({scales[kind].label})",
                numeric=True,
                title=description,
                css="nowrap",
            )
            for kind, description in LATENCIES
        ),
        Column("goodput (req/s)", numeric=True, title="completed requests/s within every SLO"),
    )
    rows = []
    for p in points:
        rows.append(
            (
                _point_cell(p),
                _count(p.sent),
                _count(p.completed),
                _count(p.errors),
                _count(p.cut),
                _rate_cell(_value(result, p.key, "request_rps"), Unit.REQUESTS_PER_SECOND),
                _rate_cell(_value(result, p.key, "output_tps"), Unit.TOKENS_PER_SECOND),
                *(_latency_cell(result, p, kind, scales[kind]) for kind, _ in LATENCIES),
                _goodput_cell(result, p, slo),
            )
        )
    return Table(columns, tuple(rows))


def _errors_table(result: CaseResult) -> Table:
    rows = []
    for p in _points(result):
        for reason, requests in p.error_kinds:
            rows.append((Cell(p.shown), Cell(str(requests), sort=requests), Cell(reason)))
    return Table((Column("point"), Column("requests", numeric=True), Column("reason")), tuple(rows))


def _note(result: CaseResult) -> str:
    found = ServingArtifacts.of(result)
    parts = [f"engine {found.engine or MISSING}", f"endpoint {found.endpoint or MISSING}"]
    if found.counted_by == "chunks":
        parts.append("tokens counted one a chunk (no local tokenizer)")
    else:
        parts.append("tokens counted by the model's tokenizer")
    if found.prompt_tokens_counted is not None:
        parts.append(f"prompt {found.prompt_tokens_counted} tokens")
    if found.slo is not None:
        limits = [
            f"{k.removesuffix('_s')} ≤ {v:g} s" for k, v in found.slo.items() if v is not None
        ]
        parts.append("SLO " + ", ".join(limits))
    return "; ".join(parts)


def _case_label(result: CaseResult) -> str:
    return f"{result.model} · {result.case_id.rsplit('::', 1)[-1]}"


def build(run: RunRecord) -> Load | None:
    results = [r for r in run.results if r.scenario == SCENARIO]
    if not results:
        return None
    cases = tuple(
        LoadCase(_case_label(r), _note(r), _points_table(r), _errors_table(r))
        for r in sorted(results, key=lambda r: (r.model, r.case_id))
        if _points(r)
    )
    failed = tuple(
        (
            Cell(r.model),
            Cell(r.case_id.rsplit("::", 1)[-1]),
            Cell(status_label(r.status), css=status_css(r.status)),
            Cell(r.reason or MISSING),
        )
        for r in results
        if r.status is not Status.PASSED
    )
    columns = (Column("model"), Column("case"), Column("status"), Column("why"))
    return Load(cases, Table(columns, failed))


SECTION = Section(
    "serving",
    "Serving",
    build,
    claims=(f"{PREFIX}.",),
    order=METRICS + 20,
    templates=Path(__file__).parent,
)
