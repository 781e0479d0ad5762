"""Prompt-cache section: per model and shape, cold vs warm TTFT, speedup, efficiency,
reuse accounting, cache types and whether warm output equalled cold output."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.types import RunRecord, Status
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, MetricColumn, Table, case_metric_table, find_metric
from harness.scenarios import prompt_cache as pc

PREFIX = "prompt_cache."

COLUMNS: tuple[MetricColumn, ...] = (
    MetricColumn("TTFT cold", (pc.COLD.name,), "time to first token, empty cache"),
    MetricColumn("TTFT warm", (pc.WARM.name,), "time to first token on the hit"),
    MetricColumn("speedup", (pc.SPEEDUP.name,), "cold TTFT / warm TTFT"),
    MetricColumn("ideal", (pc.IDEAL.name,), "tokens cold / tokens warm"),
    MetricColumn("efficiency", (pc.EFFICIENCY.name,), "speedup / ideal"),
    MetricColumn("reused", (pc.REUSED.name,), "prompt tokens from the cache"),
    MetricColumn("recomputed", (pc.RECOMPUTED.name,), "prompt tokens processed"),
    MetricColumn("cache", (pc.CACHE_BYTES.name,), "bytes of the reusable cache"),
    MetricColumn("save", (pc.SAVE.name,), "save the cache to a file"),
    MetricColumn("load", (pc.LOAD.name,), "load the cache from a file"),
)


@dataclass(frozen=True)
class PromptCache:
    table: Table
    not_reusable: Table


def _equivalence(status: Status, equivalent: bool | None) -> Cell:
    if equivalent is True:
        return Cell("✅ identical", sort=1)
    if status is Status.FAILED:
        return Cell("❌ differs", sort=0, css="st-failed")
    return Cell("—")


def build(run: RunRecord) -> PromptCache | None:
    results = [r for r in run.results if r.scenario == "prompt_cache"]
    measured = [r for r in results if any(find_metric(r, c.names) for c in COLUMNS)]
    table = case_metric_table(measured, COLUMNS, sample_count=False)
    if table:
        extra = (Column("cache types"), Column("warm = cold"))
        found = [pc.PromptCacheArtifacts.of(r) for r in measured]
        rows = tuple(
            (
                *row,
                Cell(", ".join(a.cache_types) or "—"),
                _equivalence(r.status, a.equivalent),
            )
            for row, r, a in zip(table.rows, measured, found, strict=True)
        )
        table = Table(table.columns + extra, rows, table.css)
    skipped = tuple(
        (Cell(r.model), Cell(r.case_id.rsplit("::", 1)[1]), Cell(r.reason or "—"))
        for r in results
        if r.status is Status.SKIPPED
    )
    not_reusable = Table((Column("model"), Column("case"), Column("why")), skipped)
    if not table and not not_reusable:
        return None
    return PromptCache(table, not_reusable)


SECTION = Section(
    "prompt_cache",
    "Prompt cache",
    build,
    claims=(PREFIX,),
    order=METRICS + 120,
    templates=Path(__file__).parent,
)
