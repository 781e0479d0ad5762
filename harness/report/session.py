"""Agent sessions section: one summary row per case, then per case its turns (prompt, what a
cache of the previous turn could serve, what was served, TTFT with and without the cache, the
checks) and a chart of TTFT per turn, so a cache that stops paying at turn 4 shows as a line
that climbs."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.types import CaseResult, RunRecord, Unit
from harness.report.chart_model import Chart, Line, xy_chart
from harness.report.formatting import MISSING, Scale, choose_scale, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, metric_cell, stats
from harness.scenarios import session as sc

PREFIX = "session."


@dataclass(frozen=True)
class SessionCase:
    model: str
    case_id: str
    status: str
    engine: str
    notes: tuple[str, ...]  # findings and what was not checked, one line each (untrusted)
    table: Table
    chart: Chart | None


@dataclass(frozen=True)
class Sessions:
    summary: Table
    cases: tuple[SessionCase, ...]


def _median(values: Any) -> float | None:
    found = [v for v in values or () if isinstance(v, int | float) and v == v]
    return statistics.median(found) if found else None


def _rows(result: CaseResult) -> list[Mapping[str, Any]]:
    sessions = result.artifacts.get("turns")
    if not isinstance(sessions, list) or not sessions or not isinstance(sessions[0], list):
        return []
    return [row for row in sessions[0] if isinstance(row, Mapping)]


def _number(value: Any) -> Cell:
    return Cell(str(value), sort=value) if isinstance(value, int) else Cell(MISSING)


def _same(row: Mapping[str, Any]) -> Cell:
    identical = row.get("identical")
    if identical is True:
        return Cell("✅ same", title="the same greedy answer without the cache")
    if identical is False:
        return Cell("❌ differs", css="st-failed", title=str(row.get("differs_at") or ""))
    return Cell("not checked", css="dim", title="the engine cannot skip its cache for a request")


def _note(row: Mapping[str, Any]) -> Cell:
    parts = []
    if row.get("missed"):
        parts.append("cache miss" + (f": {row['miss_reason']}" if row.get("miss_reason") else ""))
    if row.get("history_rewritten_at"):
        parts.append(f"history rewritten at {row['history_rewritten_at']}")
    if row.get("cache_fault"):
        parts.append(f"cache fault: {row['cache_fault']}")
    return Cell("; ".join(str(p) for p in parts), css="st-failed" if row.get("missed") else None)


def _turn_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    seconds = choose_scale(
        Unit.SECONDS,
        [_median(r.get("ttft_s")) for r in rows] + [_median(r.get("cold_ttft_s")) for r in rows],
    )
    rate = choose_scale(Unit.TOKENS_PER_SECOND, [_median(r.get("prefill_tps")) for r in rows])
    columns = (
        Column("turn", numeric=True),
        Column("answers", title="what the turn answers: a user message or a tool result"),
        Column("prompt", numeric=True, title="prompt tokens"),
        Column("reusable", numeric=True, title="tokens a cache of the previous turn could serve"),
        Column("reused", numeric=True, title="tokens the engine took from its cache"),
        Column("new", numeric=True, title="prompt tokens processed for this turn"),
        Column(f"TTFT ({seconds.label})", numeric=True, title="median over the replays"),
        Column(f"TTFT no cache ({seconds.label})", numeric=True, title="the same prompt cold"),
        Column(f"prefill ({rate.label})", numeric=True, title="new tokens / TTFT"),
        Column("answer", title="greedy answer with the cache = without it"),
        Column("finding"),
    )
    body = tuple(
        (
            _number(row.get("turn")),
            Cell(str(row.get("kind", ""))),
            _number(row.get("prompt_tokens")),
            _number(row.get("reusable_tokens")),
            _number(row.get("reused_tokens")),
            _number(row.get("new_tokens")),
            _scaled(_median(row.get("ttft_s")), seconds),
            _scaled(_median(row.get("cold_ttft_s")), seconds),
            _scaled(_median(row.get("prefill_tps")), rate),
            _same(row),
            _note(row),
        )
        for row in rows
    )
    return Table(columns, body)


def _scaled(value: float | None, scale: Scale) -> Cell:
    return Cell(MISSING) if value is None else Cell(scale.number(value), sort=value)


def _chart(result: CaseResult, rows: Sequence[Mapping[str, Any]], key: str) -> Chart | None:
    lines = []
    for label, field, dashed in (
        ("with the cache", "ttft_s", False),
        ("without the cache", "cold_ttft_s", True),
    ):
        points = tuple(
            (float(row["turn"]), value)
            for row in rows
            if isinstance(row.get("turn"), int) and (value := _median(row.get(field))) is not None
        )
        if points:
            lines.append(Line(label, points, dashed=dashed))
    if not lines:
        return None
    return xy_chart(
        key,
        f"TTFT per turn: {result.model}",
        "Median time to first token of each turn over the replays; the dashed line is the same "
        "prompt answered from an empty cache.",
        lines,
        x_label="turn",
        x_unit="",
        y_label="TTFT",
        y_unit=Unit.SECONDS,
        ticks_at_data=True,
        log_y_allowed=False,
    )


def _notes(result: CaseResult, rows: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    notes = list(result.reason.split("\n")) if result.reason else []
    reference = result.artifacts.get("reference")
    if rows and all(row.get("identical") is None for row in rows):
        why = reference if isinstance(reference, str) else "no cache-less answer to compare"
        notes.append(f"answers with and without the cache not compared ({why})")
    elif isinstance(reference, str):
        notes.append(f"answers without the cache from {reference}")
    rewritten = [row for row in rows if row.get("history_rewritten_at")]
    if rewritten:
        first = rewritten[0]
        notes.append(
            f"the chat template rendered the history differently in {len(rewritten)} "
            f"turn{'s' if len(rewritten) > 1 else ''} "
            f"(first turn {first.get('turn')}, {first.get('history_rewritten_at')}): no prefix "
            "cache can reuse past that token"
        )
    return tuple(notes)


SUMMARY = (
    ("reuse", sc.REUSE),
    ("cached share", sc.CACHED),
    ("TTFT", sc.TTFT),
    ("TTFT no cache", sc.COLD_TTFT),
    ("cache speed-up", sc.SPEEDUP),
    ("prefill", sc.PREFILL),
    ("decode", sc.DECODE),
)


def build(run: RunRecord) -> Sessions | None:
    results = [r for r in run.results if r.scenario == sc.SCENARIO.name]
    if not results:
        return None
    scales = {
        spec.name: choose_scale(
            spec.unit, [stats(m).median for r in results if (m := r.metric(spec.name))]
        )
        for _, spec in SUMMARY
    }
    header = [Column("model", css="nowrap"), Column("case"), Column("status")]
    for label, spec in SUMMARY:
        unit = scales[spec.name].label
        header.append(
            Column(f"{label} ({unit})" if unit else label, numeric=True, title=spec.description)
        )
    summary = []
    cases = []
    for index, result in enumerate(results):
        rows = _rows(result)
        summary.append(
            (
                Cell(result.model),
                Cell(result.case_id.rsplit("::", 1)[-1]),
                Cell(status_label(result.status), css=status_css(result.status)),
                *(metric_cell(result.metric(s.name), scales[s.name]) for _, s in SUMMARY),
            )
        )
        cases.append(
            SessionCase(
                result.model,
                result.case_id,
                status_label(result.status),
                str(result.artifacts.get("engine", "")),
                _notes(result, rows),
                _turn_table(rows),
                _chart(result, rows, f"session-{index}"),
            )
        )
    return Sessions(Table(tuple(header), tuple(summary)), tuple(cases))


SECTION = Section("session", "Agent sessions", build, claims=(PREFIX,), order=METRICS + 150)
