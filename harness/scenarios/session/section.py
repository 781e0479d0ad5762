"""Agent sessions section: one summary row per case, then per case its turns (prompt, what a
cache of the previous turn could serve, what was served, TTFT with and without the cache, the
checks) and a chart of TTFT per turn, so a cache that stops paying at turn 4 shows as a line
that climbs."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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


def _median(values: tuple[float | None, ...]) -> float | None:
    found = [v for v in values if v is not None and v == v]
    return statistics.median(found) if found else None


def _rows(found: sc.SessionArtifacts) -> tuple[sc.TurnRow, ...]:
    return found.turns[0] if found.turns else ()


def _number(value: int | None) -> Cell:
    return Cell(MISSING) if value is None else Cell(str(value), sort=value)


def _same(row: sc.TurnRow) -> Cell:
    if row.identical is True:
        return Cell("✅ same", title="the same greedy answer without the cache")
    if row.identical is False:
        return Cell("❌ differs", css="st-failed", title=row.differs_at or "")
    return Cell("not checked", css="dim", title="the engine cannot skip its cache for a request")


def _note(row: sc.TurnRow) -> Cell:
    parts = []
    if row.missed:
        parts.append("cache miss" + (f": {row.miss_reason}" if row.miss_reason else ""))
    if row.history_rewritten_at:
        parts.append(f"history rewritten at {row.history_rewritten_at}")
    if row.cache_fault:
        parts.append(f"cache fault: {row.cache_fault}")
    return Cell("; ".join(parts), css="st-failed" if row.missed else None)


def _turn_table(rows: Sequence[sc.TurnRow]) -> Table:
    seconds = choose_scale(
        Unit.SECONDS,
        [_median(r.ttft_s) for r in rows] + [_median(r.cold_ttft_s) for r in rows],
    )
    rate = choose_scale(Unit.TOKENS_PER_SECOND, [_median(r.prefill_tps) for r in rows])
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
            _number(row.turn),
            Cell(row.kind),
            _number(row.prompt_tokens),
            _number(row.reusable_tokens),
            _number(row.reused_tokens),
            _number(row.new_tokens),
            _scaled(_median(row.ttft_s), seconds),
            _scaled(_median(row.cold_ttft_s), seconds),
            _scaled(_median(row.prefill_tps), rate),
            _same(row),
            _note(row),
        )
        for row in rows
    )
    return Table(columns, body)


def _scaled(value: float | None, scale: Scale) -> Cell:
    return Cell(MISSING) if value is None else Cell(scale.number(value), sort=value)


def _chart(result: CaseResult, rows: Sequence[sc.TurnRow], key: str) -> Chart | None:
    lines = []
    for label, times, dashed in (
        ("with the cache", lambda row: row.ttft_s, False),
        ("without the cache", lambda row: row.cold_ttft_s, True),
    ):
        points = tuple(
            (float(row.turn), value)
            for row in rows
            if row.turn is not None and (value := _median(times(row))) is not None
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


def _notes(
    result: CaseResult, found: sc.SessionArtifacts, rows: Sequence[sc.TurnRow]
) -> tuple[str, ...]:
    notes = list(result.reason.split("\n")) if result.reason else []
    reference = found.reference
    if rows and all(row.identical is None for row in rows):
        why = reference or "no cache-less answer to compare"
        notes.append(f"answers with and without the cache not compared ({why})")
    elif reference is not None:
        notes.append(f"answers without the cache from {reference}")
    rewritten = [row for row in rows if row.history_rewritten_at]
    if rewritten:
        first = rewritten[0]
        notes.append(
            f"the chat template rendered the history differently in {len(rewritten)} "
            f"turn{'s' if len(rewritten) > 1 else ''} "
            f"(first turn {first.turn}, {first.history_rewritten_at}): no prefix "
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
        found = sc.SessionArtifacts.of(result)
        rows = _rows(found)
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
                found.engine or "",
                _notes(result, found, rows),
                _turn_table(rows),
                _chart(result, rows, f"session-{index}"),
            )
        )
    return Sessions(Table(tuple(header), tuple(summary)), tuple(cases))


SECTION = Section(
    "session",
    "Agent sessions",
    build,
    claims=(PREFIX,),
    order=METRICS + 150,
    templates=Path(__file__).parent,
)
