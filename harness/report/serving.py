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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.types import CaseResult, RunRecord, Status, Unit
from harness.report.formatting import MISSING, Scale, choose_scale, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios.serving.metrics import LATENCIES, PREFIX
from harness.scenarios.serving.stats import MIN_FINISHED, QUANTILES, needed_n

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


def _points(result: CaseResult) -> list[Mapping[str, Any]]:
    points = result.artifacts.get("points")
    if not isinstance(points, list):
        return []
    return [p for p in points if isinstance(p, Mapping) and isinstance(p.get("key"), str)]


def _value(result: CaseResult, key: str, suffix: str) -> float | None:
    found = result.metric(f"{PREFIX}.{key}.{suffix}")
    if found is None or not found.samples or not math.isfinite(found.samples[0]):
        return None
    return found.samples[0]


def _int(point: Mapping[str, Any], key: str) -> int:
    value = point.get(key)
    return value if isinstance(value, int) else 0


def _count(point: Mapping[str, Any], key: str) -> Cell:
    value = point.get(key)
    return Cell(str(value), sort=value) if isinstance(value, int) else Cell(MISSING)


def _point_cell(point: Mapping[str, Any]) -> Cell:
    finished = _int(point, "completed") + _int(point, "errors")
    note = None
    if finished < MIN_FINISHED:
        note = f"inconclusive: {finished} finished requests (needs {MIN_FINISHED})"
    elif point.get("hit_deadline"):
        note = "stopped at max_seconds_per_point"
    value = point.get("value")
    return Cell(
        str(point.get("label", point["key"])),
        sort=value if isinstance(value, (int, float)) else None,
        note=note,
    )


def _latency_n(point: Mapping[str, Any], kind: str) -> int:
    spread = point.get(f"{kind}_s")
    n = spread.get("n") if isinstance(spread, Mapping) else None
    return n if isinstance(n, int) else 0


def _latency_cell(result: CaseResult, point: Mapping[str, Any], kind: str, scale: Scale) -> Cell:
    """``p50 / p90 / p99`` in the column's unit; ``n/a`` where too few values."""
    n = _latency_n(point, kind)
    parts, missing = [], []
    for q in QUANTILES:
        value = _value(result, point["key"], f"{kind}_p{q}_s")
        if value is None:
            parts.append("n/a")
            missing.append(f"p{q} needs n ≥ {needed_n(q)}")
        else:
            parts.append(scale.number(value))
    title = f"n={n}" + (f"; {', '.join(missing)}" if missing else "")
    p50 = _value(result, point["key"], f"{kind}_p50_s")
    return Cell(" / ".join(parts), sort=p50, title=title)


def _rate_cell(value: float | None, unit: Unit) -> Cell:
    if value is None:
        return Cell(MISSING)
    scale = choose_scale(unit, [value])
    return Cell(scale.number(value), sort=value)


def _goodput_cell(result: CaseResult, point: Mapping[str, Any], slo: bool) -> Cell:
    if not slo:
        return Cell("no SLO", title="set slo: in the scenario's params for goodput")
    goodput = _value(result, point["key"], "goodput_rps")
    share = _value(result, point["key"], "slo_share")
    verdict = str(point.get("slo_verdict", ""))
    if goodput is None:
        finished = _int(point, "completed") + _int(point, "errors")
        return Cell(
            "inconclusive",
            title=f"{finished} finished requests; goodput needs {MIN_FINISHED}",
        )
    note = f"{share:.0%} within" if share is not None else None
    if verdict in ("met", "missed"):
        note = f"{note}; p90 SLO {verdict}" if note else f"p90 SLO {verdict}"
    return Cell(f"{goodput:.2f}", sort=goodput, note=note)


def _scales(result: CaseResult, points: Sequence[Mapping[str, Any]]) -> dict[str, Scale]:
    """Each latency column's unit, chosen from its medians (a slow p99 does not turn 12 ms
    medians into 0.01 s)."""
    return {
        kind: choose_scale(
            Unit.SECONDS, [_value(result, p["key"], f"{kind}_p50_s") for p in points]
        )
        for kind, _ in LATENCIES
    }


def _points_table(result: CaseResult) -> Table:
    points = _points(result)
    slo = isinstance(result.artifacts.get("slo"), Mapping)
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
                _count(p, "sent"),
                _count(p, "completed"),
                _count(p, "errors"),
                _count(p, "cut"),
                _rate_cell(_value(result, p["key"], "request_rps"), Unit.REQUESTS_PER_SECOND),
                _rate_cell(_value(result, p["key"], "output_tps"), Unit.TOKENS_PER_SECOND),
                *(_latency_cell(result, p, kind, scales[kind]) for kind, _ in LATENCIES),
                _goodput_cell(result, p, slo),
            )
        )
    return Table(columns, tuple(rows))


def _errors_table(result: CaseResult) -> Table:
    rows = []
    for p in _points(result):
        kinds = p.get("error_kinds")
        for kind in kinds if isinstance(kinds, list) else []:
            if isinstance(kind, list) and len(kind) == 2 and isinstance(kind[1], int):
                rows.append(
                    (
                        Cell(str(p.get("label", p["key"]))),
                        Cell(str(kind[1]), sort=kind[1]),
                        Cell(str(kind[0])),
                    )
                )
    return Table((Column("point"), Column("requests", numeric=True), Column("reason")), tuple(rows))


def _note(result: CaseResult) -> str:
    a = result.artifacts
    parts = [f"engine {a.get('engine', MISSING)}", f"endpoint {a.get('endpoint', MISSING)}"]
    if a.get("counted_by") == "chunks":
        parts.append("tokens counted one a chunk (no local tokenizer)")
    else:
        parts.append("tokens counted by the model's tokenizer")
    if isinstance(a.get("prompt_tokens_counted"), int):
        parts.append(f"prompt {a['prompt_tokens_counted']} tokens")
    slo = a.get("slo")
    if isinstance(slo, Mapping):
        limits = [
            f"{k.removesuffix('_s')} ≤ {v:g} s"
            for k, v in slo.items()
            if isinstance(v, (int, float))
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


SECTION = Section("serving", "Serving", build, claims=(f"{PREFIX}.",), order=METRICS + 20)
