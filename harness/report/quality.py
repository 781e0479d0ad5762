"""Quality next to speed: perplexity per text item, and agreement and KL divergence against
the reference model a case names (median ± stddev over the items; n = items)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.report.sections import Section
from harness.report.table import MetricColumn, Table, case_metric_table
from harness.scenarios import quality
from harness.types import RunRecord

PREFIX = "quality."

COLUMNS: tuple[MetricColumn, ...] = (
    MetricColumn("perplexity", (quality.PERPLEXITY.name,), quality.PERPLEXITY.description),
    MetricColumn(
        "reference perplexity",
        (quality.REFERENCE_PERPLEXITY.name,),
        quality.REFERENCE_PERPLEXITY.description,
    ),
    MetricColumn("agreement", (quality.AGREEMENT.name,), quality.AGREEMENT.description),
    MetricColumn("KL (nats)", (quality.KL.name,), quality.KL.description),
)


@dataclass(frozen=True)
class Quality:
    table: Table
    references: tuple[str, ...]  # "model: reference" per case that named one


def build(run: RunRecord) -> Quality | None:
    table = case_metric_table(run.results, COLUMNS)
    if not table:
        return None
    references = tuple(
        f"{r.model}: {r.artifacts['reference']} ({r.artifacts.get('items', '?')} items of "
        f"{r.artifacts.get('text', '?')})"
        for r in run.results
        if r.scenario == quality.SCENARIO.name and isinstance(r.artifacts.get("reference"), str)
    )
    return Quality(table, references)


SECTION = Section("quality", "Quality", build, claims=(PREFIX,))
