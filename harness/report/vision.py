"""Vision section: per VLM case, image preprocessing, time to first token (vision encoder and
prefill), decode speed and the image tokens, beside the same model's text-only ``throughput``;
then the image cases that did not pass, with their reasons."""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.types import RunRecord, Status
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, MetricColumn, Table, case_metric_table
from harness.scenarios import throughput as text
from harness.scenarios import vision_throughput as vt

PREFIX = "vision_throughput."
SCENARIO = "vision_throughput"

COLUMNS: tuple[MetricColumn, ...] = (
    MetricColumn("images", (vt.IMAGE_TOKENS.name,), vt.IMAGE_TOKENS.description),
    MetricColumn(
        "prompt", (vt.PROMPT_TOKENS.name,), "prompt tokens (text only: the throughput prompt)"
    ),
    MetricColumn("preprocess", (vt.PREPROCESS.name,), vt.PREPROCESS.description),
    MetricColumn(
        "TTFT", (vt.TTFT.name, text.TTFT.name), "vision encoder + prefill (text: prefill)"
    ),
    MetricColumn(
        "decode", (vt.DECODE.name, text.DECODE.name), "generated tokens/s after the first"
    ),
)


@dataclass(frozen=True)
class Vision:
    table: Table
    not_passed: Table


def build(run: RunRecord) -> Vision | None:
    vision = [r for r in run.results if r.scenario == SCENARIO]
    if not vision:
        return None
    models = {r.model for r in vision}
    text_rows = [r for r in run.results if r.scenario == text.SCENARIO.name and r.model in models]
    ordered = sorted(
        [r for r in (*text_rows, *vision) if r.status is Status.PASSED],
        key=lambda r: (r.model, r.scenario == SCENARIO, r.case_id),
    )
    table = case_metric_table(ordered, COLUMNS, sample_count=True)
    failed = tuple(
        (
            Cell(r.model),
            Cell(r.case_id.rsplit("::", 1)[1]),
            Cell(r.status.value, css=f"st-{r.status.value}"),
            Cell(r.reason or "—"),
        )
        for r in vision
        if r.status is not Status.PASSED
    )
    not_passed = Table((Column("model"), Column("case"), Column("status"), Column("why")), failed)
    return Vision(table, not_passed)


SECTION = Section("vision", "Vision", build, claims=(PREFIX,), order=METRICS + 200)
