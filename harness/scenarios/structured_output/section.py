"""Structured output section: one table per engine (in process through the constraint's
library, mlx_lm.server, llama-server, ...), one row per model: the constrained requests and
how many were JSON, conformed to their schema and had the reference's values, what the server
did with ``response_format`` (honoured, rejected, ignored; HTTP only), and the constraint's
cost (decode tok/s with and without it, their ratio, time to first token)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.types import CaseResult, RunRecord
from harness.report.formatting import Scale, choose_scale, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, metric_cell, stats
from harness.scenarios import structured_output as so
from harness.scenarios.structured_output import metrics as sm
from harness.scenarios.structured_output.verdicts import Honour, Verdict

PREFIX = "structured_output."
SPEED = (sm.DECODE, sm.FREE_DECODE, sm.COST, sm.TTFT)
SPEED_LABELS = ("decode", "unconstrained", "cost", "TTFT")


@dataclass(frozen=True)
class EngineTable:
    engine: str
    table: Table


@dataclass(frozen=True)
class StructuredOutput:
    engines: tuple[EngineTable, ...]


def _verdicts(result: CaseResult) -> Mapping[str, int]:
    return so.StructuredOutputArtifacts.of(result).verdicts or {}


def _honour(result: CaseResult) -> Mapping[str, int]:
    return so.StructuredOutputArtifacts.of(result).honour or {}


def _share(count: int, total: int, *, bad: bool = False) -> Cell:
    """``count/total``; ``bad``: a count that should be 0 and is not, marked."""
    if total <= 0:
        return Cell("")
    css = "st-failed" if (bad and count) or (not bad and count < total) else None
    return Cell(f"{count}/{total}", sort=count / total, css=css)


def _row(result: CaseResult, served: bool, scales: Sequence[Scale]) -> tuple[Cell, ...]:
    verdicts = _verdicts(result)
    judged = sum(verdicts.values())
    parsed = sum(verdicts.get(v.value, 0) for v in Verdict if v.parsed)
    conforms = sum(verdicts.get(v.value, 0) for v in Verdict if v.conforms)
    requests = so.StructuredOutputArtifacts.of(result).requests
    total = requests if requests is not None else judged
    cells = [
        Cell(result.model),
        Cell(status_label(result.status), css=status_css(result.status)),
        Cell(str(total), sort=total),
        _share(parsed, judged),
        _share(conforms, judged),
        _share(verdicts.get(Verdict.CORRECT.value, 0), judged),
        _share(verdicts.get(Verdict.TRUNCATED.value, 0), judged, bad=True),
    ]
    if served:
        honour = _honour(result)
        cells += [
            _share(honour.get(Honour.HONOURED.value, 0), total),
            _share(honour.get(Honour.REJECTED.value, 0), total, bad=True),
            _share(honour.get(Honour.IGNORED.value, 0), total, bad=True),
        ]
    for spec, scale in zip(SPEED, scales, strict=True):
        cells.append(metric_cell(result.metric(spec.name), scale))
    return tuple(cells)


def _engine_table(rows: Sequence[CaseResult], served: bool) -> Table:
    scales: list[Scale] = []
    for spec in SPEED:
        found = [m for m in (r.metric(spec.name) for r in rows) if m is not None]
        scales.append(choose_scale(spec.unit, [stats(m).median for m in found]))
    header = [
        Column("model", css="nowrap"),
        Column("status"),
        Column("requests", numeric=True, title="constrained requests in the measured runs"),
        Column("parsed", numeric=True, title="answers that are JSON"),
        Column("conforms", numeric=True, title="answers that conform to their JSON Schema"),
        Column("correct", numeric=True, title="answers whose fields have the reference's values"),
        Column("truncated", numeric=True, title="answers cut by max_tokens before the JSON closed"),
    ]
    if served:
        header += [
            Column("honoured", numeric=True, title="response_format applied"),
            Column("rejected", numeric=True, title="response_format refused with a 4xx"),
            Column("ignored", numeric=True, title="response_format silently not applied"),
        ]
    for spec, label, scale in zip(SPEED, SPEED_LABELS, scales, strict=True):
        shown = f"{label} ({scale.label})" if scale.label else label
        header.append(Column(shown, numeric=True, title=spec.description))
    return Table(tuple(header), tuple(_row(r, served, scales) for r in rows))


def build(run: RunRecord) -> StructuredOutput | None:
    rows = [r for r in run.results if r.scenario == so.SCENARIO.name]
    if not rows:
        return None
    by_engine: dict[str, list[CaseResult]] = {}
    for result in rows:
        engine = so.StructuredOutputArtifacts.of(result).engine
        by_engine.setdefault(engine or "?", []).append(result)
    tables = []
    for engine, results in sorted(by_engine.items()):
        served = any(_honour(r) for r in results)
        ordered = sorted(results, key=lambda r: r.model)
        tables.append(EngineTable(engine, _engine_table(ordered, served)))
    return StructuredOutput(tuple(tables))


SECTION = Section(
    "structured_output",
    "Structured output",
    build,
    claims=(PREFIX,),
    order=METRICS + 180,
    templates=Path(__file__).parent,
)
