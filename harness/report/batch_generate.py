"""Batched generation section: one table per ``batch_generate`` case (a model), a row per batch
size: prefill tok/s of the batch, decode tok/s in total and per request (end-to-end time is in
the record), and whether every request's batched greedy answer was its prompt's answer alone."""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.types import CaseResult, RunRecord, Status
from harness.report.formatting import MISSING, choose_scale, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, metric_cell, stats
from harness.scenarios import batch_generate as scenario
from harness.scenarios.prompt_dependence import PROMPT_INDEPENDENT


@dataclass(frozen=True)
class CaseTable:
    model: str
    case: str
    status: str
    table: Table


@dataclass(frozen=True)
class BatchGenerate:
    cases: tuple[CaseTable, ...]


def batch_sizes(result: CaseResult) -> list[int]:
    """The batch sizes a case measured or was asked for (artifacts first, then params)."""
    measured = scenario.BatchGenerateArtifacts.of(result).batch_sizes
    if measured:
        return list(measured)
    asked = result.params.get("batch_sizes")
    if not isinstance(asked, list | tuple):
        return []
    return [s for s in asked if isinstance(s, int) and not isinstance(s, bool)]


def _same(result: CaseResult, size: int) -> Cell:
    found = scenario.BatchGenerateArtifacts.of(result)
    same = found.same(size)
    if same is None:
        return Cell(MISSING)
    if not same:
        return Cell("❌ no", css="st-failed", title=str(found.first_mismatch))
    if found.prompt_dependence == "blind":
        return Cell("not judged", css="dim", title=PROMPT_INDEPENDENT)
    return Cell("✅ yes")


def _table(result: CaseResult) -> Table:
    sizes = batch_sizes(result)

    def medians(figure: scenario.Figure) -> list[float]:
        found = (result.metric(figure.name(size)) for size in sizes)
        return [stats(m).median for m in found if m is not None]

    decode_values = medians(scenario.DECODE) + medians(scenario.PER_REQUEST)
    tps = choose_scale(scenario.DECODE.unit, decode_values + medians(scenario.PREFILL))
    columns = (
        Column("batch size", numeric=True),
        Column(f"prefill ({tps.label})", numeric=True, title=scenario.PREFILL.description),
        Column(f"decode, total ({tps.label})", numeric=True, title=scenario.DECODE.description),
        Column(
            f"decode, per request ({tps.label})",
            numeric=True,
            title=scenario.PER_REQUEST.description,
        ),
        Column("identical answers", title="every batched greedy answer = its prompt's alone"),
    )
    rows = tuple(
        (
            Cell(str(size), sort=size),
            metric_cell(result.metric(scenario.PREFILL.name(size)), tps),
            metric_cell(result.metric(scenario.DECODE.name(size)), tps),
            metric_cell(result.metric(scenario.PER_REQUEST.name(size)), tps),
            _same(result, size),
        )
        for size in sizes
    )
    return Table(columns, rows)


def build(run: RunRecord) -> BatchGenerate | None:
    results = [r for r in run.results if r.scenario == scenario.SCENARIO.name]
    if not results:
        return None
    cases = tuple(
        CaseTable(
            r.model,
            r.case_id.rsplit("::", 1)[-1],
            status_label(r.status) if r.status is not Status.PASSED else "",
            _table(r),
        )
        for r in sorted(results, key=lambda r: (r.model, r.case_id))
    )
    return BatchGenerate(cases)


SECTION = Section(
    "batch_generate",
    "Batched generation",
    build,
    claims=(f"{scenario.PREFIX}.",),
    order=METRICS + 80,
)
