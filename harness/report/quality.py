"""Quality next to speed: perplexity per text item, and agreement and KL divergence against
the reference model a case names (median ± stddev over the items; n = items)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.core.types import RunRecord, Unit
from harness.report.formatting import Scale, finite
from harness.report.sections import METRICS, Section
from harness.report.table import MetricColumn, Table, case_metric_table
from harness.scenarios import quality

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


def significant_scale(unit: Unit, values: Sequence[float | None]) -> Scale:
    """Plain numbers with two significant decimals for small values (a KL of 2.5e-6 nats
    shows as 0.0000025, not 0.00); the unit is in the column label."""
    largest = max((abs(v) for v in finite(values)), default=0.0)
    if largest == 0 or largest >= 0.1:
        return Scale(1.0, 2, "")
    return Scale(1.0, min(9, 1 - math.floor(math.log10(largest))), "")


@dataclass(frozen=True)
class Quality:
    table: Table
    references: tuple[str, ...]  # "model: reference" per case that named one


def build(run: RunRecord) -> Quality | None:
    table = case_metric_table(run.results, COLUMNS, scale_for=significant_scale)
    if not table:
        return None
    found = [
        (r, quality.QualityArtifacts.of(r))
        for r in run.results
        if r.scenario == quality.SCENARIO.name
    ]
    references = tuple(
        f"{r.model}: {a.reference} ({'?' if a.items is None else a.items} items of {a.text or '?'})"
        for r, a in found
        if a.reference is not None
    )
    return Quality(table, references)


SECTION = Section("quality", "Quality", build, claims=(PREFIX,), order=METRICS + 110)
